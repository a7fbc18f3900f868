"""``node.visit(visitor)`` for the rules and the scope analysis, without copying what did
not change.

LibCST's traversal makes a new copy of every node it passes (each node class's
``_visit_and_replace_children`` calls its constructor, which validates), and calls the
visitor's four hooks on every node and field, although a rule changes a handful of nodes
and defines a handful of hooks: over a file's rules that was most of their time.

``transform`` makes the same calls in the same order, with the same results, except:
a node none of whose children changed is handed to ``on_leave`` as it is (LibCST hands a
fresh copy with the same fields), so an untouched subtree comes out as the very same
objects; and a hook the visitor class leaves to LibCST's no-op stub is not called.
``visit`` does the same for a read-only visitor, copying nothing at all.

What each node class visits, in which order and how (a required child, an optional one,
a sequence, a statement body) is read once from LibCST's own ``_visit_and_replace_children``
source; a class whose method has another shape is traversed by LibCST itself.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import lru_cache
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

import libcst as cst
from libcst import FlattenSentinel, MaybeSentinel, RemovalSentinel

from ._dispatch import (
    _LEAVE,
    _LEAVE_FIELD,
    _VISIT,
    _VISIT_FIELD,
    FastTransformerDispatch,
    _field_hook,
    _Hooks,
    _node_hook,
)

REQUIRED, OPTIONAL, SENTINEL, SEQUENCE, BODY, NODE_OR_SEQUENCE, SEQUENCE_OR_NONE = range(7)
_KINDS = {
    "visit_required": REQUIRED,
    "visit_optional": OPTIONAL,
    "visit_sentinel": SENTINEL,
    "visit_sequence": SEQUENCE,
    "visit_body_sequence": BODY,
}
#: (field name, how it is visited), in LibCST's order
ChildFields = Tuple[Tuple[str, int], ...]


def _visited_field(value: ast.expr, field: str) -> Optional[int]:
    """The kind of ``visit_X(self, "field", self.field_or_local, visitor)``, else None."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    kind = _KINDS.get(value.func.id)
    args = value.args
    if kind is None or len(args) != 4 or value.keywords:
        return None
    named = isinstance(args[1], ast.Constant) and args[1].value == field
    return kind if named and isinstance(args[0], ast.Name) and args[0].id == "self" else None


def _keyword_kind(value: ast.expr, field: str) -> Optional[int]:
    """How a keyword of the rebuilt node is made: a kind, -1 for ``self.field`` passed on
    unvisited, None for any other expression (the class is then left to LibCST)."""
    if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
        return -1 if value.value.id == "self" and value.attr == field else None
    if isinstance(value, ast.IfExp):
        body, orelse = _visited_field(value.body, field), value.orelse
        if body == SEQUENCE and isinstance(orelse, ast.Constant) and orelse.value is None:
            return SEQUENCE_OR_NONE  # ``visit_sequence(...) if x is not None else None``
        if body == REQUIRED and _visited_field(orelse, field) == SEQUENCE:
            return NODE_OR_SEQUENCE  # ``visit_required(...) if isinstance(x, Node) else visit_sequence(...)``
        return None
    return _visited_field(value, field)


def _is_field_local(statement: ast.stmt) -> bool:
    """``x = self.x``"""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return False
    target, value = statement.targets[0], statement.value
    return (
        isinstance(target, ast.Name)
        and isinstance(value, ast.Attribute)
        and isinstance(value.value, ast.Name)
        and value.value.id == "self"
        and value.attr == target.id
    )


def _constructor_call(function: ast.FunctionDef, class_name: str) -> Optional[ast.Call]:
    """The ``Cls(...)`` (or ``self.__class__(...)``) call the method returns, after
    ``x = self.x`` locals (or through ``ret = Cls(...); return ret``); None for any other body."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    while body and _is_field_local(body[0]):
        body = body[1:]
    if (
        len(body) == 2
        and isinstance(body[0], ast.Assign)
        and isinstance(body[1], ast.Return)
        and isinstance(body[1].value, ast.Name)
        and [ast.dump(t) for t in body[0].targets] == [ast.dump(ast.Name(body[1].value.id, ast.Store()))]
    ):
        body = [ast.Return(value=body[0].value)]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or not isinstance(body[0].value, ast.Call):
        return None
    call = body[0].value
    func = call.func
    own = (isinstance(func, ast.Name) and func.id == class_name) or (
        isinstance(func, ast.Attribute)
        and func.attr == "__class__"
        and isinstance(func.value, ast.Name)
        and func.value.id == "self"
    )
    return call if own and not call.args else None


def _child_fields(function: ast.FunctionDef, class_name: str) -> Optional[ChildFields]:
    call = _constructor_call(function, class_name)
    if call is None:
        return None
    fields: List[Tuple[str, int]] = []
    for keyword in call.keywords:
        if keyword.arg is None:
            return None
        kind = _keyword_kind(keyword.value, keyword.arg)
        if kind is None:
            return None
        if kind >= 0:
            fields.append((keyword.arg, kind))
    return tuple(fields)


@lru_cache(maxsize=None)
def _fields_of_defining_class(owner: type) -> Optional[ChildFields]:
    method = owner.__dict__["_visit_and_replace_children"]
    try:
        source = textwrap.dedent(inspect.getsource(method))
        function = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):  # pragma: no cover - no source shipped
        return None
    if not isinstance(function, ast.FunctionDef):
        return None
    return () if _is_identity(function) else _child_fields(function, owner.__name__)


def _is_identity(function: ast.FunctionDef) -> bool:
    """``return self``: a leaf."""
    body = function.body
    last = body[-1] if body else None
    return (
        isinstance(last, ast.Return) and isinstance(last.value, ast.Name) and last.value.id == "self" and len(body) <= 2
    )


_CHILD_FIELDS: Dict[type, Optional[ChildFields]] = {}


def child_fields(kind: type) -> Optional[ChildFields]:
    """The fields LibCST visits on a node of class ``kind``, in order, with how; None when
    its traversal method has a shape not understood here."""
    found = _CHILD_FIELDS.get(kind, _CHILD_FIELDS)
    if found is _CHILD_FIELDS:
        owner = next(c for c in kind.__mro__ if "_visit_and_replace_children" in c.__dict__)
        found = _CHILD_FIELDS[kind] = _fields_of_defining_class(owner)
    return found  # type: ignore[return-value]


_Result = Union[cst.CSTNode, RemovalSentinel, FlattenSentinel]
#: per node class, for one visitor class: its visit_/leave_ hooks and its child fields
#: with their field hooks (None: the class is traversed by LibCST)
_Plan = Tuple[Any, Any, Optional[Tuple[Tuple[str, int, Any, Any], ...]]]
_PLANS: Dict[Tuple[type, type], _Plan] = {}


def _plan(owner: type, kind: type) -> _Plan:
    plan = _PLANS.get((owner, kind))
    if plan is None:
        fields = child_fields(kind)
        plan = _PLANS[(owner, kind)] = (
            _node_hook(_VISIT, owner, kind, "visit_"),
            _node_hook(_LEAVE, owner, kind, "leave_"),
            None
            if fields is None
            else tuple(
                (
                    name,
                    how,
                    _field_hook(_VISIT_FIELD, owner, kind, name, "visit_"),
                    _field_hook(_LEAVE_FIELD, owner, kind, name, "leave_"),
                )
                for name, how in fields
            ),
        )
    return plan


class _PlansOf(Dict[type, _Plan]):
    """The plans of one visitor class, by node class, made on first use."""

    def __init__(self, owner: type) -> None:
        super().__init__()
        self.owner = owner

    def __missing__(self, kind: type) -> _Plan:
        plan = self[kind] = _plan(self.owner, kind)
        return plan


def _bad_child(child: cst.CSTNode, parent: type) -> TypeError:
    return TypeError(
        f"a transform removed a {type(child).__name__} or replaced it by a sequence where its "
        f"parent {parent.__name__} needs exactly one node"
    )


def transform(node: cst.CSTNode, visitor: FastTransformerDispatch) -> _Result:
    """``node.visit(visitor)`` for a transformer whose dispatch is ``FastTransformerDispatch``
    (where it overrides ``on_visit``/``on_leave``, those are called on every node)."""
    owner = type(visitor)
    if not (
        owner.on_visit_attribute is _Hooks.on_visit_attribute and owner.on_leave_attribute is _Hooks.on_leave_attribute
    ):
        return node.visit(visitor)  # type: ignore[arg-type]  # pragma: no cover - no rule does
    visit_override = None if owner.on_visit is _Hooks.on_visit else owner.on_visit
    leave_override = None if owner.on_leave is FastTransformerDispatch.on_leave else owner.on_leave
    plans = _PlansOf(owner)

    def one(node: cst.CSTNode) -> _Result:
        kind = type(node)
        enter, leave, fields = plans[kind]
        if visit_override is not None:
            descend = visit_override(visitor, node)
        else:
            descend = enter is None or enter(visitor, node) is not False
        updated = node
        if descend:
            if fields is None:
                updated = node._visit_and_replace_children(visitor)  # type: ignore[arg-type]
            elif fields:
                updated = children(node, kind, fields)
        if leave_override is not None:
            result = leave_override(visitor, node, updated)
        else:
            result = updated if leave is None else leave(visitor, node, updated)
        if result is not updated and not isinstance(result, (cst.CSTNode, RemovalSentinel, FlattenSentinel)):
            raise cst.CSTValidationError(
                "Expected a node of type CSTNode or a RemovalSentinel, "
                f"but got a return value of {type(result).__name__}"
            )
        return result

    def children(node: cst.CSTNode, kind: type, fields: Tuple[Tuple[str, int, Any, Any], ...]) -> cst.CSTNode:
        changes: Optional[Dict[str, Any]] = None
        for name, how, enter, leave in fields:
            value = getattr(node, name)
            if how == SEQUENCE_OR_NONE:
                if value is None:
                    continue
                how = SEQUENCE
            elif how == NODE_OR_SEQUENCE:
                how = REQUIRED if isinstance(value, cst.CSTNode) else SEQUENCE
            if enter is not None:
                enter(visitor, node)
            if how >= SEQUENCE:
                new: Any = sequence(value, how == BODY)
            elif value is None or value is MaybeSentinel.DEFAULT:
                new = value
            else:
                new = one(value)
                if new is not value and not isinstance(new, cst.CSTNode):
                    if how == REQUIRED or isinstance(new, FlattenSentinel):
                        raise _bad_child(value, kind)
                    new = None if how == OPTIONAL else MaybeSentinel.DEFAULT
            if leave is not None:
                leave(visitor, node)
            if new is not value:
                if changes is None:
                    changes = {}
                changes[name] = new
        return node if changes is None else node.with_changes(**changes)

    def sequence(items: Any, body: bool) -> Any:
        out: Optional[List[cst.CSTNode]] = None
        for index, child in enumerate(items):
            new: Any = one(child)
            if new is child:
                if out is not None:
                    out.append(child)
                continue
            if out is None:
                out = list(items[:index])
            if isinstance(new, RemovalSentinel):
                continue
            kept = list(new) if isinstance(new, FlattenSentinel) else [new]
            if body and not child._is_removable():
                # a statement line emptied by removing its statements goes with them
                kept = [k for k in kept if not k._is_removable()]
            out.extend(kept)
        return items if out is None else tuple(out)

    result = one(node)
    if isinstance(node, cst.Module) and isinstance(result, RemovalSentinel):
        return node.with_changes(body=(), header=(), footer=())
    return result


def visit(node: cst.CSTNode, visitor: cst.CSTVisitor, leave: Callable[[Any, cst.CSTNode], None]) -> None:
    """``node.visit(visitor)`` for a read-only visitor with ``FastVisitorDispatch``'s
    dispatch: its ``visit_``/field hooks from the tables, ``leave(visitor, node)`` after
    each node's children (in place of ``on_leave``), and nothing copied."""
    plans = _PlansOf(type(visitor))

    def one(node: cst.CSTNode) -> None:
        enter, _, fields = plans[type(node)]
        if enter is None or enter(visitor, node) is not False:
            if fields is None:
                node._visit_and_replace_children(visitor)
            else:
                for name, how, enter_field, leave_field in fields:
                    value = getattr(node, name)
                    if how == SEQUENCE_OR_NONE and value is None:
                        continue
                    if enter_field is not None:
                        enter_field(visitor, node)
                    if how in _SEQUENCES or (how == NODE_OR_SEQUENCE and not isinstance(value, cst.CSTNode)):
                        for child in value:
                            one(child)
                    elif value is not None and value is not MaybeSentinel.DEFAULT:
                        one(value)
                    if leave_field is not None:
                        leave_field(visitor, node)
        leave(visitor, node)

    one(node)


_SEQUENCES = frozenset({SEQUENCE, BODY, SEQUENCE_OR_NONE})
