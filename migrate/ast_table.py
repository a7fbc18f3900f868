"""Every node of one stdlib ``ast`` tree in pre-order, with parent links and subtree ends,
from a single pass.

The index reads each file's tree many times over: a walk of every function for its
parameters' uses, of every scope for its bindings, a parent map, ...  ``ast.walk`` and
``ast.iter_child_nodes`` build generators field by field, and over a repository those walks
cost more than parsing.  Here one pass lists the nodes; a subtree is then a slice of that
list (``under``), in pre-order (source order), where ``ast.walk`` goes breadth-first:
callers that use it must not depend on the order of what they collect.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Dict, List, Optional, Tuple

#: node class -> its fields (``_fields``), read once per class
_FIELDS: Dict[type, Tuple[str, ...]] = {}
#: fields that never hold a node to list, in any class: names and flags, and the fields
#: holding the nodes the parser shares between all their uses (``ast.Load()`` in ``ctx``,
#: the operators in ``op`` and ``ops``): no walk of the index looks for those, and a shared
#: node has no one parent; every other value that is a node is listed
_PLAIN_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "module", "level", "conversion", "is_async", "type_comment", "asname", "tag"}
)


def _node_fields(kind: type) -> Tuple[str, ...]:
    """The fields of ``kind`` that may hold nodes to list."""
    if kind is ast.Constant:
        return ()
    return tuple(f for f in kind._fields if f not in _PLAIN_FIELDS)


_AST = ast.AST


def child_nodes(node: ast.AST) -> List[ast.AST]:
    """``list(ast.iter_child_nodes(node))`` less the parser's shared nodes and the values of
    the plain fields (``_PLAIN_FIELDS``), in field order."""
    kind = type(node)
    fields = _FIELDS.get(kind)
    if fields is None:
        fields = _FIELDS[kind] = _node_fields(kind)
    children: List[ast.AST] = []
    add = children.append
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            for item in value:  # names of ``global``, a dict's ``**`` (None): no nodes
                if isinstance(item, _AST):
                    add(item)
        elif isinstance(value, _AST):
            add(value)
    return children


def walk_nodes(node: ast.AST) -> List[ast.AST]:
    """``node`` and every node below it (``child_nodes``), in pre-order: the nodes of
    ``ast.walk(node)`` but for the parser's shared ones, in another order."""
    found: List[ast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        children = child_nodes(current)
        children.reverse()
        stack.extend(children)
    return found


#: the classes whose nodes open a scope of their own
SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
#: what a field's list may hold that holds statements (``match`` cases from Python 3.10)
STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler) + ((ast.match_case,) if hasattr(ast, "match_case") else ())


class NodeTable:
    """The nodes of ``tree`` in pre-order (``nodes``), each one's parent (``parents``) and
    where its subtree ends in ``nodes``."""

    def __init__(self, tree: ast.AST) -> None:
        nodes: List[ast.AST] = []
        parent_index: List[int] = []
        parents: Dict[ast.AST, ast.AST] = {}
        stack: List[Tuple[ast.AST, int]] = [(tree, -1)]
        pop, push, listed, up_of, field_sets = stack.pop, stack.append, nodes.append, parent_index.append, _FIELDS.get
        AST = ast.AST
        while stack:
            node, up = pop()
            here = len(nodes)
            listed(node)
            up_of(up)
            # ``child_nodes`` inline: a call per node made the index's tables a fifth slower
            kind = type(node)
            fields = field_sets(kind)
            if fields is None:
                fields = _FIELDS[kind] = _node_fields(kind)
            children: List[ast.AST] = []
            for name in fields:
                value = getattr(node, name, None)
                if type(value) is list:
                    for item in value:  # names of ``global``, a dict's ``**`` (None): no nodes
                        if isinstance(item, AST):
                            children.append(item)
                elif isinstance(value, AST):
                    children.append(value)
            for child in reversed(children):
                parents[child] = node
                push((child, here))
        sizes = [1] * len(nodes)
        for index in range(len(nodes) - 1, 0, -1):
            sizes[parent_index[index]] += sizes[index]
        self.nodes = nodes
        self.parents = parents
        self._index: Dict[int, int] = {id(node): index for index, node in enumerate(nodes)}
        self._sizes = sizes

    def span(self, node: ast.AST) -> Optional[Tuple[int, int]]:
        """Where ``node``'s subtree lies in ``nodes`` (start, end); None for a node of another tree."""
        index = self._index.get(id(node))
        if index is None or self.nodes[index] is not node:
            return None
        return index, index + self._sizes[index]

    def under(self, node: ast.AST) -> List[ast.AST]:
        """``node`` and every node below it, in pre-order."""
        span = self.span(node)
        if span is None:
            return list(ast.walk(node))
        return self.nodes[span[0] : span[1]]

    def own_nodes(self, scope: ast.AST) -> List[ast.AST]:
        """The nodes below ``scope`` outside the functions, classes and lambdas defined in it
        (those nodes themselves left out too)."""
        span = self.span(scope)
        if span is None:
            return []
        nodes, sizes = self.nodes, self._sizes
        found: List[ast.AST] = []
        index, end = span[0] + 1, span[1]
        while index < end:
            node = nodes[index]
            if isinstance(node, SCOPE_NODES):
                index += sizes[index]
                continue
            found.append(node)
            index += 1
        return found


#: (visitor class, node class) -> the method that visits such a node
_DISPATCH: Dict[Tuple[type, type], Callable[[Any, ast.AST], Any]] = {}


class FastNodeVisitor(ast.NodeVisitor):
    """``ast.NodeVisitor`` with its dispatch looked up once per visitor class and node class
    (the stdlib formats the method name and looks it up on every node), and a
    ``generic_visit`` over the fields that may hold nodes.  The parser's shared nodes
    (``ast.Load()``, the operators) are not visited: a subclass must not define
    ``visit_Load``, ``visit_Add`` and the like."""

    def visit(self, node: ast.AST) -> Any:
        key = (type(self), type(node))
        method = _DISPATCH.get(key)
        if method is None:
            method = _DISPATCH[key] = getattr(key[0], "visit_" + key[1].__name__, key[0].generic_visit)
        return method(self, node)

    def visit_Constant(self, node: ast.Constant) -> None:
        """Nothing below a constant: the stdlib's own method looks for the deprecated
        ``visit_Num``, ``visit_Str`` ... on every constant (no subclass defines those)."""

    def generic_visit(self, node: ast.AST) -> None:
        kind = type(node)
        fields = _FIELDS.get(kind)
        if fields is None:
            fields = _FIELDS[kind] = _node_fields(kind)
        for name in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)
