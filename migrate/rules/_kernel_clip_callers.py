"""Whether every call of a kernel-spelled clip gets unscaled gradients once it is torch's.

apex's clip ran on what ``amp.scale_loss`` left, the unscaled gradients; torch's clip must
follow a ``scaler.unscale_``, which the clipping rule puts before a call it sees reading
gradients: one given ``amp.master_params(...)`` or ``x.parameters()``.  The calls are found in
the clip's own file (a script: the callers of a module's clip in other files are not followed).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set

import libcst as cst

from ._edits import code_of
from ._tree import children, walk, walk_of


def callers_unscale(module: cst.Module, func: cst.FunctionDef, owner: Optional[cst.ClassDef]) -> Optional[str]:
    """Why the callers of ``func`` may hand it scaled gradients, or None.  apex's clip ran on
    what amp.scale_loss left, the unscaled gradients; torch's clip must follow a
    ``scaler.unscale_``, which the clipping rule puts before a call it sees reading
    gradients: one given ``amp.master_params(...)`` or ``x.parameters()``.  So every call of
    ``func`` in this file must be such a call (for a method: on an instance the file binds,
    ``clipper = Clipper(...)``, and uses only through its attributes), and the file must be a
    script (``if __name__ == "__main__":``): the callers of a module's clip in other files are
    not followed."""
    parents = {id(child): node for node in walk(module) for child in children(node)}
    if owner is not None:
        calls = _method_calls(module, owner, func, parents)
    else:
        calls = _function_calls(module, func, parents)
    if isinstance(calls, str):
        return calls
    amp_names = _apex_amp_names(module)
    for call in calls:
        if not any(_reads_gradients(arg.value, amp_names) for arg in call.args):
            return (
                f"{code_of(call.func).strip()}(...) is not given amp.master_params(...) or x.parameters(), so the "
                "scaler.unscale_ that must come before torch's clip is not proven there"
            )
    if not _is_script(module):
        name = owner.name.value if owner is not None else func.name.value
        return f"this file is no script (no `if __name__ == \"__main__\":`), so other files may call {name}: they are not followed"
    return None


def _function_calls(
    module: cst.Module, func: cst.FunctionDef, parents: Dict[int, cst.CSTNode]
) -> "List[cst.Call] | str":
    name = func.name.value
    calls: List[cst.Call] = []
    for node in walk(module):
        if isinstance(node, cst.Name) and node.value == name and node is not func.name:
            call = parents.get(id(node))
            if not (isinstance(call, cst.Call) and call.func is node):
                return f"{name} is used other than called, so its callers are not known"
            calls.append(call)
    return calls


def _method_calls(
    module: cst.Module, owner: cst.ClassDef, func: cst.FunctionDef, parents: Dict[int, cst.CSTNode]
) -> "List[cst.Call] | str":
    """The calls of the method ``func`` on the instances of ``owner`` bound in this file."""
    cls, method = owner.name.value, func.name.value
    instances: Set[str] = set()
    for node in walk(module):
        if not (isinstance(node, cst.Name) and node.value == cls and node is not owner.name):
            continue
        call = parents.get(id(node))
        assign = parents.get(id(call)) if isinstance(call, cst.Call) and call.func is node else None
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and assign.value is call):
            return f"{cls} is used other than built into a name (`x = {cls}(...)`), so its instances are not followed"
        instances.add(code_of(assign.targets[0].target).strip())
    calls: List[cst.Call] = []
    for node in walk_of(module, cst.Name, cst.Attribute):
        if code_of(node).strip() not in instances:
            continue
        parent = parents.get(id(node))
        if isinstance(parent, cst.AssignTarget) or (isinstance(parent, cst.Attribute) and parent.attr is node):
            continue
        if not (isinstance(parent, cst.Attribute) and parent.value is node):
            return f"the {cls} instance {code_of(node).strip()} is handed on, so the calls of its {method}() are not known"
        if parent.attr.value != method:
            continue
        call = parents.get(id(parent))
        if not (isinstance(call, cst.Call) and call.func is parent):
            return f"{code_of(parent).strip()} is used other than called, so its callers are not known"
        calls.append(call)
    return calls


def _reads_gradients(value: cst.BaseExpression, amp_names: Set[str]) -> bool:
    for node in walk(value):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value in ("parameters", "named_parameters"):
                return True
            if node.func.attr.value == "master_params" and code_of(node.func.value).strip() in amp_names:
                return True
    return False


def _apex_amp_names(module: cst.Module) -> Set[str]:
    """How the file spells apex.amp anywhere (``amp`` after ``from apex import amp``): the
    calling functions may lie outside the statements whose names the rule resolves."""
    names: Set[str] = set()
    for node in walk(module):
        if isinstance(node, cst.ImportFrom) and node.module is not None and code_of(node.module).strip() == "apex":
            if isinstance(node.names, cst.ImportStar):
                names.add("amp")
                continue
            for alias in node.names:
                if code_of(alias.name).strip() == "amp":
                    names.add(code_of(alias.asname.name).strip() if alias.asname else "amp")
        elif isinstance(node, cst.Import):
            for alias in node.names:
                name = code_of(alias.name).strip()
                if name in ("apex", "apex.amp"):
                    names.add(code_of(alias.asname.name).strip() if alias.asname else "apex.amp")
    return names


def _is_script(module: cst.Module) -> bool:
    """An ``if __name__ == "__main__":`` at the top level."""
    for stmt in module.body:
        if isinstance(stmt, cst.If) and " ".join(code_of(stmt.test).replace("'", '"').split()) == '__name__ == "__main__"':
            return True
    return False
