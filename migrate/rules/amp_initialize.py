"""APX2xx: ``amp.initialize`` (and the old ``amp.init``) -> an on/off switch and one
``GradScaler``; the scaler threaded to every function that needs it; autocast placed around
the forward pass that feeds each ``scale_loss``.

This rule runs first among the apex.amp rules and decides for the whole file: when any
apex.amp site cannot be proven rewritable (see ``_amp_sites``), nothing of apex.amp is
rewritten, every reason is reported, and the imports rule points the file at
``apexcompat.amp`` so that it keeps training exactly as before."""

from __future__ import annotations

import re
from typing import Dict, List, Optional

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
    elements,
    enclosing,
    string_value,
    walk,
)
from ._edits import expression, move_leading, statement, todo_line, with_leading
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


def _param(call: cst.Call, name: str, table: Dict[str, int]) -> Optional[cst.BaseExpression]:
    return arg_value(call, table[name], name)


def _paren(code: str, node: cst.BaseExpression) -> str:
    if isinstance(node, (cst.BooleanOperation, cst.IfExp, cst.Lambda, cst.NamedExpr)) and not node.lpar:
        return f"({code})"
    return code


def _flat_texts(node: cst.BaseExpression) -> List[str]:
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


class InitializeRule(AmpRule):
    """amp.initialize -> switch + GradScaler, scaler threading, autocast placement."""

    CODES = {
        "APX201": "amp.initialize rewritten: the models and optimizers are used as they are, a GradScaler replaces apex's loss scaler",
        "APX202": "O2/O3: fp16 model weights and fp32 master weights become fp32 weights under float16 autocast",
        "APX203": "an initialize option with no native counterpart was dropped",
        "APX204": "static loss_scale: GradScaler starts there and never grows, but still skips steps with inf/nan grads",
        "APX205": "loss_scale is chosen at run time: set init_scale/growth_interval by hand if it is a number",
        "APX206": "inference-only initialize (no optimizers): the model is cast or autocast must be added by hand",
        "APX207": "the scaler is passed to a same-file function as a new parameter",
        "APX208": "amp._amp_state loss-scaler settings became GradScaler arguments",
        "APX209": "the forward pass was wrapped in torch.autocast",
        "APX210": "autocast could not be placed: wrap the forward pass and loss by hand",
        "APX211": "old API amp.init(): its handle's scale_loss goes through the GradScaler",
        "APX220": "apex.amp cannot be migrated natively here; the file keeps working through apexcompat.amp",
    }
    TRIGGERS = (b"amp",)

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
        for site in info.inits:
            self._rewrite_init(site, info)
        for func, calls in info.threaded.items():
            self._thread(func, calls, info)
        for site in info.scale_losses:
            self._place_autocast(site, info)
            if not isinstance(site.call.func, cst.Attribute) or code_of(site.call.func.value) in self._handles(info):
                self._retarget_old_api(site, info)

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

    def _switch_parts(self, site: InitSite) -> Optional[List[str]]:
        """The conditions that turn amp on (joined with ``and``); None when amp is off."""
        table = OLD_INIT_PARAMS if site.old_api else INIT_PARAMS
        parts = [_paren(code_of(g), g) for g in site.guards]
        enabled = _param(site.call, "enabled", table)
        if enabled is not None:
            text = code_of(enabled)
            if text == "False":
                return None
            if text != "True":
                parts.append(_paren(text, enabled))
        if not site.old_api:
            level = _param(site.call, "opt_level", table)
            literal = string_value(level)
            if level is None or literal in ("O1", "O2", "O3"):
                pass
            elif literal == "O0":
                return None
            else:
                cond = f'{_paren(code_of(level), level)} != "O0"'
                if cond not in parts:
                    parts.append(cond)
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
        elif len(parts) == 1 and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", parts[0]):
            switch = parts[0]
        else:
            switch = info.switch_name
            new.append(statement(f"{switch} = {' and '.join(parts)}\n"))
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
                self.report(need.node, "APX208", f"amp._amp_state loss-scaler setting became GradScaler({option}=...)", fixed=True, severity="info")
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
        new.append(with_leading(created, [todo_line(t) for t in self.scaler_todos]))
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

        def after_if(upd: cst.BaseStatement) -> List[cst.BaseStatement]:
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
                text = code_of(loss_scale) if _literal_number(loss_scale) is not None and not isinstance(loss_scale, cst.SimpleString) else repr(number)
                kwargs += [f"init_scale={text}", f"growth_interval={NO_GROWTH}"]
                message = (
                    f"static loss_scale={code_of(loss_scale)}: the GradScaler keeps this scale, but unlike apex it skips "
                    "a step whose grads hold inf/nan and halves the scale; check that this is acceptable"
                )
                self.report(loss_scale, "APX204", message, severity="warning", fixed=True)
                self.scaler_todos.append(message)
        if site.old_api:
            return kwargs
        if level in ("O2", "O3"):
            self.report(
                level_node, "APX202",
                f"{level}: the model stays fp32 (no fp16 weights, no master weights); float16 autocast gives the mixed precision",
                fixed=True, severity="warning",
            )
        elif level is None:
            self.report(
                level_node, "APX202",
                f"opt level {code_of(level_node)} is chosen at run time: O1, O2 and O3 all become float16 autocast with fp32 weights, O0 turns amp off",
                fixed=True, severity="warning",
            )
        for name in ("cast_model_type", "patch_torch_functions", "keep_batchnorm_fp32", "master_weights", "cast_model_outputs", "min_loss_scale", "max_loss_scale"):
            value = _param(call, name, table)
            if value is not None:
                why = {
                    "min_loss_scale": "GradScaler has no floor for the scale",
                    "max_loss_scale": "GradScaler has no ceiling for the scale",
                }.get(name, "weights stay fp32 under autocast")
                self.report(value, "APX203", f"{name}={code_of(value)} dropped: {why}", fixed=True, severity="warning")
        num_losses = _param(call, "num_losses", table)
        if num_losses is not None:
            self.report(num_losses, "APX203", "num_losses dropped: one GradScaler serves every loss", fixed=True, severity="info")
        return kwargs

    def _inference(self, site: InitSite, level: Optional[str], new: List[cst.BaseStatement]) -> None:
        """No optimizers: O3 -> ``model.half()``; O1/O2 -> autocast by hand; O0 -> nothing."""
        models = site.models
        holder = site.stmt.body[0]
        if level == "O3":
            if isinstance(holder, cst.Assign) and not new:
                new = [statement(f"{code_of(m)}.half()\n") for m in models]
            elif isinstance(holder, cst.Assign):
                new = [statement(f"{code_of(holder.targets[0].target)} = {code_of(arg_value(site.call, 0, 'models'))}.half()\n")] if len(models) == 1 else new + [statement(f"{code_of(m)}.half()\n") for m in models]
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
                'inference without optimizers: wrap the forward pass in `with torch.autocast("cuda", dtype=torch.float16):` for mixed precision',
                severity="warning",
                fixed=True,
            )
        self._place(site, new)

    # --- threading ---------------------------------------------------------------------------

    def _thread(self, func: cst.FunctionDef, calls: List[cst.Call], info: AmpFile) -> None:
        name = info.scaler_name
        params = func.params
        plain = not params.star_arg or isinstance(params.star_arg, cst.MaybeSentinel)
        simple = plain and not params.kwonly_params and not params.star_kwarg and all(p.default is None for p in params.params)

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
            by_position = simple and positional_only and len(call.args) == len(params.params)
            arg = cst.Arg(expression(access)) if by_position else cst.Arg(expression(access), keyword=cst.Name(name), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
            self.replace_node(call, lambda upd, arg=arg: upd.with_changes(args=self._append_arg(list(upd.args), arg)))
        self.report(func, "APX207", f"{func.name.value}() takes the GradScaler as a new parameter `{name}`; every call in this file passes it", fixed=True, severity="info")

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
                target = holder.targets[0].target
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
                if text in models or last in models or any(text.startswith(m + ".") for m in models):
                    return True
                if _MODEL_CALL.search(last) and last not in ("parameters", "named_parameters"):
                    return True
            if isinstance(sub, (cst.FunctionDef, cst.Lambda)):
                return False
        return False

    @staticmethod
    def _is_barrier(stmt: cst.BaseStatement) -> bool:
        if not isinstance(stmt, cst.SimpleStatementLine):
            return True
        for sub in walk(stmt):
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value in _BARRIER_CALLS:
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
        block = self.parents.get(site.with_stmt)
        if self._inside_autocast(site.with_stmt):
            return
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        index = body.index(site.with_stmt) if site.with_stmt in body else -1
        loss_texts = {code_of(n) for n in walk(site.loss) if isinstance(n, (cst.Name, cst.Attribute))}
        end = None
        for j in range(index - 1, -1, -1):
            stmt = body[j]
            if isinstance(stmt, cst.SimpleStatementLine) and assigned_names(stmt) & loss_texts:
                end = j
                break
            if self._is_barrier(stmt):
                break
        models = self._model_texts(info)
        start = None
        if end is not None:
            for j in range(end, -1, -1):
                stmt = body[j]
                if j != end and self._is_barrier(stmt):
                    break
                if self._is_model_call(stmt, models):
                    start = j
        if end is None or start is None:
            self.todo(
                site.with_stmt,
                "APX210",
                'the forward pass and loss are not next to this amp.scale_loss: wrap them in `with torch.autocast("cuda", dtype=torch.float16):` by hand',
                severity="warning",
                fixed=True,
            )
            return
        enabled = self._autocast_switch(site, info)
        members = body[start : end + 1]
        head = f'with torch.autocast("cuda", dtype=torch.float16{", enabled=" + enabled if enabled else ""}):\n    pass\n'

        def build(ups: List[cst.BaseStatement], head=head) -> List[cst.BaseStatement]:
            with_node = statement(head)
            inner = [ups[0].with_changes(leading_lines=[])] + ups[1:]
            with_node = with_node.with_changes(body=with_node.body.with_changes(body=inner), leading_lines=ups[0].leading_lines)
            return [with_node]

        if any(self.edits.planned(m) or m in self.edits.groups for m in members):
            return
        self.edits.wrap(members, build)
        self.need_torch()
        self.report(members[0], "APX209", "forward pass and loss wrapped in torch.autocast (apex never marked them)", fixed=True, severity="info")

    def _autocast_switch(self, site: ScaleLossSite, info: AmpFile) -> Optional[str]:
        init = info.training_inits[0]
        switch = self.switches.get(init)
        if switch is None:
            return None
        if site.func is init.func and info.storage == "local":
            return switch
        if switch == "False":
            return "False"
        access = info.access.get(site.func, info.scaler_name)
        if site.func is init.func:
            return switch
        return f"{access}.is_enabled()"


EXAMPLES: List[Example] = []
NOOP_EXAMPLES: List[Example] = []
