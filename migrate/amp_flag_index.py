"""The index's view of ``rules/_amp_flag_param``: module-level functions whose parameter
is apex.amp (or None) used as an on/off flag, initialized under its own test.

``def prepare(args, model, state, amp): ... if amp: model, opt = amp.initialize(...)``,
called in the same file as ``prepare(..., amp=amp)`` where ``amp`` is bound by ``from apex
import amp``: the parameter's members are apex.amp's there, so the index counts that
initialize (and the helper's other amp members) as this file's amp sites, as the rules do.
Read on the stdlib tree before the visit (the calls may come after the definition); the
rules prove the rest (how the caller binds the name) and refuse otherwise, the file then
keeping the shim.
"""

from __future__ import annotations

import ast
from typing import Dict, Set

from .ast_table import NodeTable

AMP_MODULES = ("apex.amp", "apexcompat.amp")


def flag_parameters(table: NodeTable) -> Dict[str, str]:
    """module-level function -> its parameter read as apex.amp (see above), in the module
    whose nodes ``table`` lists."""
    amp_names = _amp_import_names(table)
    if not amp_names:
        return {}
    found: Dict[str, str] = {}
    calls = [n for n in table.nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    called = {c.func.id for c in calls}  # type: ignore[attr-defined]
    for func in table.nodes[0].body:  # type: ignore[attr-defined]
        if not isinstance(func, ast.FunctionDef) or func.decorator_list or func.name not in called:
            continue
        initialized = _initialize_receivers(table, func)
        positional = [a.arg for a in func.args.posonlyargs + func.args.args]
        for index, param in enumerate(positional):
            if param not in initialized or not _initialized_under_its_test(table, func, param):
                continue
            given = [_argument(c, index, param) for c in calls if c.func.id == func.name]  # type: ignore[attr-defined]
            if given and all(isinstance(g, ast.Name) and g.id in amp_names for g in given):
                found[func.name] = param
                break
    return found


def _amp_import_names(table: NodeTable) -> Set[str]:
    """The names any ``from apex import amp [as x]`` of the file binds."""
    names: Set[str] = set()
    for node in table.nodes:
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.update(a.asname or a.name for a in node.names if f"{node.module}.{a.name}" in AMP_MODULES)
    return names


def _argument(call: ast.Call, index: int, name: str):
    """The argument ``call`` gives parameter ``name`` at position ``index`` (None: none, or
    after a star)."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value
    if any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return None
    return call.args[index] if index < len(call.args) else None


def _initialize_receivers(table: NodeTable, func: ast.FunctionDef) -> Set[str]:
    """The names ``func`` calls ``.initialize``/``.init`` on (``amp.initialize(...)``)."""
    return {
        node.func.value.id
        for node in table.under(func)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("initialize", "init")
        and isinstance(node.func.value, ast.Name)
    }


def _initialized_under_its_test(table: NodeTable, func: ast.FunctionDef, name: str) -> bool:
    """``func`` calls ``name.initialize``/``name.init`` and reads ``name`` only as the whole
    test of an ``if`` or as the object of a member in the body of such an ``if``; it never
    binds it again, and no nested scope reads it."""
    parents = table.parents
    initializes = False
    for node in table.under(func):
        if node is not func and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            if any(isinstance(n, ast.Name) and n.id == name for n in table.under(node)):
                return False
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        parent = parents.get(node)
        if isinstance(parent, ast.If) and parent.test is node:
            continue
        if not (isinstance(parent, ast.Attribute) and parent.value is node and _under_test(parents, node, func, name)):
            return False
        call = parents.get(parent)
        initializes |= isinstance(call, ast.Call) and call.func is parent and parent.attr in ("initialize", "init")
    return initializes


def _under_test(parents: Dict[ast.AST, ast.AST], node: ast.AST, func: ast.FunctionDef, name: str) -> bool:
    """Whether ``node`` is in the body (not the ``else``) of an ``if name:`` of ``func``."""
    child, cur = node, parents.get(node)
    while cur is not None and cur is not func:
        if isinstance(cur, ast.If) and child in cur.body and isinstance(cur.test, ast.Name) and cur.test.id == name:
            return True
        child, cur = cur, parents.get(cur)
    return False
