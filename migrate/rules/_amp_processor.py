"""The edits of the batch-processor route (``migrate/processor_plan.py``).

In the launcher: the batch processor it hands the framework's runner gets a keyword
parameter (off by default) that puts its whole body under ``torch.autocast``, and each
runner call of the plan is handed ``functools.partial(processor, <switch>=scaler.is_enabled())``
instead of the bare function.  In the hook's file: a loss read from the runner's outputs is
the processor's; no autocast is placed there.
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from ..runner_frameworks import FRAMEWORKS
from ._amp_device import device_type_at
from ._amp_rule import AmpRule
from ._amp_sites import AmpFile, ScaleLossSite, arg_value, class_of_method, code_of, walk
from ._edits import expression
from ._tree import is_docstring
from ._with_wrap import wrapped_in_with

_TIGHT_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))

#: the finding's text at the launcher's initialize
LAUNCHER_NOTE = (
    "the forward passes run in {processor}(), the batch processor the framework's runner is handed at line "
    "{line}: its body runs under torch.autocast while {switch} is true, and that runner is handed "
    "functools.partial({processor}, {switch}={scaler}.is_enabled()). apex's O1 cast every operation after "
    "amp.initialize; natively only those inside {processor}() run in {dtype}"
)


class ProcessorAutocast(AmpRule):
    """Places the batch-processor route's autocast (see the module docstring)."""

    def _autocast_processors(self, module: cst.Module, info: AmpFile) -> None:
        plan = info.plan
        if plan is None or not plan.processors:
            return
        wrapped: set = set()
        for owner, processor, line, switch in plan.processors:
            func = next((s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == owner), None)
            call = self._runner_call(func, processor, line) if func is not None else None
            target = next(
                (s for s in module.body if isinstance(s, cst.FunctionDef) and s.name.value == processor), None
            )
            if call is None or target is None:
                continue
            scaler = info.access.get(func, info.scaler_name)
            partial = self._partial_name()
            self.replace_node(call, expression(f"{partial}({processor}, {switch}={scaler}.is_enabled())"))
            if processor not in wrapped:
                wrapped.add(processor)
                self._switch_processor(target, switch)
            for site in info.training_inits:
                self.report(
                    site.call,
                    "APX247",
                    LAUNCHER_NOTE.format(processor=processor, line=line, switch=switch, scaler=scaler,
                                         dtype=self.settings.dtype),
                    fixed=True,
                    severity="warning",
                )

    def _runner_call(self, func: cst.FunctionDef, processor: str, line: int) -> Optional[cst.Name]:
        """The processor argument of the runner call of ``func`` at ``line``."""
        for node in walk(func):
            if not isinstance(node, cst.Call) or self.line_of(node) != line:
                continue
            for framework in FRAMEWORKS:
                if not framework.processor_runners:
                    continue
                given = arg_value(node, framework.processor_position, framework.processor_keyword)
                if isinstance(given, cst.Name) and given.value == processor:
                    return given
        return None

    def _partial_name(self) -> str:
        partial = self._imported_partial()  # type: ignore[attr-defined]
        if partial is None:
            AddImportsVisitor.add_needed_import(self.context, "functools")
            partial = "functools.partial"
        return partial

    def _switch_processor(self, func: cst.FunctionDef, switch: str) -> None:
        """``def processor(model, data, train_mode, <switch>=False):`` with its body (after a
        docstring) under ``with torch.autocast(..., enabled=<switch>):``."""
        params = func.params
        self.replace_node(
            params,
            params.with_changes(
                params=[*params.params, cst.Param(cst.Name(switch), default=cst.Name("False"), equal=_TIGHT_EQUAL)]
            ),
        )
        body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
        members = body[1:] if body and is_docstring(body[0]) else body
        if not members:
            return
        device = device_type_at(self, members[0], [code_of(p.name) for p in params.params[:1]])
        head = f"with torch.autocast({device}, dtype=torch.{self.settings.dtype}, enabled={switch}):\n    pass\n"

        indent = self.tree.default_indent
        self.edits.wrap(members, lambda ups: wrapped_in_with(head, ups, indent))
        self.need_torch()

    def _loss_from_processor(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """Whether ``site`` scales ``<runner>.outputs...`` in a hook method the plan's
        batch-processor route covers (the processor has the autocast) or refused (a TODO
        saying why); either way reported here."""
        plan = info.plan
        if plan is None or site.func is None or not (plan.processor_autocast or plan.processor_refusals):
            return False
        cls = class_of_method(self.parents, site.func)
        name = cls.name.value if cls is not None else None  # type: ignore[union-attr]
        params = site.func.params.params
        if name is None or len(params) != 2 or not _read_off(site.loss, params[1].name.value, "outputs"):
            return False
        why = dict(plan.processor_autocast).get(name)
        if why is not None:
            self.report(
                site.with_stmt, "APX247", f"the loss is the runner's output: {why}", fixed=True, severity="info"
            )
            return True
        refusal = dict(plan.processor_refusals).get(name)
        if refusal is None:
            return False
        self.todo(
            site.with_stmt,
            "APX210",
            "the forward pass and loss are not next to this amp.scale_loss: the loss is the runner's output, computed "
            f"where the framework runs the forward pass, and no autocast can be put there: {refusal}",
        )
        return True


def _read_off(node: Any, name: str, attribute: str) -> bool:
    """Whether ``node`` is ``<name>.<attribute>``, subscripted or read further."""
    while isinstance(node, (cst.Subscript, cst.Attribute)):
        if isinstance(node, cst.Attribute) and node.attr.value == attribute:
            if isinstance(node.value, cst.Name) and node.value.value == name:
                return True
        node = node.value
    return False
