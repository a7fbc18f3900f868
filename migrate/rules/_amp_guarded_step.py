"""The test a hook's step and unscale need where the runner it reads the GradScaler from may
carry none (the runner-hook route, ``runner_hook_plan``).

cvpods' ``OptimizationHook.after_step`` scales only when its own switch is on (``if
self.mixed_precision: <scale> else: losses.backward()``) and then steps for both runs
(``self.trainer.optimizer.step()``).  The GradScaler is ``self.trainer.scaler``, which only the
runner that initialized apex keeps: a plain runner given the same hook for fp32 training has
none, so ``self.trainer.scaler.step(...)`` would fail there.  The step (and an ``unscale_``
before a clip) takes the scale clause's test instead: ``if self.mixed_precision:
self.trainer.scaler.step(opt); self.trainer.scaler.update() else: opt.step()``.  That holds
exactly when the scale ran, provided the scale clause heads its if-chain, its test calls and
indexes nothing, and the method assigns nothing that test reads.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import libcst as cst

from ._amp_mirrored_step import scale_clause
from ._edits import code_of, statement
from ._tree import assignment_targets, walk


def scale_guard(parents: Any, func: Any, scale_stmt: Any) -> Tuple[Optional[cst.BaseExpression], str]:
    """The test of the if clause holding ``scale_stmt`` in ``func``, proven to tell, anywhere in
    ``func`` after it, whether the scale ran; else None and why not (None and "" when the scale
    is under no if: the steps need the GradScaler as the scale did)."""
    clause = scale_clause(parents, scale_stmt, func)
    if clause is None:
        return None, ""
    if isinstance(parents.get(clause), cst.If) and parents[clause].orelse is clause:
        return None, "the scaled backward's if clause is an elif"
    test = clause.test
    if any(isinstance(n, (cst.Call, cst.Subscript, cst.Await, cst.NamedExpr)) for n in walk(test)):
        return None, "the scaled backward's test calls or indexes something"
    read = {code_of(n) for n in walk(test) if isinstance(n, (cst.Name, cst.Attribute))}
    for node in walk(func.body):
        for target in assignment_targets(node):
            hit = {code_of(n) for n in walk(target) if isinstance(n, (cst.Name, cst.Attribute))} & read
            if hit:
                return None, f"{sorted(hit)[0]}, which the scaled backward's test reads, is assigned in the method"
    return test, ""


def guarded_step(test: cst.BaseExpression, scaler: str, optimizer: str, kept: cst.CSTNode) -> cst.If:
    """``if <test>: scaler.step(optimizer); scaler.update() else: <kept>`` (the plain step)."""
    body = cst.IndentedBlock(body=[statement(f"{scaler}.step({optimizer})\n"), statement(f"{scaler}.update()\n")])
    above = getattr(kept, "leading_lines", ())
    if above:
        kept = kept.with_changes(leading_lines=())  # the comments above the step stay above the if
    return cst.If(test=test, body=body, orelse=cst.Else(body=cst.IndentedBlock(body=[kept])), leading_lines=above)


def guarded_unscale(test: cst.BaseExpression, scaler: str, optimizer: str) -> cst.If:
    """``if <test>: scaler.unscale_(optimizer)``."""
    return cst.If(test=test, body=cst.IndentedBlock(body=[statement(f"{scaler}.unscale_({optimizer})\n")]))
