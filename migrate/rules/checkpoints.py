"""APX401-APX403: ``amp.state_dict()`` / ``amp.load_state_dict(x)`` -> the GradScaler's.

Saving becomes ``scaler.state_dict()`` under the user's own key.  Loading goes through a
small helper written once into the file, ``load_scaler_state(scaler, state)``, because a
checkpoint may hold three formats and GradScaler accepts one: apex's
``{'loss_scaler0': {'loss_scale': s, 'unskipped': n}}`` (converted: ``scale`` <-
``loss_scale``, ``_growth_tracker`` <- ``unskipped``, the scaler's own settings for the
rest), GradScaler's own, and ``{}`` from a disabled scaler (an enabled one refuses it, so
it is skipped).  A helper keeps every load site a one-liner and the conversion in one
readable place; it needs no import."""

from __future__ import annotations

from typing import Any, List

import libcst as cst

from ._amp_rule import AmpRule
from ._amp_sites import analyse, code_of, find_scalers
from ._edits import expression, statement
from .base import Example

HELPER_NAME = "load_scaler_state"
HELPER = '''def load_scaler_state(scaler, state):
    """Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    """
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)
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
    }
    TRIGGERS = (b"state_dict",)
    LIVE_TRIGGERS = ("state_dict",)

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if info.inits:
            return
        lookup = find_scalers(self, module)
        helper_needed = False
        for need in info.needs:
            if need.kind not in ("state_dict", "load_state_dict"):
                continue
            scaler = lookup(need.node)
            if scaler is None:
                continue
            if need.kind == "state_dict":
                self.replace_node(need.node, expression(f"{scaler.expr}.state_dict()"))
                self.report(
                    need.node, "APX401", f"amp.state_dict() -> {scaler.expr}.state_dict()", fixed=True, severity="info"
                )
            else:
                arg = code_of(need.node.args[0].value)
                self.replace_node(need.node, expression(f"{HELPER_NAME}({scaler.expr}, {arg})"))
                self.report(
                    need.node,
                    "APX402",
                    f"amp.load_state_dict -> {HELPER_NAME}({scaler.expr}, ...), which also reads apex checkpoints",
                    fixed=True,
                    severity="info",
                )
                helper_needed = True
        if helper_needed and not any(
            isinstance(s, cst.FunctionDef) and s.name.value == HELPER_NAME for s in module.body
        ):
            helper = statement(HELPER)
            anchor = helper_anchor(module)
            if anchor is None:
                first = module.body[0]
                self.edits.insert_before(
                    first,
                    [
                        helper.with_changes(leading_lines=[]),
                    ],
                )
            else:
                self.edits.insert_after(anchor, [helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])])


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
]

NOOP_EXAMPLES: List[Example] = []

CheckpointRule.EXAMPLES = EXAMPLES
CheckpointRule.NOOP_EXAMPLES = NOOP_EXAMPLES
