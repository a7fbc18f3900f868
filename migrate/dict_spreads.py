"""Where a ``dict(...)`` built in a function ends up when it is only spread into calls.

A launcher may hand apex.amp to a checkpointer among other objects to save
(``extra = dict(optimizer=optimizer)``, ``extra.update(dict(amp=amp))``, then
``Checkpointer(model, path, **extra)``): the amp module reaches the keyword parameters of
the calls the dict is spread into.  For each ``dict(...)`` call of a function that is bound
to a local name (``extra = dict(...)``) or merged into one (``extra.update(dict(...))``),
and the local is used for nothing but more such merges and ``**extra`` in calls, this gives
the names of those calls (plain names: an imported class or function).  Pure data, read
from the stdlib AST of one file.
"""

from __future__ import annotations

import ast
from typing import Dict, Optional, Tuple

from .ast_table import NodeTable


def read_dict_spreads(table: NodeTable) -> Dict[int, Tuple[str, ...]]:
    """``dict(...)`` call line -> the names of the calls its local is spread into (only
    where every use of that local is proven so; a local spread nowhere gives ()); ``table``:
    the file's nodes."""
    found: Dict[int, Tuple[str, ...]] = {}
    parents = table.parents
    for func in table.nodes:
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in table.under(func):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"):
                continue
            local = _local_of(node, parents)
            if local is None:
                continue
            spreads = _spreads_of(local, func, table)
            if spreads is not None:
                found[node.lineno] = spreads
    return found


def _local_of(call: ast.Call, parents) -> Optional[str]:
    """``x = dict(...)`` or ``x.update(dict(...))`` as a statement: ``x``."""
    parent = parents.get(call)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    if _merge_into(parent, parents) is not None and parent.args == [call]:
        return _merge_into(parent, parents)
    return None


def _merge_into(call: Optional[ast.AST], parents) -> Optional[str]:
    """``x.update(...)`` as a statement: ``x``."""
    if (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "update"
        and isinstance(call.func.value, ast.Name)
        and not call.keywords
        and isinstance(parents.get(call), ast.Expr)
    ):
        return call.func.value.id
    return None


def _spreads_of(local: str, func: ast.AST, table: NodeTable) -> Optional[Tuple[str, ...]]:
    """The names of the calls ``**local`` is spread into in ``func``, or None when ``local``
    is used any other way (or bound to anything but a ``dict(...)`` / ``{...}``)."""
    calls = []
    parents = table.parents
    for node in table.under(func):
        if not (isinstance(node, ast.Name) and node.id == local):
            continue
        parent = parents.get(node)
        if isinstance(node.ctx, ast.Store):
            if not (
                isinstance(parent, ast.Assign)
                and (isinstance(parent.value, ast.Dict) or (
                    isinstance(parent.value, ast.Call)
                    and isinstance(parent.value.func, ast.Name)
                    and parent.value.func.id == "dict"
                ))
            ):
                return None
            continue
        if isinstance(parent, ast.Attribute) and _merge_into(parents.get(parent), parents) == local:
            continue
        holder = parents.get(parent) if isinstance(parent, ast.keyword) else None
        if isinstance(parent, ast.keyword) and parent.arg is None and isinstance(holder, ast.Call):
            if not isinstance(holder.func, ast.Name):
                return None
            calls.append(holder.func.id)
            continue
        return None
    return tuple(sorted(set(calls)))
