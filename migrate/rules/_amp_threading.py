"""Scaler threading for the initialize rule: a function or class of the same file that needs
the GradScaler takes it as a new parameter, and every call in the file passes it (APX207)."""

from __future__ import annotations

from typing import Any, List, Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from ._amp_param import amp_parameters
from ._amp_partial import bound_offset
from ._amp_rule import AmpRule
from ._amp_sites import AmpFile, call_given, enclosing, init_method, self_name, takes_optional_scaler
from ._edits import code_of, expression, statement
from .checkpoints import HELPER, HELPER_NAME, HOLDER, HOLDER_NAME, add_helpers


class ScalerThreading(AmpRule):
    """Passes the GradScaler to the functions and classes that scale losses."""

    def _thread_class(self, cls: cst.ClassDef, calls: List[cst.Call], info: AmpFile, remote: bool = False) -> None:
        """``class Trainer`` built where the scaler exists: ``__init__`` takes it and keeps it
        on ``self`` for the methods that scale losses."""
        init: Any = init_method(cls)
        self._thread(init, calls, info, skip=1, say=f"{cls.name.value}.__init__", remote=remote)
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
        self,
        func: cst.FunctionDef,
        calls: List[cst.Call],
        info: AmpFile,
        skip: int = 0,
        say: Optional[str] = None,
        remote: bool = False,
    ) -> None:
        """``func`` takes the scaler as a new last parameter (keyword-only when its signature
        has defaults or stars) and ``calls`` pass it; ``remote``: the plan's entry, which the
        other files' calls pass by keyword."""
        name = info.scaler_name
        optional = remote and takes_optional_scaler(self.parents, func, info.plan)
        params = func.params
        plain = not params.star_arg or isinstance(params.star_arg, cst.MaybeSentinel)
        simple = (
            plain
            and not params.kwonly_params
            and not params.star_kwarg
            and all(p.default is None for p in params.params)
        )

        # an optional one (``scaler=None``) is used only where a caller gives it
        param = cst.Param(cst.Name(name))
        if optional:
            bare = cst.SimpleWhitespace("")
            param = param.with_changes(default=cst.Name("None"), equal=cst.AssignEqual(bare, bare))

        def add_param(upd: cst.FunctionDef) -> cst.FunctionDef:
            p = upd.params
            if simple:
                return upd.with_changes(params=p.with_changes(params=list(p.params) + [param]))
            kwonly = list(p.kwonly_params) + [param]
            star = p.star_arg if not isinstance(p.star_arg, cst.MaybeSentinel) else cst.ParamStar()
            return upd.with_changes(params=p.with_changes(kwonly_params=kwonly, star_arg=star))

        self.replace_node(func, add_param)
        disabled = [c for c in calls if c in info.disabled_calls]
        for call in calls:
            caller = enclosing(self.parents, call, cst.FunctionDef)
            access = info.access.get(caller, name)
            if info.call_loss_id(call) is not None:
                access = info.loss_scaler(access, info.call_loss_id(call))  # the GradScaler of its loss id
            if call in disabled:
                access = f'torch.amp.GradScaler("{self._disabled_device(info)}", enabled=False)'
                AddImportsVisitor.add_needed_import(self.context, "torch")
            positional_only = all(a.keyword is None and not a.star for a in call.args)
            given = len(call.args) + bound_offset(self, call)  # a partial's bound arguments come first
            by_position = simple and positional_only and given == len(params.params) - skip
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
        if remote:
            shown = say or func.name.value
            unreferenced = info.plan is not None and shown.split(".")[0] in info.plan.unreferenced
            if optional:
                how = (f"as a new parameter `{name}=None`, used only when given; the calls that have it pass it, "
                       "the scripts without one that run alone call it as before")
            else:
                how = f"as a new parameter `{name}`; " + (
                    "no file of the repository calls it: a call elsewhere must pass it" if unreferenced
                    else "every call passes it"
                )
            self.report(
                func,
                "APX213",
                f"{shown}() takes the GradScaler created in another file {how}",
                fixed=True,
                severity="warning" if unreferenced else "info",
            )
            return
        passed = "every call in this file passes it"
        if disabled:
            callers = sorted({f"{enclosing(self.parents, c, cst.FunctionDef).name.value}()" for c in disabled})
            passed = (
                f"the calls in {', '.join(callers)}, where no GradScaler exists and which provably reach none of "
                "its amp sites (a parameter test decides against them), pass a disabled one, the others pass it"
            )
        self.report(
            func,
            "APX207",
            f"{say or func.name.value}() takes the GradScaler as a new parameter `{name}`; {passed}",
            fixed=True,
            severity="info",
        )

    def _disabled_device(self, info: AmpFile) -> str:
        """The device type of the disabled GradScaler a call without one hands over."""
        return "cuda"

    def _holder_init(self, cls: cst.ClassDef, info: AmpFile) -> None:
        """``class ApexScaler:`` (no ``__init__``, no base) built in another file: it becomes a
        GradScaler holder, like its native siblings, with an ``__init__`` that keeps it."""
        name = info.scaler_name
        init = statement(f"def __init__(self, {name}):\n    self.{name} = {name}\n")
        body = list(cls.body.body) if isinstance(cls.body, cst.IndentedBlock) else []
        # after the docstring and the class attributes, before the first method
        index = next((i for i, s in enumerate(body) if not isinstance(s, cst.SimpleStatementLine)), len(body))
        if index < len(body):
            self.edits.insert_before(body[index], [init.with_changes(leading_lines=[])])
            self.edits.replace(body[index], lambda upd: [upd.with_changes(leading_lines=[cst.EmptyLine(indent=False)])])
        elif body:
            self.edits.insert_after(body[-1], [init.with_changes(leading_lines=[cst.EmptyLine(indent=False)])])
        unreferenced = info.plan is not None and cls.name.value in info.plan.unreferenced
        self.report(
            cls,
            "APX213",
            f"{cls.name.value} takes the GradScaler created in another file in a new __init__ and keeps it as "
            f"self.{name}; "
            + (
                "no file of the repository builds it: a construction elsewhere must pass it (one that does not "
                "fails there at once)"
                if unreferenced
                else "every construction passes it"
            ),
            fixed=True,
            severity="warning" if unreferenced else "info",
        )

    def _pass_scaler(self, call: cst.Call, keyword: str, info: AmpFile) -> None:
        """A call of another file's function or class that now takes the scaler: pass it
        by keyword."""
        caller = enclosing(self.parents, call, cst.FunctionDef)
        access = info.access.get(caller, info.scaler_name)
        arg = cst.Arg(
            expression(access),
            keyword=cst.Name(keyword),
            equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
        )
        self.replace_node(call, lambda upd, arg=arg: upd.with_changes(args=self._append_arg(list(upd.args), arg)))
        self.report(
            call,
            "APX214",
            f"{code_of(call.func)}() is given the GradScaler as `{keyword}={access}`",
            fixed=True,
            severity="info",
        )

    def _scaler_for_amp(self, node: cst.Name, info: AmpFile, module: cst.Module) -> None:
        """``restore(path, model, optimizer, amp=amp)``: the function of another file uses
        that argument only for its state (the cross-file plan proved it), so the GradScaler
        goes in apex.amp's place (APX223); where that consumer is left as it is and may load
        a checkpoint entry into it, ``ScalerCheckpoint(scaler)``, which reads apex's (APX242)."""
        call: Any = call_given(self.parents, node)
        access = info.access.get(enclosing(self.parents, call, cst.FunctionDef), info.scaler_name)
        if info.plan is not None and code_of(call.func) in info.plan.amp_holders:
            self.replace_node(node, expression(f"{HOLDER_NAME}({access})"))
            add_helpers(self, module, [(HELPER_NAME, HELPER), (HOLDER_NAME, HOLDER)])
            self.report(
                node,
                "APX242",
                f"{_consumer(call)} only saves/loads the state of the apex.amp it is given: it is given "
                f"{HOLDER_NAME}({access}), which saves the GradScaler's state and also loads apex.amp's checkpoint "
                "entries",
                fixed=True,
                severity="info",
            )
            return
        self.replace_node(node, expression(access))
        self.report(
            node,
            "APX223",
            f"{_consumer(call)} uses the apex.amp it is given only to save/load its state or to read "
            f"master_params(): it is given the GradScaler `{access}` instead",
            fixed=True,
            severity="info",
        )

    def _scaler_for_parameter(self, node: cst.Name, info: AmpFile, module: cst.Module) -> None:
        """``train(model, optimizer, amp)``: ``train`` scales, clips and saves through that
        parameter, whose uses the rules rewrite as the GradScaler's; the call passes the
        scaler, disabled where apex.amp was None, in the same slot (APX230)."""
        call: Any = call_given(self.parents, node)
        access = info.access.get(enclosing(self.parents, call, cst.FunctionDef), info.scaler_name)
        self.replace_node(node, expression(access))
        carried = self.file_state().setdefault("scaler_parameters", {})
        carried.update({f.name.value: name for f, (name, _) in amp_parameters(self, module).items()})
        self.report(
            node,
            "APX230",
            f"{code_of(call.func)}() scales, clips or saves through the apex.amp it is given: it is given the "
            f"GradScaler `{access}` in that slot (disabled where apex.amp was not initialized)",
            fixed=True,
            severity="info",
        )

    def _report_given_by_launchers(self, info: AmpFile) -> None:
        """APX271 at each function whose parameter launchers of other files fill with apex.amp
        (``amp_value_plan``): they give the GradScaler there now."""
        for func in sorted(info.given_by_launchers, key=lambda f: f.name.value):
            param = info.access[func]
            self.report(
                func.name,
                "APX271",
                f"{func.name.value}() scales through its parameter `{param}`, which its callers in other files gave "
                f"apex.amp (or None): they give the GradScaler there (disabled where apex.amp was not initialized), "
                f"so `{param}` is read as the GradScaler here",
                fixed=True,
                severity="info",
            )

    def _return_scaler(self, info: AmpFile) -> None:
        """The helper that creates the scaler returns it as one more value, and the
        assignment of each of its calls unpacks it (APX217); a model factory returns it so to
        its callers in other files, which unpack it there (APX244)."""
        calls = info.returned_to
        if not calls and not info.returned_elsewhere:
            return
        name = info.scaler_name
        helper: Any = enclosing(self.parents, info.returns[0], cst.FunctionDef)
        for ret in info.returns:
            self.replace_node(ret.value, lambda upd: _one_more(upd, name))
        disabled = f'torch.amp.GradScaler("{self._disabled_device(info)}", enabled=False)'
        for ret in info.early_returns:
            self.replace_node(ret.value, lambda upd: _one_more(upd, disabled))
        said = f"{helper.name.value}() returns the GradScaler it creates as one more value"
        if info.early_returns:
            AddImportsVisitor.add_needed_import(self.context, "torch")
            said += " (a disabled one where it returns before amp.initialize: apex.amp was not initialized there)"
        if not calls:
            several = ", " in info.returned_elsewhere
            said += (
                f" to each of its callers, in {info.returned_elsewhere}, which unpack it"
                if several
                else f" to its one caller, in {info.returned_elsewhere}, which unpacks it"
            )
            self.report(helper, "APX244", said, fixed=True, severity="info")
            return
        for call in calls:
            assign: Any = self.parents[call]
            self.replace_node(assign.targets[0].target, lambda upd: _one_more(upd, name))
        caller: Any = enclosing(self.parents, calls[0], cst.FunctionDef)
        which = "its call" if len(calls) == 1 else f"each of its {len(calls)} calls"
        said += f"; {which} in {caller.name.value}() unpacks it as `{name}`"
        self.report(helper, "APX217", said, fixed=True, severity="info")

    def _unpack_received(self, info: AmpFile) -> None:
        """``a, b = create_optimizer(...)`` -> ``a, b, scaler = create_optimizer(...)``: the
        GradScaler the factory of another file now returns last (APX244)."""
        for func, assign in info.received.items():
            kept = info.access.get(func, info.scaler_name)  # ``self.scaler`` in a class's __init__
            self.replace_node(assign.targets[0].target, lambda upd, kept=kept: _one_more(upd, kept))
            self.report(
                assign,
                "APX244",
                f"{code_of(assign.value.func)}() now returns the GradScaler as one more value: "  # type: ignore[attr-defined]
                f"{func.name.value + '()' if func is not None else 'the module level'} unpacks it as `{kept}`",
                fixed=True,
                severity="info",
            )

    @staticmethod
    def _append_arg(args: List[cst.Arg], arg: cst.Arg) -> List[cst.Arg]:
        if args:
            last = args[-1]
            if last.comma is cst.MaybeSentinel.DEFAULT:
                # the space before ``)`` (a line break in a call spread over lines) stays there
                args[-1] = last.with_changes(
                    comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
                    whitespace_after_arg=cst.SimpleWhitespace(""),
                )
                return args + [arg.with_changes(whitespace_after_arg=last.whitespace_after_arg)]
            return args + [arg]
        return [arg]


def _one_more(node: Any, name: str) -> Any:
    """``a, b`` (a tuple or list display) -> ``a, b, name``."""
    elements = list(node.elements)
    last = elements[-1]
    if last.comma is cst.MaybeSentinel.DEFAULT:
        elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        elements.append(cst.Element(cst.parse_expression(name)))
    else:
        elements.append(cst.Element(cst.parse_expression(name), comma=last.comma))
    return node.with_changes(elements=elements)


def _consumer(call: Any) -> str:
    """The consumer of apex.amp given to ``call``, as the findings name it: a ``dict(...)`` is
    spread into the calls that use it (``Keeper(net, **extras)``)."""
    if code_of(call.func) == "dict":
        return "every call the dict built here is spread into (**)"
    return f"{code_of(call.func)}()"
