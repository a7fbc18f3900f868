"""Branches that run only on a torch older than the one the migrated code needs.

``if LooseVersion(torch.__version__) >= LooseVersion("1.6.0"): scaler = GradScaler() else:
model, opt = amp.initialize(...)``: apex.amp sits in the ``else``, which no torch the native
rewrite runs on (``Settings.target_torch`` and newer) ever takes.  Only a comparison of
``torch.__version__`` wrapped in a call (``LooseVersion``, ``version.parse``, ...) with a call
on one string literal counts: a bare string comparison orders ``"1.10"`` before ``"1.6"``.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Optional, Tuple

import libcst as cst

from ._edits import code_of

_FLIPPED = {">=": "<=", ">": "<", "<=": ">=", "<": ">"}


def old_torch_branch(parents: Dict[Any, Any], node: cst.CSTNode, target: Tuple[int, int]) -> Optional[cst.If]:
    """The innermost ``if`` around ``node`` whose version test sends ``node`` down the branch
    a torch of version ``target`` or newer never takes; None when there is none."""
    child, current = node, parents.get(node)
    while current is not None:
        if isinstance(current, cst.If) and child in (current.body, current.orelse):
            new_torch = newer_torch_passes(current.test, target)
            in_body = child is current.body
            if new_torch is not None and new_torch != in_body and isinstance(child, (cst.IndentedBlock, cst.Else)):
                return current
        child, current = current, parents.get(current)
    return None


def newer_torch_passes(test: cst.BaseExpression, target: Tuple[int, int]) -> Optional[bool]:
    """What ``test`` gives on every torch from ``target`` on; None when it is no such version
    test or the answer depends on the version."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    target_side = test.comparisons[0]
    operator = code_of(target_side.operator).strip()
    left, right = test.left, target_side.comparator
    if _reads_torch_version(right):
        left, right, operator = right, left, _FLIPPED.get(operator, "")
    if operator not in _FLIPPED or not _reads_torch_version(left):
        return None
    bound = _literal_version(right)
    if bound is None:
        return None
    if bound >= target:
        return None  # (a patch level is not read: ">= 2.4.1" is not always true on 2.4)
    return operator in (">=", ">")


def _reads_torch_version(node: cst.BaseExpression) -> bool:
    return (
        isinstance(node, cst.Call)
        and len(node.args) == 1
        and code_of(node.args[0].value).replace(" ", "") == "torch.__version__"
    )


def _literal_version(node: cst.BaseExpression) -> Optional[Tuple[int, int]]:
    if not isinstance(node, cst.Call) or len(node.args) != 1 or not isinstance(node.args[0].value, cst.SimpleString):
        return None
    match = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*", node.args[0].value.evaluated_value)
    return (int(match.group(1)), int(match.group(2))) if match else None
