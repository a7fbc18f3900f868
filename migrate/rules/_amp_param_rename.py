"""The parameter that received apex.amp and now carries the GradScaler gets the scaler's name.

``def train(model, optimizer, amp): ... amp.scale(loss).backward()`` reads as apex although
``amp`` is a ``torch.amp.GradScaler`` by then (the ``_amp_param`` route, APX230).  Once every
rule ran, the parameter, its reads in the function and the ``amp=`` keyword of the file's
calls are renamed ``scaler``: a pure rename, done only when the function reads no ``scaler``
already and no nested scope, ``global`` or ``nonlocal`` in it names either name (the route
already refused functions that rebind the parameter or are called from other files).
"""

from __future__ import annotations

from typing import Any, Dict, List

import libcst as cst

from ._amp_carrier import is_reference
from ._tree import walk

#: the name the renamed parameter gets
SCALER = "scaler"


def renamed_scaler_parameters(rule: Any, module: cst.Module) -> Dict[cst.CSTNode, cst.CSTNode]:
    """node -> its replacement, renaming each module-level function's parameter that the
    initialize rule handed the GradScaler (``file_state()["scaler_parameters"]``)."""
    carried: Dict[str, str] = rule.file_state().get("scaler_parameters", {})
    edits: Dict[cst.CSTNode, cst.CSTNode] = {}
    for func in module.body:
        if not isinstance(func, cst.FunctionDef):
            continue
        old = carried.get(func.name.value)
        if old is None or old == SCALER or not _renamable(func, old):
            continue
        calls = _calls_of(rule.parents, module, func.name.value)
        if calls is None:
            continue
        for node in walk(func):
            if isinstance(node, cst.Name) and node.value == old:
                parent = rule.parents.get(node)
                if is_reference(rule.parents, node) or (isinstance(parent, cst.Param) and parent.name is node):
                    edits[node] = node.with_changes(value=SCALER)
        for call in calls:
            for arg in call.args:
                if arg.keyword is not None and arg.keyword.value == old:
                    edits[arg.keyword] = arg.keyword.with_changes(value=SCALER)
    return edits


def _renamable(func: cst.FunctionDef, old: str) -> bool:
    """``old`` is one of ``func``'s own parameters, no nested scope or scope declaration in it
    names ``old`` or ``scaler``, and ``scaler`` occurs nowhere in it."""
    if old not in {p.name.value for p in func.params.params}:
        return False
    if any(isinstance(n, cst.Name) and n.value == SCALER for n in walk(func.params)):
        return False  # a parameter (or a default) already named so
    for node in walk(func.body):
        if isinstance(node, cst.Name) and node.value == SCALER:
            return False
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Global, cst.Nonlocal)):
            if any(isinstance(n, cst.Name) and n.value in (old, SCALER) for n in walk(node)):
                return False
    return True


def _calls_of(parents: Any, module: cst.Module, name: str) -> List[cst.Call] | None:
    """The file's calls of ``name``; None when it is also read another way (passed on,
    wrapped in a partial), where a keyword could reach it unseen."""
    calls: List[cst.Call] = []
    reads = 0
    for node in walk(module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
            calls.append(node)
        elif isinstance(node, cst.Name) and node.value == name and is_reference(parents, node):
            reads += 1  # ``model.train()`` or ``f(train=...)`` name something else
    # every reference is a call's callee (the definition's own name is no reference)
    return calls if reads == len(calls) else None
