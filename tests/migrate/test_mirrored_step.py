"""rules/_amp_mirrored_step: where a step in a plain ``else`` may take an ``elif`` with the
apex branch's test (the GradScaler exists only on that branch)."""

from __future__ import annotations

from typing import Any, Dict, Tuple

import libcst as cst

from migrate.rules._amp_mirrored_step import apex_branch, mirrored_guard
from migrate.rules._tree import children, walk

STEP = """\
def train_step(self, loss, optimizer, loss_scaler=None, use_apex_amp=False):
    if loss_scaler:
        loss_scaler.scale(loss).backward()
    elif use_apex_amp:
        with amp.scale_loss(loss, optimizer["d"], loss_id=0) as scaled:
            scaled.backward()
    else:
        loss.backward()
{between}    if loss_scaler:
        loss_scaler.step(optimizer["d"])
    else:
        optimizer["d"].step()
"""


def _parents(module: cst.Module) -> Dict[Any, Any]:
    parents: Dict[Any, Any] = {}
    stack = [module]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[child] = node
            stack.append(child)
    return parents


def _guard(source: str) -> Tuple[Any, str, Any]:
    module = cst.parse_module(source)
    parents = _parents(module)
    func = module.body[0]
    scale = next(n for n in walk(module) if isinstance(n, cst.With))
    step = next(
        n for n in walk(module)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
        and cst.Module([]).code_for_node(n.func.value) == 'optimizer["d"]'
    )
    last, why = mirrored_guard(parents, func, scale, step)
    return last, why, parents


def test_the_step_chain_takes_the_apex_branch_test_as_an_elif():
    last, why, _ = _guard(STEP.format(between=""))
    assert why == "" and last is not None
    new = last.with_changes(orelse=apex_branch(cst.Name("use_apex_amp"), "scalers[0]", 'optimizer["d"]', last.orelse))
    assert cst.Module([]).code_for_node(new) == (
        "if loss_scaler:\n"
        "    loss_scaler.step(optimizer[\"d\"])\n"
        "elif use_apex_amp:\n"
        "    scalers[0].step(optimizer[\"d\"])\n"
        "    scalers[0].update()\n"
        "else:\n"
        "    optimizer[\"d\"].step()\n"
    )


def test_a_test_name_assigned_between_the_chains_is_refused():
    last, why, _ = _guard(STEP.format(between="    loss_scaler = None\n"))
    assert last is None and why == "loss_scaler, which the tests read, is assigned between the two if-chains"


def test_a_step_chain_testing_something_else_is_refused():
    source = STEP.format(between="").replace("    if loss_scaler:\n        loss_scaler.step", "    if other:\n        loss_scaler.step")
    last, why, _ = _guard(source)
    assert last is None and "does not test what" in why


def test_a_test_that_calls_is_refused():
    source = STEP.format(between="").replace("if loss_scaler:", "if loss_scaler.is_enabled():")
    last, why, _ = _guard(source)
    assert last is None and "calls or indexes" in why
