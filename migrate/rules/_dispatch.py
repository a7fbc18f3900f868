"""LibCST's visitor dispatch, looked up once per visitor class and node type.

For every node it visits, LibCST's ``CSTVisitor``/``CSTTransformer`` formats the names
``visit_<Type>``, ``leave_<Type>`` and, for each of the node's fields,
``visit_<Type>_<field>`` and ``leave_<Type>_<field>``, looks each up on the instance and
calls it, although nearly all of them are LibCST's generated no-op stubs.  Over a file's
dozen walks (the rules' and the scope analysis') that was about a tenth of the migration
time.  The mixins here give the same calls in the same order, from a table per class, and
skip the stubs (marked ``_is_no_op`` by LibCST).  Put one in front of the LibCST base class.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Tuple

import libcst as cst

_Hook = Optional[Callable[..., Any]]
_UNKNOWN: Any = object()
#: (visitor class, method name) -> the method as a plain function, None for a stub
_BY_NAME: Dict[Tuple[type, str], _Hook] = {}
#: (visitor class, node class) -> its visit_/leave_ method
_VISIT: Dict[Tuple[type, type], _Hook] = {}
_LEAVE: Dict[Tuple[type, type], _Hook] = {}
#: (visitor class, node class, field) -> its visit_/leave_<Type>_<field> method
_VISIT_FIELD: Dict[Tuple[type, type, str], _Hook] = {}
_LEAVE_FIELD: Dict[Tuple[type, type, str], _Hook] = {}


def _hook(owner: type, name: str) -> _Hook:
    """``owner``'s method ``name`` as a plain function; None where only a stub defines it."""
    found = _BY_NAME.get((owner, name), _UNKNOWN)
    if found is _UNKNOWN:
        method = getattr(owner, name, None)
        stub = method is None or getattr(method, "_is_no_op", False)
        found = _BY_NAME[(owner, name)] = None if stub else method
    return found


def _node_hook(table: Dict[Tuple[type, type], _Hook], owner: type, kind: type, prefix: str) -> _Hook:
    found = table.get((owner, kind), _UNKNOWN)
    if found is _UNKNOWN:
        found = table[(owner, kind)] = _hook(owner, prefix + kind.__name__)
    return found


def _field_hook(table: Dict[Tuple[type, type, str], _Hook], owner: type, kind: type, field: str, prefix: str) -> _Hook:
    found = table.get((owner, kind, field), _UNKNOWN)
    if found is _UNKNOWN:
        found = table[(owner, kind, field)] = _hook(owner, f"{prefix}{kind.__name__}_{field}")
    return found


class _Hooks:
    """What both mixins share: ``on_visit`` and the per-field hooks."""

    def on_visit(self, node: cst.CSTNode) -> bool:
        hook = _node_hook(_VISIT, type(self), type(node), "visit_")
        return hook is None or hook(self, node) is not False

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        hook = _field_hook(_VISIT_FIELD, type(self), type(node), attribute, "visit_")
        if hook is not None:
            hook(self, node)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        hook = _field_hook(_LEAVE_FIELD, type(self), type(original_node), attribute, "leave_")
        if hook is not None:
            hook(self, original_node)


class FastTransformerDispatch(_Hooks):
    """In front of ``cst.CSTTransformer``: its dispatch contract."""

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> Any:
        hook = _node_hook(_LEAVE, type(self), type(original_node), "leave_")
        return updated_node if hook is None else hook(self, original_node, updated_node)


class FastVisitorDispatch(_Hooks):
    """In front of ``cst.CSTVisitor``: its dispatch contract."""

    def on_leave(self, original_node: cst.CSTNode) -> None:
        hook = _node_hook(_LEAVE, type(self), type(original_node), "leave_")
        if hook is not None:
            hook(self, original_node)
