"""The one "plain for loop" test of autocast placement (``_is_plain_loop``): a loop that
accumulates the loss (``_accumulates_loss``) and a forward-only loop in a backward helper's
caller (``_is_forward_loop``) must both be one, and they differ only in what else they ask."""

from __future__ import annotations

import libcst as cst
import pytest

from migrate.rules._amp_autocast import AutocastPlacement


def _placement(helpers=frozenset()) -> AutocastPlacement:
    placement = object.__new__(AutocastPlacement)
    placement.helpers = set(helpers)
    return placement


def _loop(code: str) -> cst.BaseStatement:
    return cst.parse_module(code).body[0]


PLAIN = [
    "for i in range(n):\n    loss = loss + crit(out[i], y[i])\n",
    "for i in range(n):\n    if w[i]:\n        loss = loss + w[i] * crit(out[i], y[i])\n",
    "for i in range(n): loss = loss + crit(out[i], y[i])\n",
    # a break of the loop itself stays in it: autocast may span the loop whole
    "for o in outs:\n    loss = loss + crit(o, y)\n    if loss > 1:\n        break\n",
]
NOT_PLAIN = {
    "async": "async for o in outs:\n    loss = loss + crit(o, y)\n",
    "else": "for o in outs:\n    loss = loss + crit(o, y)\nelse:\n    loss = loss / n\n",
    "while": "for o in outs:\n    while k:\n        loss = loss + crit(o, y)\n",
    "nested for": "for o in outs:\n    if o:\n        for p in o:\n            loss = loss + crit(p, y)\n",
    "try": "for o in outs:\n    try:\n        loss = loss + crit(o, y)\n    except ValueError:\n        pass\n",
    "match": "for o in outs:\n    match o:\n        case _:\n            loss = loss + crit(o, y)\n",
    "with": "for o in outs:\n    with ctx():\n        loss = loss + crit(o, y)\n",
    "step": "for o in outs:\n    loss = loss + crit(o, y)\n    optimizer.step()\n",
    "backward": "for o in outs:\n    loss = crit(o, y)\n    loss.backward()\n",
    "def": "for o in outs:\n    def f():\n        return o\n    loss = loss + f()\n",
}


@pytest.mark.parametrize("code", PLAIN)
def test_plain_loops_accumulate_the_loss_and_may_ride_in_a_callers_span(code):
    stmt = _loop(code)
    assert _placement()._accumulates_loss(stmt, {"loss"})
    assert _placement({"loss_backward"})._is_forward_loop(stmt)


@pytest.mark.parametrize("code", NOT_PLAIN.values(), ids=list(NOT_PLAIN))
def test_other_loops_are_neither(code):
    stmt = _loop(code)
    assert not _placement()._accumulates_loss(stmt, {"loss"})
    assert not _placement({"loss_backward"})._is_forward_loop(stmt)


def test_what_each_asks_beside_the_shape():
    stmt = _loop(PLAIN[0])
    assert not _placement()._accumulates_loss(stmt, {"other_loss"})  # it must assign the loss
    assert not _placement()._is_forward_loop(stmt)  # only while a backward helper's callers are searched
    helper_call = _loop("for o in outs:\n    loss_backward(opt, crit(o, y))\n")
    assert not _placement({"loss_backward"})._is_forward_loop(helper_call)  # a helper call steps
