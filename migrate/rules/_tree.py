"""Fast tree navigation for the rules: a node's children in source order and a pre-order
walk.

LibCST's ``CSTNode.children`` rebuilds the node through ``_visit_and_replace_children``
(a copy of every child, validated) just to list them, and ``ParentNodeProvider`` calls it
once per node: together about a quarter of a file's migration time.  Here each node class's
child fields are learnt once, in the order LibCST itself visits them, by letting that same
method report the attribute names without descending; afterwards listing children is a
field read.  A class that visits a field only when it is set (``format_spec`` of an f-string
expression) is learnt again from the first instance where that field is set.
"""

from __future__ import annotations

import dataclasses
import operator
import threading
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Tuple

import libcst as cst

_UNSET = (None, cst.MaybeSentinel.DEFAULT, ())


class _ChildFields(NamedTuple):
    #: node -> the values of its visited fields, in visiting order
    read: Callable[[Any], Tuple[Any, ...]]
    #: fields LibCST skipped because they were unset on the node the order was learnt from
    unset: Tuple[str, ...]
    order: Tuple[str, ...]


class _FieldRecorder(cst.CSTVisitor):
    """Notes the attribute names LibCST visits on one node, without going below it."""

    def __init__(self, node: cst.CSTNode) -> None:
        super().__init__()
        self.node = node
        self.fields: List[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if node is self.node:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


_FIELDS: Dict[type, _ChildFields] = {}


def _reader(order: Tuple[str, ...]) -> Callable[[Any], Tuple[Any, ...]]:
    if len(order) > 1:
        return operator.attrgetter(*order)  # type: ignore[return-value]
    if order:
        get = operator.attrgetter(order[0])
        return lambda node: (get(node),)
    return lambda node: ()


def _learn(node: cst.CSTNode) -> _ChildFields:
    recorder = _FieldRecorder(node)
    node._visit_and_replace_children(recorder)
    cls = type(node)
    known = _FIELDS[cls].order if cls in _FIELDS else ()
    order = tuple(recorder.fields) + tuple(f for f in known if f not in recorder.fields)
    unset = tuple(
        f.name
        for f in dataclasses.fields(node)  # type: ignore[arg-type]
        if f.name not in order and getattr(node, f.name) in _UNSET
    )
    fields = _FIELDS[cls] = _ChildFields(_reader(order), unset, order)
    return fields


def children(node: cst.CSTNode) -> List[cst.CSTNode]:
    """``node.children``: the same nodes in the same (source) order, without copying."""
    fields = _FIELDS.get(type(node))
    if fields is None:
        fields = _learn(node)
    for name in fields.unset:
        value = getattr(node, name)
        if value is not None and value is not cst.MaybeSentinel.DEFAULT and value != ():
            fields = _learn(node)
            break
    found: List[cst.CSTNode] = []
    for value in fields.read(node):
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif type(value) is tuple or type(value) is list:
            found.extend(c for c in value if isinstance(c, cst.CSTNode))
    return found


_last_walks = threading.local()


def walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself included), in source order.  A whole module's nodes
    are remembered (per thread, for the last two modules): the rules walk the same tree
    dozens of times, and a walk costs far more than reading a list."""
    if not isinstance(node, cst.Module):
        return _walk(node)
    walks = getattr(_last_walks, "entries", None)
    if walks is None:
        walks = _last_walks.entries = []
    for module, nodes in walks:
        if module is node:
            return iter(nodes)
    nodes = tuple(_walk(node))
    walks[:] = [(node, nodes)] + walks[:1]
    return iter(nodes)


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(children(cur)))


_last_code = threading.local()


def remember_code(tree: cst.Module, text: bytes) -> None:
    """Tell ``module_code`` the text ``tree`` was just parsed from, so it need not print it
    (not for text holding a carriage return: LibCST may not give a lone one back)."""
    if b"\r" not in text:
        _last_code.tree = tree
        _last_code.code = text.decode(tree.encoding)


def module_code(tree: cst.Module) -> str:
    """``tree.code``, remembered (per thread) for the last tree: the rules that skip a file
    pass the same object on, and printing a big module costs as much as a walk over it."""
    if getattr(_last_code, "tree", None) is not tree:
        _last_code.tree = tree
        _last_code.code = tree.code
    return _last_code.code
