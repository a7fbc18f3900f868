"""An ``amp.initialize`` whose optimizer argument is a name an enclosing ``if`` proves None.

A setup helper that serves training and evaluation alike (LightningDOT's
``setup_for_distributed_mode(model, optimizer, ...)``) initializes under ``if optimizer is
None:`` with that very name: apex returns the models alone there (no optimizer, no loss
scaler is used), so the call is an inference initialize, as ``amp.initialize(model, None)``
is.  Read as a training one it would be rewritten ``model = model, optimizer``, a tuple.

The proof is local: the initialize is in the body of ``if X is None:`` (or in the ``else``,
an ``elif`` included, of ``if X is not None:``), within its own function, and that block
never rebinds ``X``.  The index makes the same decision on the stdlib tree
(``repo_index.none_in_block``).
"""

from __future__ import annotations

from typing import Any

import libcst as cst

from ._tree import walk


def proven_none(parents: Any, node: cst.CSTNode, name: str) -> bool:
    """Whether an ``if`` around ``node`` (inside its function) proves ``name`` None there."""
    child, cur = node, parents.get(node)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(cur, cst.If) and (child is cur.body or child is cur.orelse):
            in_body = child is cur.body
            if _tested_none(cur.test, in_body) == name and not _rebinds(child, name):
                return True
        child, cur = cur, parents.get(cur)
    return False


def _tested_none(test: cst.BaseExpression, in_body: bool) -> str:
    """``X`` for ``X is None`` (``in_body``) or ``X is not None`` (its else); else ""."""
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name)):
        return ""
    target = test.comparisons[0]
    if not (isinstance(target.comparator, cst.Name) and target.comparator.value == "None"):
        return ""
    if not isinstance(target.operator, cst.Is if in_body else cst.IsNot):
        return ""
    return test.left.value


def _rebinds(block: cst.CSTNode, name: str) -> bool:
    """Whether ``block`` assigns, imports or declares ``name`` anywhere in it."""
    for node in walk(block):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            targets = walk(node.target)
        elif isinstance(node, cst.AsName):
            targets = walk(node.name)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            targets = [item.name for item in node.names]
        else:
            continue
        if any(isinstance(n, cst.Name) and n.value == name for n in targets):
            return True
    return False
