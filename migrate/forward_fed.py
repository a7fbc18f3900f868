"""Calls that hand an update method what the receiver's own ``forward()`` returned.

A trainer module may run its models in ``forward()`` and compute the losses in update
methods the training script calls with those outputs::

    x_ab, x_ba, s_a = trainer.forward(images_a, images_b)
    trainer.dis_update(x_ab.clone(), x_ba.clone(), images_a, images_b)
    trainer.gen_update(x_ab, x_ba, s_a, images_a, images_b)

Under apex O1 every one of those model calls ran with its casts, wherever it was.  Natively
the update method's own forward passes get autocast where its losses are scaled, and the
outputs it is handed are under autocast only when ``forward()`` itself is.  Wrapping
``forward()`` is right for those outputs only when every call of the update method hands
over what ``forward()`` returned: this module records, for each call ``R.method(...)`` (also
``R.module.method(...)``), which of its arguments are names the calling scope binds only from
``R.forward(...)``, ``R.module.forward(...)`` or ``R(...)`` (or ``.clone()`` / ``.detach()`` of
such a name).
"""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .ast_table import SCOPE_NODES, NodeTable

#: per argument: its key (the position as text, or the keyword) and whether it is forward's
HandedArgs = Tuple[Tuple[str, bool], ...]
#: methods that give a tensor of the same values and dtype back
_SAME_VALUES = frozenset({"clone", "detach"})


def handed_calls(table: NodeTable) -> Dict[str, List[HandedArgs]]:
    """Method name -> the arguments of each call of it on some receiver, each marked with
    whether it is a name bound only from that receiver's forward pass in the calling scope
    (``table``: the file's nodes)."""
    found: Dict[str, List[HandedArgs]] = {}
    # the module and every function, class body and lambda in it: together their own
    # nodes are every node of the file, so no call is missed
    for scope in [table.nodes[0]] + [n for n in table.nodes if isinstance(n, SCOPE_NODES)]:
        statements = table.own_nodes(scope)
        bindings: Optional[Dict[str, List[Optional[ast.expr]]]] = None  # read at the first name handed
        for node in statements:
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            root = _receiver_root(node.func.value)
            if root is None:
                continue
            if bindings is None and any(_handed_name(a, root) for a in node.args + [k.value for k in node.keywords]):
                bindings = _bindings(scope, statements, table)
            args: List[Tuple[str, bool]] = []
            for index, arg in enumerate(node.args):
                if isinstance(arg, ast.Starred):
                    args.append(("*", False))
                    break
                args.append((str(index), bindings is not None and _fed(arg, root, bindings)))
            for keyword in node.keywords:
                args.append((keyword.arg or "**", keyword.arg is not None and bindings is not None
                             and _fed(keyword.value, root, bindings)))
            found.setdefault(node.func.attr, []).append(tuple(args))
    return found


def _bindings(scope: ast.AST, nodes: List[ast.AST], table: NodeTable) -> Dict[str, List[Optional[ast.expr]]]:
    """Name -> what each binding in the scope assigns it: the right-hand side of a plain or
    unpacking assignment, None for any other binding (a parameter, a loop target, ...)."""
    out: Dict[str, List[Optional[ast.expr]]] = {}
    if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        params = scope.args
        for arg in params.posonlyargs + params.args + params.kwonlyargs + [params.vararg, params.kwarg]:
            if arg is not None:
                out.setdefault(arg.arg, []).append(None)
    assigned = {id(sub) for node in nodes if isinstance(node, ast.Assign) for t in node.targets for sub in table.under(t)}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                for name, whole in _target_names(target):
                    out.setdefault(name, []).append(node.value if whole else None)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in assigned:
            out.setdefault(node.id, []).append(None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                out.setdefault(name, []).append(None)
    return out


def _target_names(target: ast.expr) -> Iterator[Tuple[str, bool]]:
    """The names an assignment target binds, each with whether it takes (a part of) the
    right-hand side as it is: a plain name or an element of a tuple/list unpacking."""
    if isinstance(target, ast.Name):
        yield target.id, True
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            if isinstance(element, ast.Starred):
                yield from ((name, False) for name, _whole in _target_names(element.value))
            else:
                yield from _target_names(element)


def _receiver_root(node: ast.expr) -> Optional[str]:
    """``trainer`` of ``trainer`` or ``trainer.module``; None for anything else."""
    if isinstance(node, ast.Attribute) and node.attr == "module":
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _handed_name(arg: ast.expr, root: str) -> Optional[ast.Name]:
    """The name ``arg`` hands on as it is (``x``, ``x.clone()``, ``x.detach()``), but the
    receiver ``root``; None for anything else (not forward's output, whatever the bindings)."""
    while (
        isinstance(arg, ast.Call)
        and isinstance(arg.func, ast.Attribute)
        and arg.func.attr in _SAME_VALUES
        and not arg.args
        and not arg.keywords
    ):
        arg = arg.func.value
    if not isinstance(arg, ast.Name) or arg.id == root:
        return None
    return arg


def _fed(arg: ast.expr, root: str, bindings: Dict[str, List[Optional[ast.expr]]]) -> bool:
    name = _handed_name(arg, root)
    if name is None:
        return False
    values = bindings.get(name.id, [])
    return bool(values) and all(value is not None and _is_forward_of(value, root) for value in values)


def _is_forward_of(value: ast.expr, root: str) -> bool:
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id == root
    return isinstance(func, ast.Attribute) and func.attr == "forward" and _receiver_root(func.value) == root


def forward_fed(handed: List[Tuple[int, str]], calls: List[HandedArgs]) -> bool:
    """Whether every call in ``calls`` (at least one) hands each parameter of ``handed``
    (its position after ``self``, its name) a forward output, by position or by keyword."""
    if not calls:
        return False
    for call in calls:
        marks = dict(call)
        if "*" in marks or "**" in marks:
            return False
        for index, name in handed:
            if not marks.get(str(index), marks.get(name, False)):
                return False
    return True


def calls_in_repository(methods: List[str], by_path: Dict[str, Any], unindexed: Dict[str, Tuple[str, bytes]],
                        definitions: Any) -> Dict[str, List[HandedArgs]]:
    """The calls of each of ``methods`` in every walked file (the files without apex are read
    only where their text calls it); a file that does not parse counts as one call that hands
    nothing proven."""
    found: Dict[str, List[HandedArgs]] = {m: [] for m in methods}
    for summary in by_path.values():
        for method in methods:
            found[method] += summary.handed_calls.get(method, [])
    for path, (_shown, source) in sorted(unindexed.items()):
        wanted = [m for m in methods if re.search(rb"\." + re.escape(m.encode()) + rb"\s*\(", source)]
        if not wanted:
            continue
        summary = definitions.summary(path)
        for method in wanted:
            found[method] += summary.handed_calls.get(method, []) if summary is not None else [(("?", False),)]
    return found
