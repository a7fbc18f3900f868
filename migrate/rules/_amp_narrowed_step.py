"""A scaled backward under a narrower test than the GradScaler's switch: cascade-stereo's
trainers initialize apex when ``--using_apex`` is set, scale the loss only ``if is_distributed
and args.using_apex:``, run a plain ``loss.backward()`` in the ``else``, and step on one line
after that if-chain.  On a single-GPU apex run the GradScaler is enabled but nothing was
scaled: ``scaler.step`` there fails (``_scale`` is None), where apex's patched optimizer
stepped the plain gradients as they were.

The test is provably narrower than the switch when one of its ``and``-ed conditions is a
condition of the ``if`` around the initialize and another is not: some run of the switch
takes the plain branch.  Its step then goes under the scaling clause's test, as a shared step
(``_amp_shared_step``): ``if <test>: scaler.step(opt); scaler.update() else: opt.step()``.  A
test that shares no condition with the switch is taken to be the switch under another name
(``self.opt.fp16`` for ``opt.fp16``), as before.

The initialize is gone when the step rule runs, so the rule that sees it leaves the switch's
conditions in the file state (``SWITCH_KEY``) for the later ones.
"""

from __future__ import annotations

from typing import Any, FrozenSet, List, Optional

import libcst as cst

from ._edits import code_of

#: file-state key of the conditions of the ``if`` around the training initialize
SWITCH_KEY = "switch_conditions"


def conditions(test: cst.BaseExpression) -> List[str]:
    """The ``and``-ed conditions of ``test``, as source text without their parentheses."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not test.lpar:
        return conditions(test.left) + conditions(test.right)
    bare = test.with_changes(lpar=[], rpar=[]) if getattr(test, "lpar", None) else test
    return [code_of(bare).strip()]


def switch_conditions(parents: Any, ifs: List[cst.If], stmt: Any) -> Optional[FrozenSet[str]]:
    """The conditions under which ``stmt`` (the initialize) runs, from ``ifs`` (the ifs around
    it, innermost first); None when one of them holds it in an ``elif`` or ``else`` (a failed
    test is no condition of this kind)."""
    found: List[str] = []
    cur = stmt
    for owner in ifs:
        while parents.get(cur) is not owner:
            cur = parents.get(cur)
            if cur is None or isinstance(cur, cst.Else):
                return None
        if parents.get(owner) is not None and isinstance(parents.get(owner), cst.If):
            return None  # an elif
        found.extend(conditions(owner.test))
        cur = owner
    return frozenset(found)


def narrower(test: cst.BaseExpression, switch: Optional[FrozenSet[str]]) -> bool:
    """Whether ``test`` holds on fewer runs than the switch ``switch``: it shares one of the
    switch's conditions and adds one of its own."""
    if not switch:
        return False
    mine = set(conditions(test))
    return bool(mine & switch) and bool(mine - switch)
