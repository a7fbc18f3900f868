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
``rules._metadata`` walks the same way for the scope analysis, copying nothing at all.

What each node class visits, in which order and how, comes from ``_child_fields``; a class
whose traversal method has another shape is traversed by LibCST itself.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import libcst as cst
from libcst import FlattenSentinel, MaybeSentinel, RemovalSentinel

from ._child_fields import (
    BODY,
    NODE_OR_SEQUENCE,
    OPTIONAL,
    REQUIRED,
    SEQUENCE,
    SEQUENCE_OR_NONE,
    child_fields,
)
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


_PLANS_OF: Dict[type, _PlansOf] = {}


def plans_of(owner: type) -> Dict[type, _Plan]:
    """The plans of visitor class ``owner`` by node class, kept for the run (the scope
    analysis enters a walk at every scope's parts: a table per entry was rebuilt ~150
    times per file)."""
    plans = _PLANS_OF.get(owner)
    if plans is None:
        plans = _PLANS_OF[owner] = _PlansOf(owner)
    return plans


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
    plans = plans_of(owner)

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

    try:
        result = one(node)
    finally:
        # the three call each other through their cells: a cycle that would keep the
        # visitor (its metadata, its trees) alive until the next garbage collection
        del one, children, sequence
    if isinstance(node, cst.Module) and isinstance(result, RemovalSentinel):
        return node.with_changes(body=(), header=(), footer=())
    return result
