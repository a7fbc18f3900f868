"""APX2xx: ``amp.initialize`` (and the old ``amp.init``) -> an on/off switch and one
``GradScaler``; the scaler threaded to every function that needs it; autocast placed around
the forward pass that feeds each ``scale_loss``.

This rule runs first among the apex.amp rules and decides for the whole file: when any
apex.amp site cannot be proven rewritable (see ``_amp_sites``), nothing of apex.amp is
rewritten, every reason is reported, and the imports rule points the file at
``apexcompat.amp`` so that it keeps training exactly as before."""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ._amp_rule import AmpRule, is_empty_shell
from ._amp_sites import (
    AMP_STATE_SETTINGS,
    AmpFile,
    InitSite,
    ScaleLossSite,
    arg_value,
    assigned_names,
    analyse,
    code_of,
    enclosing,
    class_of_method,
    init_method,
    is_nested_in,
    self_name,
    string_value,
    walk,
)
from ._edits import expression, move_leading, statement, suite_statements, todo_lines, with_leading
from ..settings import Settings
from .base import Example

OPT_LEVELS = ("O0", "O1", "O2", "O3")
# positions of initialize's parameters (apex signature)
INIT_PARAMS = {
    "enabled": 2,
    "opt_level": 3,
    "cast_model_type": 4,
    "patch_torch_functions": 5,
    "keep_batchnorm_fp32": 6,
    "master_weights": 7,
    "loss_scale": 8,
    "cast_model_outputs": 9,
    "num_losses": 10,
    "verbosity": 11,
    "min_loss_scale": 12,
    "max_loss_scale": 13,
}
OLD_INIT_PARAMS = {"enabled": 0, "loss_scale": 1, "enable_caching": 2, "verbose": 3, "allow_banned": 4}
NO_GROWTH = "10**9"
_MODEL_CALL = re.compile(r"(model|net|encoder|decoder|generator|discriminator)", re.IGNORECASE)
_BARRIER_CALLS = ("step", "backward")
#: nn.Module methods that are not the forward pass
_NOT_FORWARD = frozenset(
    "train eval zero_grad to cuda cpu half float double bfloat16 parameters named_parameters buffers "
    "named_buffers children modules named_modules state_dict load_state_dict apply requires_grad_ "
    "register_forward_hook register_forward_pre_hook register_backward_hook register_buffer".split()
)


def _param(call: cst.Call, name: str, table: Dict[str, int]) -> Optional[cst.BaseExpression]:
    return arg_value(call, table[name], name)


def _paren(code: str, node: cst.BaseExpression) -> str:
    if isinstance(node, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not node.lpar:
        return f"({code})"
    return code


def _flat_texts(node: Any) -> List[str]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [t for e in node.elements for t in _flat_texts(e.value)]
    return [code_of(node).strip()]


def _literal_number(node: Optional[cst.BaseExpression]) -> Optional[float]:
    if isinstance(node, (cst.Integer, cst.Float)):
        return float(node.evaluated_value)
    text = string_value(node)
    if text is not None:
        try:
            return float(text)
        except ValueError:
            return None
    return None


def _paren_if_bool_op(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, cst.BooleanOperation) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def fold(expr: Any, consts: Dict[Any, bool]) -> Tuple[Optional[bool], Any]:
    """Fold the availability checks in ``expr``: returns ``(True/False, None)`` when the whole
    expression becomes a constant, else ``(None, simplified expression)``."""
    if expr in consts:
        return consts[expr], None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        value, node = fold(expr.expression, consts)
        if value is not None:
            return (not value), None
        return None, expr if node is expr.expression else expr.with_changes(expression=_paren_if_bool_op(node))
    if isinstance(expr, cst.BooleanOperation):
        lv, ln = fold(expr.left, consts)
        rv, rn = fold(expr.right, consts)
        pure = lambda n: isinstance(n, (cst.Name, cst.Attribute, cst.Comparison))  # noqa: E731
        if isinstance(expr.operator, cst.And):
            if lv is False or (rv is False and pure(ln)):
                return False, None
            if lv is True:
                return rv, rn
            if rv is True:
                return None, ln
        else:
            if lv is True or (rv is True and pure(ln)):
                return True, None
            if lv is False:
                return rv, rn
            if rv is False:
                return None, ln
        if ln is expr.left and rn is expr.right:
            return None, expr
        left = ln if ln is not None else cst.Name(str(lv))
        right = rn if rn is not None else cst.Name(str(rv))
        return None, expr.with_changes(
            left=_paren_if_bool_op(left) if left is not expr.left else left,
            right=_paren_if_bool_op(right) if right is not expr.right else right,
        )
    return None, expr


def _prune_empty_elifs(node: Any) -> Any:
    """``if a: x  elif b: pass`` (the initialize that was there is gone) -> ``if a: x``."""
    orelse = node.orelse
    if isinstance(orelse, cst.If):
        orelse = _prune_empty_elifs(orelse)
        if is_empty_shell(orelse):
            orelse = None
        return node.with_changes(orelse=orelse)
    return node


class InitializeRule(AmpRule):
    """amp.initialize -> switch + GradScaler, scaler threading, autocast placement."""

    CODES = {
        "APX201": (
            "amp.initialize rewritten: the models and optimizers are used as they are, "
            "a GradScaler replaces apex's loss scaler"
        ),
        "APX202": "O2/O3: fp16 model weights and fp32 master weights become fp32 weights under float16 autocast",
        "APX203": "an initialize option with no native counterpart was dropped",
        "APX204": "static loss_scale: GradScaler starts there, never grows, but still skips steps with inf/nan grads",
        "APX205": "loss_scale is chosen at run time: set init_scale/growth_interval by hand if it is a number",
        "APX206": "inference-only initialize (no optimizers): the model is cast or autocast must be added by hand",
        "APX207": "the scaler is passed to a same-file function as a new parameter",
        "APX208": "amp._amp_state loss-scaler settings became GradScaler arguments",
        "APX209": "the forward pass was wrapped in torch.autocast",
        "APX210": "autocast could not be placed: wrap the forward pass and loss by hand",
        "APX211": "old API amp.init(): its handle's scale_loss goes through the GradScaler",
        "APX212": "an apex availability check (amp is None, not amp) became a constant and was simplified",
        "APX220": "apex.amp cannot be migrated natively here; the file keeps working through apexcompat.amp",
    }
    TRIGGERS = (b"apex",)
    LIVE_TRIGGERS = ("apex",)

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if not info.uses_amp:
            return
        if info.blockers:
            for blocker in info.blockers:
                self.todo(
                    blocker.node,
                    "APX220",
                    f"{blocker.message}; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand",
                )
            return
        self.info = info
        self.switches: Dict[InitSite, Optional[str]] = {}
        self._fold_checks(info)
        for site in info.inits:
            self._rewrite_init(site, info)
        for func, calls in info.threaded.items():
            self._thread(func, calls, info)
        for cls, calls in info.class_threaded.items():
            self._thread_class(cls, calls, info)
        for scaled in info.scale_losses:
            self._place_autocast(scaled, info)
            callee = scaled.call.func
            if isinstance(callee, cst.Attribute) and code_of(callee.value) in self._handles(info):
                self._retarget_old_api(scaled, info)

    def _handles(self, info: AmpFile) -> set:
        return {s.handle for s in info.inits if s.handle}

    def _retarget_old_api(self, site: ScaleLossSite, info: AmpFile) -> None:
        """``handle.scale_loss(...)`` -> ``amp.scale_loss(...)`` (same alias as ``amp.init``),
        so the scale_loss and step rules treat it like any other site."""
        init = next(s for s in info.inits if s.old_api)
        amp_expr = code_of(init.call.func.value) if isinstance(init.call.func, cst.Attribute) else None
        if amp_expr is None:
            return
        self.replace_node(site.call.func, expression(f"{amp_expr}.scale_loss"))

    # --- initialize -------------------------------------------------------------------------

    def _switch_parts(self, site: InitSite) -> Optional[List[Tuple[str, bool]]]:
        """The conditions that turn amp on, as ``(text, needs parentheses in an and)``;
        None when amp is off."""
        table = OLD_INIT_PARAMS if site.old_api else INIT_PARAMS
        parts: List[Tuple[str, bool]] = []
        for guard in site.guards:
            value, node = fold(guard, self.info.checks)
            if value is False:
                return None
            if value is None:
                parts.append((code_of(node), _paren(code_of(node), node) != code_of(node)))
        enabled = _param(site.call, "enabled", table)
        if enabled is not None:
            text = code_of(enabled)
            if text == "False":
                return None
            if text != "True":
                parts.append((text, _paren(text, enabled) != text))
        if not site.old_api:
            level = _param(site.call, "opt_level", table)
            literal = string_value(level)
            if level is None or literal in ("O1", "O2", "O3"):
                pass
            elif literal == "O0":
                return None
            else:
                cond = f'{_paren(code_of(level), level)} != "O0"'
                if all(cond != text for text, _ in parts):
                    parts.append((cond, False))
        return parts

    def _rewrite_init(self, site: InitSite, info: AmpFile) -> None:
        call = site.call
        table = OLD_INIT_PARAMS if site.old_api else INIT_PARAMS
        level_node = None if site.old_api else _param(call, "opt_level", table)
        level = "O1" if level_node is None else string_value(level_node)
        parts = self._switch_parts(site)

        new: List[cst.BaseStatement] = []
        if not site.old_api:
            kept = self._kept_assignment(site)
            if kept is not None:
                new.append(kept)
        if not site.has_optimizers and not site.old_api:
            self._inference(site, level, new)
            return

        switch: Optional[str]
        if parts is None:
            switch = "False"
        elif not parts:
            switch = None
        elif len(parts) == 1 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", parts[0][0]):
            switch = parts[0][0]
        else:
            switch = info.switch_name
            if len(parts) == 1:
                joined = parts[0][0]
            else:
                joined = " and ".join(f"({text})" if paren else text for text, paren in parts)
            new.append(statement(f"{switch} = {joined}\n"))
        self.switches[site] = switch

        self.scaler_todos: List[str] = []
        kwargs = self._scaler_options(site, table, level, level_node)
        if switch is not None:
            kwargs.append(f"enabled={switch}")
        for need in info.needs:
            if need.kind == "scaler_setting" and need.func is site.func:
                assign = need.node.body[0]
                option = AMP_STATE_SETTINGS[assign.targets[0].target.attr.value]
                kwargs = [k for k in kwargs if not k.startswith(option + "=")]
                kwargs.insert(len(kwargs) - (switch is not None), f"{option}={code_of(assign.value)}")
                self.edits.replace(need.node, [])
                self.report(
                    need.node,
                    "APX208",
                    f"amp._amp_state loss-scaler setting became GradScaler({option}=...)",
                    fixed=True,
                    severity="info",
                )
        if self.settings.torch_at_least(2, 3):
            ctor = "torch.amp.GradScaler"
            kwargs.insert(0, '"cuda"')
        else:
            ctor = "torch.cuda.amp.GradScaler"
        home = site.func
        target = info.scaler_name
        if info.storage == "self" and home is not None:
            target = f"{home.params.params[0].name.value}.{info.scaler_name}"
        created = statement(f"{target} = {ctor}({', '.join(kwargs)})\n")
        new.append(with_leading(created, [line for t in self.scaler_todos for line in todo_lines(t)]))
        self.need_torch()
        what = "amp.init()" if site.old_api else "amp.initialize"
        self.report(
            call,
            "APX211" if site.old_api else "APX201",
            f"{what} rewritten: {target} = {ctor}(...) and torch.autocast around the forward pass",
            fixed=True,
            severity="info",
        )
        self._place(site, new)

    def _place(self, site: InitSite, new: List[cst.BaseStatement]) -> None:
        """Put ``new`` where the initialize statement was; when it sat in an ``if``, the
        scaler goes after that ``if`` so it exists on both paths."""
        if site.anchor is site.stmt:
            if new:
                self.edits.replace(site.stmt, lambda upd: [move_leading(upd, new[0])] + new[1:])
            else:
                self.edits.replace(site.stmt, [])
            return
        kept = [s for s in new if self._is_kept_assignment(s)]
        created = [s for s in new if not self._is_kept_assignment(s)]
        self.edits.replace(site.stmt, kept)

        def after_if(upd: Any) -> List[cst.BaseStatement]:
            upd = _prune_empty_elifs(upd)
            if is_empty_shell(upd):
                return [move_leading(upd, created[0])] + created[1:] if created else []
            return [upd] + created

        self.edits.replace(site.anchor, after_if)

    _kept: set

    def _is_kept_assignment(self, stmt: cst.BaseStatement) -> bool:
        return stmt in getattr(self, "_kept", set())

    def _kept_assignment(self, site: InitSite) -> Optional[cst.BaseStatement]:
        """``a, b = amp.initialize(m, o)`` -> ``a, b = m, o`` unless that is a no-op."""
        holder = site.stmt.body[0]
        if not isinstance(holder, cst.Assign):
            return None
        target = holder.targets[0].target
        models = arg_value(site.call, 0, "models")
        opts = arg_value(site.call, 1, "optimizers") if site.has_optimizers else None
        value_parts = [models] + ([opts] if opts is not None else [])
        if isinstance(target, cst.Name) and target.value == "_":
            return None
        target_texts = _flat_texts(target)
        value_texts = [t for v in value_parts for t in _flat_texts(v)]
        if target_texts == value_texts:
            return None
        value = ", ".join(code_of(v) for v in value_parts)
        stmt = statement(f"{code_of(target)} = {value}\n")
        self._kept = getattr(self, "_kept", set()) | {stmt}
        return stmt

    def _scaler_options(self, site: InitSite, table, level, level_node) -> List[str]:
        call = site.call
        kwargs: List[str] = []
        loss_scale = _param(call, "loss_scale", table)
        if loss_scale is not None and string_value(loss_scale) != "dynamic":
            number = _literal_number(loss_scale)
            if number is None:
                message = (
                    f"loss_scale={code_of(loss_scale)} is chosen at run time; the GradScaler is dynamic. "
                    f"If it is a number, pass init_scale=<it>, growth_interval={NO_GROWTH} to the GradScaler"
                )
                self.report(loss_scale, "APX205", message)
                self.scaler_todos.append(message)
            else:
                text = (
                    code_of(loss_scale)
                    if _literal_number(loss_scale) is not None and not isinstance(loss_scale, cst.SimpleString)
                    else repr(number)
                )
                kwargs += [f"init_scale={text}", f"growth_interval={NO_GROWTH}"]
                message = (
                    f"static loss_scale={code_of(loss_scale)}: the GradScaler keeps this scale, "
                    "but unlike apex it skips "
                    "a step whose grads hold inf/nan and halves the scale; check that this is acceptable"
                )
                self.report(loss_scale, "APX204", message, severity="warning", fixed=True)
                self.scaler_todos.append(message)
        if site.old_api:
            return kwargs
        if level in ("O2", "O3"):
            self.report(
                level_node,
                "APX202",
                f"{level}: the model stays fp32 (no fp16 weights, no master weights); "
                "float16 autocast gives the mixed precision",
                fixed=True,
                severity="warning",
            )
        elif level is None:
            self.report(
                level_node,
                "APX202",
                f"opt level {code_of(level_node)} is chosen at run time: O1, O2 and O3 all become "
                "float16 autocast with fp32 weights, O0 turns amp off",
                fixed=True,
                severity="warning",
            )
        for name in (
            "cast_model_type",
            "patch_torch_functions",
            "keep_batchnorm_fp32",
            "master_weights",
            "cast_model_outputs",
            "min_loss_scale",
            "max_loss_scale",
        ):
            value = _param(call, name, table)
            if value is not None:
                why = {
                    "min_loss_scale": "GradScaler has no floor for the scale",
                    "max_loss_scale": "GradScaler has no ceiling for the scale",
                }.get(name, "weights stay fp32 under autocast")
                self.report(value, "APX203", f"{name}={code_of(value)} dropped: {why}", fixed=True, severity="warning")
        num_losses = _param(call, "num_losses", table)
        if num_losses is not None:
            self.report(
                num_losses,
                "APX203",
                "num_losses dropped: one GradScaler serves every loss",
                fixed=True,
                severity="info",
            )
        verbosity = _param(call, "verbosity", table)
        if verbosity is not None:
            self.report(
                verbosity,
                "APX203",
                "verbosity dropped: native AMP prints neither the option listing nor the overflow lines",
                fixed=True,
                severity="info",
            )
        return kwargs

    def _inference(self, site: InitSite, level: Optional[str], new: List[cst.BaseStatement]) -> None:
        """No optimizers: O3 -> ``model.half()``; O1/O2 -> autocast by hand; O0 -> nothing."""
        models = site.models
        holder = site.stmt.body[0]
        if level == "O3":
            if isinstance(holder, cst.Assign) and not new:
                new = [statement(f"{code_of(m)}.half()\n") for m in models]
            elif isinstance(holder, cst.Assign):
                new = (
                    [
                        statement(
                            f"{code_of(holder.targets[0].target)} = "
                            f"{code_of(arg_value(site.call, 0, 'models'))}.half()\n"
                        )
                    ]
                    if len(models) == 1
                    else new + [statement(f"{code_of(m)}.half()\n") for m in models]
                )
            else:
                new = [statement(f"{code_of(m)}.half()\n") for m in models]
            self.todo(
                site.call,
                "APX206",
                "O3 inference: the model is now float16; apex also cast its floating inputs to float16 and its outputs "
                "back to float32 - cast the inputs with .half() and the outputs with .float() where they are used",
                severity="warning",
                fixed=True,
            )
        elif level != "O0":
            self.todo(
                site.call,
                "APX206",
                "inference without optimizers: wrap the forward pass in "
                '`with torch.autocast("cuda", dtype=torch.float16):` for mixed precision',
                severity="warning",
                fixed=True,
            )
        self._place(site, new)

    # --- availability checks -----------------------------------------------------------------

    def _fold_checks(self, info: AmpFile) -> None:
        """``if amp is None: raise ...`` goes, ``assert amp is not None`` goes,
        ``args.fp16 and amp is not None`` becomes ``args.fp16``."""
        anchors = {s.anchor for s in info.inits}
        done = set()
        for check in info.checks:
            top = check
            while isinstance(self.parents.get(top), (cst.BooleanOperation, cst.UnaryOperation)):
                top = self.parents[top]
            if top in done:
                continue
            done.add(top)
            value, node = fold(top, info.checks)
            holder = self.parents.get(top)
            if (
                isinstance(holder, cst.If)
                and holder.test is top
                and holder not in anchors
                and not isinstance(self.parents.get(holder), cst.If)
                and value is not None
            ):
                if value:
                    self.edits.replace(holder, lambda upd: self._lift(upd, upd.body))
                elif holder.orelse is None:
                    self.edits.replace(holder, [])
                elif isinstance(holder.orelse, cst.Else):
                    self.edits.replace(holder, lambda upd: self._lift(upd, upd.orelse.body))
                else:
                    self.edits.replace(holder, lambda upd: [upd.orelse.with_changes(leading_lines=upd.leading_lines)])
            elif isinstance(holder, cst.Assert) and holder.test is top and value is True:
                stmt = self.statement_of(holder)
                if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
                    self.edits.replace(stmt, [])
                else:
                    self.replace_node(top, cst.Name("True"))
            else:
                self.replace_node(top, cst.Name(str(value)) if value is not None else node)
            self.report(
                top,
                "APX212",
                f"{code_of(top)}: apex.amp's availability check is "
                f"{value if value is not None else 'simplified'} now (native mixed precision is always there)",
                fixed=True,
                severity="info",
            )

    @staticmethod
    def _lift(upd: cst.BaseStatement, suite: cst.BaseSuite) -> List[cst.BaseStatement]:
        body = suite_statements(suite)
        return [move_leading(upd, body[0])] + body[1:] if body else []

    # --- threading ---------------------------------------------------------------------------

    def _thread_class(self, cls: cst.ClassDef, calls: List[cst.Call], info: AmpFile) -> None:
        """``class Trainer`` built where the scaler exists: ``__init__`` takes it and keeps it
        on ``self`` for the methods that scale losses."""
        init: Any = init_method(cls)
        self._thread(init, calls, info, skip=1, say=f"{cls.name.value}.__init__")
        me = self_name(init)
        keep = statement(f"{me}.{info.scaler_name} = {info.scaler_name}\n")
        body = list(init.body.body) if isinstance(init.body, cst.IndentedBlock) else []
        first = body[0] if body else None
        if (
            first is not None
            and isinstance(first, cst.SimpleStatementLine)
            and isinstance(first.body[0], cst.Expr)
            and isinstance(first.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        ):
            self.edits.insert_after(first, [keep])  # after the docstring
        elif first is not None:
            self.edits.insert_before(first, [keep])

    def _thread(
        self, func: cst.FunctionDef, calls: List[cst.Call], info: AmpFile, skip: int = 0, say: Optional[str] = None
    ) -> None:
        name = info.scaler_name
        params = func.params
        plain = not params.star_arg or isinstance(params.star_arg, cst.MaybeSentinel)
        simple = (
            plain
            and not params.kwonly_params
            and not params.star_kwarg
            and all(p.default is None for p in params.params)
        )

        def add_param(upd: cst.FunctionDef) -> cst.FunctionDef:
            p = upd.params
            if simple:
                new_params = list(p.params)
                if new_params and new_params[-1].comma is cst.MaybeSentinel.DEFAULT:
                    pass
                return upd.with_changes(params=p.with_changes(params=new_params + [cst.Param(cst.Name(name))]))
            kwonly = list(p.kwonly_params) + [cst.Param(cst.Name(name))]
            star = p.star_arg if not isinstance(p.star_arg, cst.MaybeSentinel) else cst.ParamStar()
            return upd.with_changes(params=p.with_changes(kwonly_params=kwonly, star_arg=star))

        self.replace_node(func, add_param)
        for call in calls:
            caller = enclosing(self.parents, call, cst.FunctionDef)
            access = info.access.get(caller, name)
            positional_only = all(a.keyword is None and not a.star for a in call.args)
            by_position = simple and positional_only and len(call.args) == len(params.params) - skip
            arg = (
                cst.Arg(expression(access))
                if by_position
                else cst.Arg(
                    expression(access),
                    keyword=cst.Name(name),
                    equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
                )
            )
            self.replace_node(call, lambda upd, arg=arg: upd.with_changes(args=self._append_arg(list(upd.args), arg)))
        self.report(
            func,
            "APX207",
            f"{say or func.name.value}() takes the GradScaler as a new parameter `{name}`; "
            "every call in this file passes it",
            fixed=True,
            severity="info",
        )

    @staticmethod
    def _append_arg(args: List[cst.Arg], arg: cst.Arg) -> List[cst.Arg]:
        if args:
            last = args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT:
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
                return args + [arg]
            return args + [arg.with_changes(comma=last.comma)] if False else args + [arg]
        return [arg]

    # --- autocast ----------------------------------------------------------------------------

    def _model_texts(self, info: AmpFile) -> set:
        texts = set()
        for site in info.inits:
            for m in site.models:
                texts.add(code_of(m))
            holder = site.stmt.body[0]
            if isinstance(holder, cst.Assign):
                target: Any = holder.targets[0].target
                if site.has_optimizers and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                    target = target.elements[0].value
                if not site.has_optimizers or target is not holder.targets[0].target:
                    texts.update(_flat_texts(target))
        return texts | {t.split(".")[-1] for t in texts}

    def _is_model_call(self, node: cst.CSTNode, models: set) -> bool:
        for sub in walk(node):
            if isinstance(sub, cst.Call) and isinstance(sub.func, (cst.Name, cst.Attribute)):
                text = code_of(sub.func)
                last = text.split(".")[-1]
                if last in _NOT_FORWARD:
                    continue
                if text in models or last in models or any(text.startswith(m + ".") for m in models):
                    return True
                if _MODEL_CALL.search(last):
                    return True
            if isinstance(sub, (cst.FunctionDef, cst.Lambda)):
                return False
        return False

    @staticmethod
    def _is_barrier(stmt: cst.BaseStatement) -> bool:
        """Statements the autocast region does not extend over: loops and other compound
        statements (a plain ``if`` is fine), steps, backwards, jumps."""
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.If)):
            return True
        for sub in walk(stmt):
            if isinstance(sub, (cst.For, cst.While, cst.With, cst.Try, cst.FunctionDef, cst.ClassDef)):
                return True
            if (
                isinstance(sub, cst.Call)
                and isinstance(sub.func, cst.Attribute)
                and sub.func.attr.value in _BARRIER_CALLS
            ):
                return True
            if isinstance(sub, (cst.Return, cst.Raise, cst.Continue, cst.Break, cst.Yield)):
                return True
        return False

    def _inside_autocast(self, node: cst.CSTNode) -> bool:
        cur = node
        while cur in self.parents:
            cur = self.parents[cur]
            if isinstance(cur, cst.With) and any(
                isinstance(i.item, cst.Call) and code_of(i.item.func).split(".")[-1] == "autocast" for i in cur.items
            ):
                return True
        return False

    def _place_autocast(self, site: ScaleLossSite, info: AmpFile) -> None:
        if self._inside_autocast(site.with_stmt):
            return
        loss_texts = {code_of(n) for n in walk(site.loss) if isinstance(n, (cst.Name, cst.Attribute))}
        spans: List[Tuple[Any, Any]] = [(self._forward_span(site.with_stmt, loss_texts, info), site.func)]
        if spans[0][0] is None:
            spans = self._spans_at_callers(site, info)
        switches = [self._switch_in(func, info) for _, func in spans]
        if not spans or any(span is None for span, _ in spans) or any(sw is False for sw in switches):
            self.todo(
                site.with_stmt,
                "APX210",
                "the forward pass and loss are not next to this amp.scale_loss: wrap them in "
                '`with torch.autocast("cuda", dtype=torch.float16):` by hand',
                severity="warning",
                fixed=True,
            )
            return
        for (members, _func), enabled in zip(spans, switches):
            switch = f", enabled={enabled}" if enabled else ""
            head = f'with torch.autocast("cuda", dtype=torch.float16{switch}):\n    pass\n'

            def build(ups: List[Any], head: str = head) -> List[Any]:
                with_node: Any = statement(head)
                inner = [ups[0].with_changes(leading_lines=[])] + ups[1:]
                return [
                    with_node.with_changes(
                        body=with_node.body.with_changes(body=inner), leading_lines=ups[0].leading_lines
                    )
                ]

            self.edits.wrap(members, build)
            self.report(
                members[0],
                "APX209",
                "forward pass and loss wrapped in torch.autocast (apex never marked them)",
                fixed=True,
                severity="info",
            )
        self.need_torch()

    def _forward_span(self, stmt: Any, loss_texts: set, info: AmpFile) -> Optional[List[Any]]:
        """The statements before ``stmt`` from the first model call through the one that
        computes the loss, in the same block; None when they are not there."""
        # `if fp16: with amp.scale_loss(...): ... else: loss.backward()`: look before the `if`
        anchor: cst.CSTNode = stmt
        while True:
            block = self.parents.get(anchor)
            owner = self.parents.get(block)
            if isinstance(owner, cst.Else):
                owner = self.parents.get(owner)
            if isinstance(owner, cst.If) and isinstance(block, cst.IndentedBlock) and len(block.body) <= 2:
                anchor = owner
                continue
            break
        if self._inside_autocast(anchor):
            return None
        block = self.parents.get(anchor)
        body: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        index = body.index(anchor) if anchor in body else -1
        end = None
        for j in range(index - 1, -1, -1):
            if not self._is_barrier(body[j]) and assigned_names(body[j]) & loss_texts:
                end = j
                break
            if self._is_barrier(body[j]):
                break
        if end is None:
            return None
        models = self._model_texts(info)
        start = None
        for j in range(end, -1, -1):
            if j != end and self._is_barrier(body[j]):
                break
            if self._is_model_call(body[j], models):
                start = j
        if start is None:
            return None
        members = body[start : end + 1]
        if any(self.edits.planned(m) or m in self.edits.groups for m in members):
            return None
        return members

    def _spans_at_callers(self, site: ScaleLossSite, info: AmpFile) -> List[Tuple[Any, Any]]:
        """``def backward(self, loss): with amp.scale_loss(loss, ...)`` called as
        ``self.backward(loss)`` right after the forward pass: wrap at each call."""
        func = site.func
        if func is None or not isinstance(site.loss, cst.Name):
            return []
        params = [p.name.value for p in func.params.params]
        if site.loss.value not in params:
            return []
        index = params.index(site.loss.value)
        cls = class_of_method(self.parents, func)
        calls: List[cst.Call] = []
        for node in walk(self.tree):
            if not isinstance(node, cst.Call):
                continue
            if cls is not None and isinstance(node.func, cst.Attribute) and node.func.attr.value == func.name.value:
                caller = enclosing(self.parents, node, cst.FunctionDef)
                if class_of_method(self.parents, caller) is cls and code_of(node.func.value) == self_name(caller):
                    calls.append(node)
            elif cls is None and isinstance(node.func, cst.Name) and node.func.value == func.name.value:
                calls.append(node)
        spans = []
        for call in calls:
            shift = 1 if cls is not None else 0
            args = [a for a in call.args if a.keyword is None and not a.star]
            passed = args[index - shift].value if 0 <= index - shift < len(args) else None
            stmt = self.statement_of(call)
            if passed is None or not isinstance(stmt, cst.SimpleStatementLine):
                return [(None, None)]
            texts = {code_of(n) for n in walk(passed) if isinstance(n, (cst.Name, cst.Attribute))}
            spans.append((self._forward_span(stmt, texts, info), enclosing(self.parents, call, cst.FunctionDef)))
        return spans

    def _switch_in(self, func: Optional[cst.FunctionDef], info: AmpFile):
        """The autocast ``enabled=`` text inside ``func`` (None: always on; False: the
        scaler cannot be reached there)."""
        init = info.training_inits[0]
        switch = self.switches.get(init)
        if switch is None:
            return None
        if func is init.func or switch == "False":
            return switch
        access = info.access.get(func)
        if access is None:
            cls = class_of_method(self.parents, func)
            if cls is not None and (
                cls in info.class_threaded
                or (info.storage == "self" and cls is class_of_method(self.parents, init.func))
            ):
                access = f"{self_name(func)}.{info.scaler_name}"
            elif init.func is None or (info.storage == "local" and is_nested_in(self.parents, func, init.func)):
                access = info.scaler_name
        if access is None:
            return False
        return f"{access}.is_enabled()"


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "opt-level-literal",
        before="""\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "flag-guard-and-opt-level-from-args",
        before="""\
import argparse

import torch
from apex import amp

parser = argparse.ArgumentParser()
parser.add_argument("--opt-level", default="O1")
parser.add_argument("--fp16", action="store_true")


def main():
    args = parser.parse_args()
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, keep_batchnorm_fp32=True)
    for x, y in loader:
        output = model(x)
        loss = criterion(output, y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--opt-level", default="O1")
parser.add_argument("--fp16", action="store_true")


def main():
    args = parser.parse_args()
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    use_amp = args.fp16 and args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            output = model(x)
            loss = criterion(output, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX203", "APX209", "APX301", "APX311"),
    ),
    Example(
        "enabled-argument",
        before="""\
from apex import amp


def fit(model, optimizer, data, use_fp16):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", enabled=use_fp16, loss_scale="dynamic")
    for x in data:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def fit(model, optimizer, data, use_fp16):
    scaler = torch.amp.GradScaler("cuda", enabled=use_fp16)
    for x in data:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_fp16):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "static-loss-scale-and-dropped-options",
        before="""\
from apex import amp


def fit(model, optimizer, batches):
    model, optimizer = amp.initialize(
        model, optimizer, opt_level="O1", loss_scale=128.0, max_loss_scale=2.0**16, num_losses=1, verbosity=0
    )
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches):
    # TODO(apexcompat): static loss_scale=128.0: the GradScaler keeps this scale, but unlike
    #   apex it skips a step whose grads hold inf/nan and halves the scale; check that this
    #   is acceptable
    scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=10**9)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX203", "APX203", "APX203", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        "o3-inference-model-half",
        before="""\
from apex import amp


def load_for_inference(model):
    model = amp.initialize(model, opt_level="O3")
    model.eval()
    return model
""",
        after="""\
def load_for_inference(model):
    # TODO(apexcompat): O3 inference: the model is now float16; apex also cast its floating
    #   inputs to float16 and its outputs back to float32 - cast the inputs with .half() and
    #   the outputs with .float() where they are used
    model.half()
    model.eval()
    return model
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        "old-handle-api",
        before="""\
from apex import amp


def fit(model, optimizer, batches, args):
    amp_handle = amp.init(enabled=args.fp16)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).sum()
        with amp_handle.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches, args):
    use_amp = args.fp16
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX209", "APX211", "APX301", "APX311"),
    ),
    Example(
        "scaler-passed-to-same-file-function",
        before="""\
import torch
from apex import amp


def train_epoch(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for epoch in range(args.epochs):
        train_epoch(model, optimizer, loader)
""",
        after="""\
import torch


def train_epoch(model, optimizer, loader, scaler):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    use_amp = args.fp16 and args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(args.epochs):
        train_epoch(model, optimizer, loader, scaler)
""",
        codes=("APX101", "APX201", "APX202", "APX207", "APX209", "APX301", "APX311"),
    ),
    Example(
        "class-trainer-keeps-scaler-on-self",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = model, optimizer
        use_amp = opt_level != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "trainer-class-built-after-initialize",
        before='''\
import torch
from apex import amp


class Trainer:
    """Runs the optimisation."""

    def __init__(self, model, optimizer, clip=1.0):
        self.model = model
        self.optimizer = optimizer
        self.clip = clip

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.clip)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def fit(self, batches):
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
            self.optimizer_step()


def main(args):
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    trainer = Trainer(model, optimizer)
    trainer.fit(loader)
''',
        after='''\
import torch


class Trainer:
    """Runs the optimisation."""

    def __init__(self, model, optimizer, clip=1.0, *, scaler):
        self.scaler = scaler
        self.model = model
        self.optimizer = optimizer
        self.clip = clip

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def optimizer_step(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), self.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def fit(self, batches):
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
            self.optimizer_step()


def main(args):
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    trainer = Trainer(model, optimizer, scaler=scaler)
    trainer.fit(loader)
''',
        codes=("APX101", "APX201", "APX202", "APX207", "APX209", "APX301", "APX311", "APX321"),
    ),
    Example(
        "transformers-style-fp16-flag",
        before="""\
import torch
from tqdm import tqdm


def train(args, train_dataloader, model, optimizer, scheduler):
    if args.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex from https://www.github.com/nvidia/apex to use fp16 training.")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)

    # multi-gpu training (should be after apex fp16 initialization)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    global_step = 0
    tr_loss = 0.0
    model.zero_grad()
    for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
        model.train()
        batch = tuple(t.to(args.device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
        outputs = model(**inputs)
        loss = outputs[0]  # model outputs are always tuple in transformers (see doc)

        if args.n_gpu > 1:
            loss = loss.mean()  # mean() to average on multi-gpu parallel training
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps

        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        tr_loss += loss.item()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            if args.fp16:
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)

            optimizer.step()
            scheduler.step()  # Update learning rate schedule
            model.zero_grad()
            global_step += 1
    return global_step, tr_loss / global_step
""",
        after="""\
import torch
from tqdm import tqdm


def train(args, train_dataloader, model, optimizer, scheduler):
    use_amp = args.fp16 and args.fp16_opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    # multi-gpu training (should be after apex fp16 initialization)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    global_step = 0
    tr_loss = 0.0
    model.zero_grad()
    for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
        model.train()
        batch = tuple(t.to(args.device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            outputs = model(**inputs)
            loss = outputs[0]  # model outputs are always tuple in transformers (see doc)

            if args.n_gpu > 1:
                loss = loss.mean()  # mean() to average on multi-gpu parallel training
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps

        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()

        tr_loss += loss.item()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)

            scaler.step(optimizer)
            scaler.update()
            scheduler.step()  # Update learning rate schedule
            model.zero_grad()
            global_step += 1
    return global_step, tr_loss / global_step
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX301", "APX311", "APX322"),
    ),
    Example(
        "elif-guard-and-a-variable-named-scaler",
        before="""\
from apex import amp
from sklearn.preprocessing import StandardScaler


def train(model, optimizer, batches, args):
    scaler = StandardScaler()
    if args.cpu:
        model = model.cpu()
    elif args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x in batches:
        x = scaler.transform(x)
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
from sklearn.preprocessing import StandardScaler
import torch


def train(model, optimizer, batches, args):
    scaler = StandardScaler()
    if args.cpu:
        model = model.cpu()
    use_amp = args.fp16
    grad_scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        x = scaler.transform(x)
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        grad_scaler.scale(loss).backward()
        grad_scaler.step(optimizer)
        grad_scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "functions-imported-from-apex-amp",
        before="""\
from apex.amp import initialize, scale_loss


def train(model, optimizer, batches):
    model, optimizer = initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "closure-sees-the-scaler",
        before="""\
from apex import amp


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def train_step(x):
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    for x in loader:
        train_step(x)
""",
        after="""\
import torch


def main(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")

    def train_step(x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

    for x in loader:
        train_step(x)
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "gan-two-optimizers-and-loss-id",
        before="""\
import torch
from apex import amp


def train(netD, netG, optD, optG, loader, args):
    [netD, netG], [optD, optG] = amp.initialize([netD, netG], [optD, optG], opt_level=args.opt_level, num_losses=2)
    for real in loader:
        noise = torch.randn(real.size(0), 16)
        # discriminator
        optD.zero_grad()
        fake = netG(noise)
        errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        with amp.scale_loss(errD, optD, loss_id=0) as errD_scaled:
            errD_scaled.backward()
        optD.step()
        # generator
        optG.zero_grad()
        errG = criterion(netD(fake), ones)
        with amp.scale_loss(errG, optG, loss_id=1) as errG_scaled:
            errG_scaled.backward()
        optG.step()
""",
        after="""\
import torch


def train(netD, netG, optD, optG, loader, args):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for real in loader:
        noise = torch.randn(real.size(0), 16)
        # discriminator
        optD.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            fake = netG(noise)
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        scaler.scale(errD).backward()
        scaler.step(optD)
        scaler.update()
        # generator
        optG.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            errG = criterion(netD(fake), ones)
        scaler.scale(errG).backward()
        scaler.step(optG)
        scaler.update()
""",
        codes=(
            "APX101",
            "APX201",
            "APX202",
            "APX203",
            "APX209",
            "APX209",
            "APX301",
            "APX301",
            "APX302",
            "APX302",
            "APX311",
            "APX311",
        ),
    ),
    Example(
        "target-torch-2.2-uses-cuda-gradscaler",
        before="""\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.cuda.amp.GradScaler()
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
        settings=Settings(target_torch=(2, 2)),
    ),
    Example(
        "amp-imported-inside-function",
        before="""\
def train(model, optimizer, batches, opt_level="O1"):
    from apex import amp

    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch

def train(model, optimizer, batches, opt_level="O1"):
    use_amp = opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "availability-check-folded",
        before="""\
try:
    from apex import amp
except ImportError:
    amp = None


def main(args, model, optimizer, loader):
    if args.fp16:
        if amp is None:
            raise ImportError("Please install apex to use --fp16.")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).sum()
        if args.fp16 and amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main(args, model, optimizer, loader):
    use_amp = args.fp16 and args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX212", "APX212", "APX301", "APX311"),
    ),
    Example(
        "fallback-amp-stored-on-object",
        before="""\
from apex import amp


class Engine:
    def __init__(self, model, optimizer):
        self.amp = amp
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
from apexcompat import amp


class Engine:
    def __init__(self, model, optimizer):
        # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed;
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        self.amp = amp
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled elsewhere;
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        codes=("APX102", "APX220", "APX220"),
    ),
    Example(
        "fallback-scale-loss-without-initialize",
        before="""\
from apex import amp


def train_step(model, optimizer, batch):
    loss = model(batch).mean()
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
from apexcompat import amp


def train_step(model, optimizer, batch):
    loss = model(batch).mean()
    optimizer.zero_grad()
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss; this file keeps apex.amp semantics through apexcompat.amp, migrate
    #   it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        "fallback-initialize-without-scale-loss",
        before="""\
from apex import amp

from .engine import run_training


def main(model, optimizer, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    run_training(model, optimizer)
""",
        after="""\
from apexcompat import amp

from .engine import run_training


def main(model, optimizer, args):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled elsewhere;
    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    run_training(model, optimizer)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        "loss-scale-from-a-variable",
        before="""\
from apex import amp


def train(model, optimizer, batches, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=args.loss_scale)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, args):
    # TODO(apexcompat): loss_scale=args.loss_scale is chosen at run time; the GradScaler is
    #   dynamic. If it is a number, pass init_scale=<it>, growth_interval=10**9 to the
    #   GradScaler
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX205", "APX209", "APX301", "APX311"),
    ),
    Example(
        "forward-pass-in-a-helper",
        before="""\
from apex import amp


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for batch in batches:
        loss = compute_loss(model, batch)
        with amp.scale_loss(loss, optimizer, delay_overflow_check=True) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for batch in batches:
        loss = compute_loss(model, batch)
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss: wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX303", "APX311"),
    ),
]

NOOP_EXAMPLES: List[Example] = [
    Example(
        "local-variable-named-amp",
        before="""\
from audio import Amplifier


def boost(signal, model):
    amp = Amplifier(gain=2.0)
    model = amp.initialize(model)
    with amp.scale_loss(signal) as louder:
        louder.play()
""",
        codes=(),
    ),
    Example(
        "self-amp-attribute",
        before="""\
class Mixer:
    def __init__(self, amp):
        self.amp = amp

    def run(self, loss, optimizer):
        with self.amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
""",
        codes=(),
    ),
    Example(
        "comments-and-strings-mention-apex",
        before="""\
# Mixed precision used to come from apex.amp (https://github.com/NVIDIA/apex);
# `from apex import amp` is no longer needed.
NOTE = "call amp.initialize(model, optimizer) before training"


def describe():
    return "apex.amp.scale_loss was used here"
""",
        codes=(),
    ),
    Example(
        "amp-from-another-package",
        before="""\
from mylib import amp


def setup(model, optimizer):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer
""",
        codes=(),
    ),
]

InitializeRule.EXAMPLES = EXAMPLES
InitializeRule.NOOP_EXAMPLES = NOOP_EXAMPLES
