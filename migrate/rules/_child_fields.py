"""Which fields LibCST visits on a node of each class, in which order and how, read once
from LibCST's own ``_visit_and_replace_children`` source.

Both the tree navigation (``_tree.children``) and the rules' traversal (``_traverse``) need
this; LibCST only exposes it by running that method, which copies the node.  A method of
another shape than ``return Cls(field=visit_x(self, "field", self.field, visitor), ...)``
gives None, and its class is then left to LibCST.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from functools import lru_cache
from typing import Dict, List, Optional, Tuple

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
