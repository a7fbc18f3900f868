"""A setup loop around ``amp.initialize``: ``for i in range(n): models[i], opts[i] = amp.initialize(...)``.

apex replaced its loss scalers on every initialize, and nothing trains between the passes of a
loop whose body only initializes and stores the results, so one GradScaler made after that loop
(and after the ``if`` holding it) is exactly what the last pass left.  Such a loop is therefore
transparent when the rules climb from the initialize to the statement the scaler follows: the
scaler and its switch exist on every path, not only inside the loop (where a later read on the
fp32 path, or after a loop that ran no pass, would be a NameError).

A loop whose initialize options change from pass to pass (``opt_level=levels[i]``) cannot be
served by one scaler: it is refused with that reason.  Any other loop (one that trains, logs
through a call of its own, branches) is left to the rules as before.  The repository index
asks the same of its ``ast`` (``migrate/setup_loops.py``)."""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import libcst as cst

from ..setup_loops import SETUP_BUILTINS, SETUP_METHODS
from ._tree import walk


def option_args(call: cst.Call) -> List[cst.Arg]:
    """The initialize's arguments other than its models and optimizers (opt level, flags)."""
    return [
        a
        for i, a in enumerate(call.args)
        if (a.keyword is None and i >= 2) or (a.keyword is not None and a.keyword.value not in ("models", "optimizers"))
    ]


def option_values(call: cst.Call) -> List[cst.BaseExpression]:
    """The values of ``option_args``."""
    return [a.value for a in option_args(call)]


def _names(node: cst.CSTNode) -> Set[str]:
    return {n.value for n in walk(node) if isinstance(n, cst.Name)}


def _bound_in(loop: Any) -> Set[str]:
    """Names the loop binds: its target and whatever its body assigns."""
    bound = _names(loop.target) if isinstance(loop, cst.For) else set()
    for node in walk(loop.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                bound |= _names(target.target)
        elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
            bound |= _names(node.target)
    return bound


def _only_sets_up(loop: Any, call: cst.Call) -> bool:
    body = loop.body
    if loop.orelse is not None or not isinstance(body, cst.IndentedBlock):
        return False
    if not all(isinstance(stmt, cst.SimpleStatementLine) for stmt in body.body):
        return False
    for node in walk(body):
        if isinstance(node, (cst.Return, cst.Break, cst.Continue, cst.Raise, cst.Yield, cst.Global, cst.Nonlocal)):
            return False
        if not isinstance(node, cst.Call) or node is call:
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in SETUP_METHODS:
            continue
        if isinstance(func, cst.Name) and func.value in SETUP_BUILTINS:
            continue
        return False
    return True


def setup_loop(parents: Any, block: Any, call: cst.Call) -> Tuple[Optional[cst.BaseCompoundStatement], str]:
    """``(loop, "")`` when ``block`` is the body of a setup loop the scaler may climb out of;
    ``(None, reason)`` when it is one whose options change per pass; ``(None, "")`` otherwise."""
    loop = parents.get(block) if block is not None else None
    if not isinstance(loop, (cst.For, cst.While)) or loop.body is not block or not _only_sets_up(loop, call):
        return None, ""
    varying = sorted(set().union(*(_names(v) for v in option_values(call))) & _bound_in(loop))
    if varying:
        return None, (
            f"amp.initialize runs in a loop whose passes change its options ({', '.join(varying)}): "
            "one GradScaler cannot follow each pass"
        )
    return loop, ""
