"""APX401-APX403: ``amp.state_dict()`` / ``amp.load_state_dict(x)`` -> the GradScaler's.

Saving becomes ``scaler.state_dict()`` under the user's own key.  Loading goes through a
small helper written once into the file, ``load_scaler_state(scaler, state)``, because a
checkpoint may hold three formats and GradScaler accepts one: apex's
``{'loss_scaler0': {'loss_scale': s, 'unskipped': n}}`` (converted: ``scale`` <-
``loss_scale``, ``_growth_tracker`` <- ``unskipped``, the scaler's own settings for the
rest), GradScaler's own, and ``{}`` from a disabled scaler (an enabled one refuses it, so
it is skipped).  A helper keeps every load site a one-liner and the conversion in one
readable place; it needs no import.

A file that saves or loads amp state but has neither ``amp.initialize`` nor
``amp.scale_loss`` (a ``utils/checkpoint.py`` beside the training script) cannot reach the
GradScaler: it is created where ``amp.initialize`` was, in another file.  Keeping the call
on ``apexcompat.amp`` does not work either once that file is migrated (nothing sets up the
shim's state any more), so each such call is manual work (APX403) with a TODO that says
what to write, and it replaces the initialize rule's generic "kept on apexcompat.amp" TODO
for that site."""

from __future__ import annotations

import dataclasses
from typing import Any, List, Optional

import libcst as cst

from ._amp_rule import APEX_AMP, SHIM_FALLBACK_TODO, AmpRule
from ._amp_sites import (
    GRADSCALER_NAMES, analyse, code_of, find_scalers, optimizer_params, plan_note, takes_optional_scaler, walk,
)
from ._edits import expression, read_todos, statement, without_todos
from ._tree import holds_only, walk_of
from .base import Example

#: the fixed part of the APX403 message (KNOWN_TODOS reports its TODO again on later runs)
ELSEWHERE_TODO = "needs the GradScaler that replaces amp.initialize, which is created in another file"
#: the start of the initialize rule's message for a site of a file without amp.initialize
#: (replaced here)
_UNREACHABLE = "amp.initialize is not in this file, so the scaler cannot reach this site; "


def _unreachable(message: str) -> bool:
    return message.startswith(_UNREACHABLE) and SHIM_FALLBACK_TODO in message


def elsewhere_todo(need: Any, why: Optional[str] = None) -> str:
    """The APX403 message for ``amp.state_dict()`` / ``amp.load_state_dict(x)`` in a file
    without amp.initialize: what to write instead, and ``why`` (the cross-file plan's reason)
    when the plan tried to bring the GradScaler here and could not."""
    call = need.node
    if need.kind == "state_dict":
        instead = "`scaler.state_dict()` instead"
    else:
        arg = code_of(call.args[0].value) if call.args else "..."
        instead = (
            f"`scaler.load_state_dict({arg})` instead (a checkpoint apex wrote holds "
            '{"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n into '
            "scaler.state_dict() and load that)"
        )
    unreached = f" and cannot reach this line ({why})" if why else ""
    return (
        f"{code_of(call)} {ELSEWHERE_TODO}{unreached}: pass that scaler here and call {instead}. "
        "apexcompat.amp's state is set up only by its own amp.initialize, so this line fails once that file "
        "is migrated"
    )


HELPER_NAME = "load_scaler_state"
_HELPER_HEAD = '''def load_scaler_state(scaler, state):
    """Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
'''
_HELPER_BODY = '''    """
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)
'''
HELPER = _HELPER_HEAD + _HELPER_BODY
LIST_HELPER_NAME = "load_scaler_states"
#: with one GradScaler per apex loss id (``num_losses=2``): each from its own entry
LIST_HELPER = '''def load_scaler_states(scalers, state):
    """Restore one GradScaler per apex loss id: from the list of their states, or from
    apex.amp's ``{"loss_scaler0": ..., "loss_scaler1": ...}`` (one entry per loss id).
    """
    for loss_id, scaler in enumerate(scalers):
        if isinstance(state, dict):
            load_scaler_state(scaler, {"loss_scaler0": state[f"loss_scaler{loss_id}"]})
        else:
            load_scaler_state(scaler, state[loss_id])
'''
#: the helper in a file whose function is given the GradScaler where its callers gave
#: apex.amp: a caller that still gives apex.amp (or apexcompat.amp) loads as before
PASSING_HELPER = (
    _HELPER_HEAD
    + """    Anything but a GradScaler (apex.amp itself, from a caller that still gives it) loads
    the entry as it is.
"""
    + _HELPER_BODY.replace(
        '    """\n',
        '    """\n    if not isinstance(scaler, torch.amp.GradScaler):\n        scaler.load_state_dict(state)\n'
        "        return\n",
        1,
    )
)


HOLDER_NAME = "ScalerCheckpoint"
#: what a launcher gives, in apex.amp's place, to a consumer it leaves as it is that may load
#: a checkpoint entry into it (``restart(path, model=model, amp=apex.amp)`` looping over its
#: ``**kwargs``): the GradScaler's state, read through ``load_scaler_state``; like apex.amp's,
#: its ``load_state_dict`` takes the state alone
HOLDER = '''class ScalerCheckpoint:
    """The GradScaler where apex.amp was handed over for its state: it saves the scaler's
    state and loads an entry written by GradScaler or by apex.amp (``load_scaler_state``).
    """

    def __init__(self, scaler):
        self.scaler = scaler

    def state_dict(self):
        return self.scaler.state_dict()

    def load_state_dict(self, state_dict):
        load_scaler_state(self.scaler, state_dict)
'''


def _is_import_like(stmt: Any) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body) or (
            len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Expr)
            and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        )
    if isinstance(stmt, cst.Try):
        return all(_is_import_like(s) for s in stmt.body.body)
    return False


def helper_anchor(module: cst.Module):
    """The last statement of the file's leading imports (None: the file starts with code)."""
    anchor = None
    for stmt in module.body:
        if not _is_import_like(stmt):
            break
        anchor = stmt
    return anchor


class CheckpointRule(AmpRule):
    """amp.state_dict()/load_state_dict -> the GradScaler's, reading apex checkpoints too."""

    CODES = {
        "APX401": "amp.state_dict() -> scaler.state_dict() (a disabled scaler saves {})",
        "APX402": "amp.load_state_dict(x) -> load_scaler_state(scaler, x), which also reads apex and {} entries",
        "APX403": "amp state saved/loaded in a file without amp.initialize: pass the GradScaler in by hand",
        "APX224": "a function given apex.amp only for its state is given the GradScaler: its loads read apex "
        "checkpoints through load_scaler_state",
    }
    TRIGGERS = (b"state_dict", b"master_params")
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = ("state_dict", "master_params")
    NAMESPACES = APEX_AMP

    def plan(self, module: cst.Module) -> None:
        plan = self.repo_plan()
        if plan is not None and plan.amp_parameters:
            self._given_the_scaler(module, plan.amp_parameters)
            return
        info = analyse(self, module)
        if info.inits:
            return
        lookup = find_scalers(self, module)
        if not info.scale_losses:
            lookup = _without_own_scalers(self, module, lookup)
            self._scaler_elsewhere(info, lookup)
        helper_needed = False
        for need in info.needs:
            if need.kind not in ("state_dict", "load_state_dict"):
                continue
            scaler = lookup(need.node)
            if scaler is None:
                continue
            if self.settings.dtype == "bfloat16":
                self._without_scaler(need)
            elif need.kind == "state_dict":
                saved = f"{scaler.expr}.state_dict()"
                if info.loss_scalers > 1:  # one GradScaler per loss id: their states in order
                    saved = f"[loss_scaler.state_dict() for loss_scaler in {scaler.expr}]"
                self.replace_node(need.node, expression(saved))
                self.report(need.node, "APX401", f"amp.state_dict() -> {saved}", fixed=True, severity="info")
            else:
                arg = code_of(need.node.args[0].value)
                helper = LIST_HELPER_NAME if info.loss_scalers > 1 else HELPER_NAME
                self.replace_node(need.node, expression(f"{helper}({scaler.expr}, {arg})"))
                self.report(
                    need.node,
                    "APX402",
                    f"amp.load_state_dict -> {helper}({scaler.expr}, ...), which also reads apex checkpoints",
                    fixed=True,
                    severity="info",
                )
                helper_needed = True
            if self.settings.dtype != "bfloat16" and takes_optional_scaler(self.parents, need.func, plan):
                _only_when_given(self, need.node, scaler.expr)
        if helper_needed:
            self._add_helper(module, HELPER)
            if info.loss_scalers > 1:
                self._add_helper(module, LIST_HELPER, LIST_HELPER_NAME)

    def _given_the_scaler(self, module: cst.Module, parameters: Any) -> None:
        """A function of a file without apex.amp whose callers gave it apex.amp for a
        parameter it only saves/loads the state of (``restore(path, model, optimizer,
        amp=None)``): the migrated callers give it the GradScaler, whose ``state_dict()`` is
        spelled the same; loading goes through ``load_scaler_state``, which converts an apex
        checkpoint's entry for a GradScaler and gives anything else (apex.amp from a caller
        that keeps it) the entry as it is (APX224)."""
        wanted = dict(parameters)
        changed = False
        for owner in module.body:
            if not (isinstance(owner, (cst.FunctionDef, cst.ClassDef)) and owner.name.value in wanted):
                continue
            held = _held_as(owner, wanted[owner.name.value])
            done = []
            for node in walk(owner.body):
                if not (
                    isinstance(node, cst.Call)
                    and isinstance(node.func, cst.Attribute)
                    and code_of(node.func.value) == held
                    and len(node.args) == 1
                ):
                    continue
                arg = code_of(node.args[0].value)
                if node.func.attr.value == "load_state_dict":
                    self.replace_node(node, expression(f"{HELPER_NAME}({held}, {arg})"))
                    done.append(
                        f"{held}.load_state_dict -> {HELPER_NAME}({held}, ...), which also reads apex checkpoints"
                    )
                    changed = True
                elif node.func.attr.value == "master_params":
                    self.replace_node(node, expression(optimizer_params(arg)))
                    done.append(f"{held}.master_params({arg}) -> the parameters {arg} steps, as apex yielded")
            self.report(
                owner,
                "APX224",
                f"{owner.name.value}() is given the GradScaler for `{wanted[owner.name.value]}` where its callers "
                "gave apex.amp: " + ("; ".join(dict.fromkeys(done)) or f"{held}.state_dict() is the GradScaler's"),
                fixed=True,
                severity="info",
            )
        if changed:
            self.need_torch()
            modern = self.settings.torch_at_least(2, 3)
            legacy = PASSING_HELPER.replace("torch.amp.", "torch.cuda.amp.")
            self._add_helper(module, PASSING_HELPER if modern else legacy)

    def _add_helper(self, module: cst.Module, text: str, name: str = HELPER_NAME) -> None:
        add_helpers(self, module, [(name, text)])

    def _without_scaler(self, need: Any) -> None:
        """--dtype bfloat16 (no scaler): saving writes ``{}`` under the user's key, so the
        checkpoint keeps its layout; loading is dropped, so an apex checkpoint (whose loss
        scale a bfloat16 run has no use for) still loads."""
        if need.kind == "state_dict":
            self.replace_node(need.node, expression("{}"))
            message = "amp.state_dict() -> {} (bfloat16: no loss scaler)"
            self.report(need.node, "APX401", message, fixed=True, severity="info")
            return
        stmt = self.statement_of(need.node)
        if holds_only(stmt, need.node):
            self.edits.replace(guard_left_empty(self.parents, stmt) or stmt, [])
        else:
            self.replace_node(need.node, expression("None"))
        self.report(
            need.node,
            "APX402",
            "amp.load_state_dict(...) dropped (bfloat16: no loss scaler; an apex checkpoint's entry is ignored)",
            fixed=True,
            severity="info",
        )

    def _scaler_elsewhere(self, info: Any, lookup: Any) -> None:
        """Checkpoint sites of a file without amp.initialize and amp.scale_loss: APX403 with
        its TODO, in place of the initialize rule's APX220 for the same site (that finding,
        the same site's, is rewritten where it stands in the run's list; its TODO comment
        is dropped from the statement)."""
        # the initialize rule reported one APX220 per need, in the order of info.needs
        earlier = [i for i, f in enumerate(self.findings) if f.code == "APX220" and _unreachable(f.message)]
        matched = dict(zip(map(id, info.needs), earlier)) if len(earlier) == len(info.needs) else {}
        for need in info.needs:
            if need.kind not in ("state_dict", "load_state_dict") or lookup(need.node) is not None:
                continue
            stmt = self.statement_of(need.node)
            message = _written_before(stmt, need) or elsewhere_todo(need, plan_note(self, info, need.node))
            index = matched.get(id(need))
            if index is not None:
                # rewritten where it stands: the engine positions findings by their index
                if self.settings.code_enabled("APX403"):
                    self.findings[index] = dataclasses.replace(
                        self.findings[index], code="APX403", message=message, fixed=False, severity="error"
                    )
                self.todos.setdefault(stmt, []).append(message)
            else:
                self.todo(need.node, "APX403", message)
            if stmt is not None:
                self.replace_node(stmt, _without_unreachable_todo)


def guard_left_empty(parents: Any, stmt: Any) -> Any:
    """The ``if`` of ``if args.fp16: amp.load_state_dict(x)``, which goes as a whole with
    ``stmt`` (no ``else``, a test without calls, not an ``elif``); else None."""
    block = parents.get(stmt)
    guard = parents.get(block)
    if (
        isinstance(guard, cst.If)
        and guard.body is block
        and guard.orelse is None
        and len(block.body) == 1
        and not any(isinstance(n, cst.Call) for n in walk(guard.test))
        and not isinstance(parents.get(guard), cst.If)  # not an elif
    ):
        return guard
    return None


def _only_when_given(rule: Any, call: cst.Call, scaler: str) -> None:
    """The site ``call`` of a function whose GradScaler parameter defaults to None runs only
    when it is given: the ``if`` holding its statement alone gets ``and scaler is not None``,
    else the statement goes under ``if scaler is not None:``; a site inside a larger
    statement becomes ``(... if scaler is not None else {})`` (None for a load)."""
    given = f"{scaler} is not None"
    stmt = rule.statement_of(call)
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    alone = (isinstance(small, cst.Expr) and small.value is call) or (
        isinstance(small, cst.Assign) and small.value is call
    )
    if not alone:
        empty = "{}" if isinstance(call.func, cst.Attribute) and call.func.attr.value == "state_dict" else "None"
        rewrite = rule.node_replacements.get(call)
        rule.replace_node(call, lambda upd: cst.IfExp(
            test=expression(given),
            body=rewrite(upd) if callable(rewrite) else rewrite if rewrite is not None else upd,
            orelse=expression(empty),
            lpar=[cst.LeftParen()],
            rpar=[cst.RightParen()],
        ))
        return
    block = rule.parents.get(stmt)
    guard = rule.parents.get(block)
    if isinstance(guard, cst.If) and guard.body is block and guard.orelse is None and len(block.body) == 1:
        rule.replace_node(guard.test, lambda upd: cst.BooleanOperation(
            left=_parenthesized(upd), operator=cst.And(), right=expression(given)
        ))
        return
    rule.edits.replace(stmt, lambda upd: [cst.If(
        test=expression(given),
        body=cst.IndentedBlock(body=[upd.with_changes(leading_lines=[])]),
        leading_lines=upd.leading_lines,
    )])


def _parenthesized(test: Any) -> Any:
    """``test`` as the left operand of ``and``: an ``or``, a conditional expression, a lambda
    or an assignment expression in parentheses."""
    loose = (isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or)) or isinstance(
        test, (cst.IfExp, cst.Lambda, cst.NamedExpr)
    )
    if loose and not test.lpar:
        return test.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return test


def _without_own_scalers(rule: Any, module: cst.Module, lookup: Any) -> Any:
    """``lookup`` less the GradScalers the file made itself (not the one the initialize rule
    made of its amp.initialize).  In a file with neither amp.initialize nor amp.scale_loss
    such a scaler is the user's own native one (a runner's
    ``self.loss_scaler`` for its torch.cuda.amp path, beside its apex path): apex's loss
    scale is not in it, so amp state saved or loaded there is not its state."""
    own = set()
    created = rule.file_state().get("scaler")  # the initialize rule's, earlier in this run
    for node in walk_of(module, cst.Assign):
        if not (len(node.targets) == 1 and isinstance(node.value, cst.Call)):
            continue
        if rule.qualified_names(node.value.func) & GRADSCALER_NAMES:
            own.add(code_of(node.targets[0].target))
    own = {expr for expr in own if expr.rsplit(".", 1)[-1] != created}

    def outside(node: cst.CSTNode) -> Any:
        found = lookup(node)
        return None if found is not None and found.expr in own else found

    return outside


def add_helpers(rule: Any, module: cst.Module, helpers: List[Any]) -> None:
    """The ``(name, text)`` definitions, in order, after the file's leading imports, but
    those the file defines already."""
    defined = {s.name.value for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
    new = [statement(text) for name, text in helpers if name not in defined]
    if not new:
        return
    anchor = helper_anchor(module)
    if anchor is None:
        new[0] = new[0].with_changes(leading_lines=[])
        rule.edits.insert_before(module.body[0], new)
    else:
        spaced = [cst.EmptyLine(), cst.EmptyLine()]
        rule.edits.insert_after(anchor, [s.with_changes(leading_lines=spaced) for s in new])


def _held_as(owner: Any, param: str) -> str:
    """Where ``param`` is used from: the function's parameter itself, or for a class the
    ``self.<attr>`` its ``__init__`` keeps it as."""
    if isinstance(owner, cst.FunctionDef):
        return param
    for method in owner.body.body:
        if isinstance(method, cst.FunctionDef) and method.name.value == "__init__" and method.params.params:
            me = method.params.params[0].name.value
            for node in walk(method.body):
                if (
                    isinstance(node, cst.Assign)
                    and len(node.targets) == 1
                    and isinstance(node.value, cst.Name)
                    and node.value.value == param
                    and code_of(node.targets[0].target).startswith(f"{me}.")
                ):
                    return code_of(node.targets[0].target)
    return param


def _written_before(stmt: Any, need: Any) -> Optional[str]:
    """The APX403 TODO an earlier run wrote above ``stmt`` for the same call: its reason names
    the plan of that run (the initializing file still held apex.amp then), so a later run
    keeps it as written instead of adding a second one; None when there is none."""
    start = f"{code_of(need.node)} {ELSEWHERE_TODO}"
    lines = getattr(stmt, "leading_lines", ()) if stmt is not None else ()
    return next((todo for todo in read_todos(lines) if todo.startswith(start)), None)


def _without_unreachable_todo(stmt: Any) -> Any:
    """``stmt`` without the initialize rule's "kept on apexcompat.amp" TODO comment."""
    return stmt.with_changes(leading_lines=without_todos(stmt.leading_lines, _unreachable))


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "save-and-resume",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, resume=None):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    if resume:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": amp.state_dict()}
    torch.save(checkpoint, "last.pt")
""",
        after="""\
import torch


"""
        + HELPER
        + """

def train(model, optimizer, batches, resume=None):
    scaler = torch.amp.GradScaler("cuda")
    if resume:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        load_scaler_state(scaler, checkpoint["amp"])
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": scaler.state_dict()}
    torch.save(checkpoint, "last.pt")
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX401", "APX402"),
    ),
    Example(
        "state-in-a-file-without-initialize-reported",
        before="""\
import torch
from apex import amp


def save_checkpoint(model, optimizer, path):
    torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, path)  # every epoch


def load_checkpoint(path):
    checkpoint = torch.load(path)
    amp.load_state_dict(checkpoint["amp"])
""",
        after="""\
import torch
from apexcompat import amp


def save_checkpoint(model, optimizer, path):
    # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
    #   which is created in another file: pass that scaler here and call
    #   `scaler.state_dict()` instead. apexcompat.amp's state is set up only by its own
    #   amp.initialize, so this line fails once that file is migrated
    torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, path)  # every epoch


def load_checkpoint(path):
    checkpoint = torch.load(path)
    # TODO(apexcompat): amp.load_state_dict(checkpoint["amp"]) needs the GradScaler that
    #   replaces amp.initialize, which is created in another file: pass that scaler here and
    #   call `scaler.load_state_dict(checkpoint["amp"])` instead (a checkpoint apex wrote
    #   holds {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s,
    #   _growth_tracker=n into scaler.state_dict() and load that). apexcompat.amp's state is
    #   set up only by its own amp.initialize, so this line fails once that file is migrated
    amp.load_state_dict(checkpoint["amp"])
""",
        codes=("APX102", "APX403"),
    ),
]

NOOP_EXAMPLES: List[Example] = []

CheckpointRule.EXAMPLES = EXAMPLES
CheckpointRule.NOOP_EXAMPLES = NOOP_EXAMPLES
