"""Calls of a module-level helper through a name ``functools.partial`` binds in one function.

``backwards = partial(loss_backwards, self.fp16)`` then ``backwards(loss, opt, loss_id=0)``
(lucidrains' trainers): each call of ``backwards`` is a call of ``loss_backwards`` with the
bound arguments first.  The threading route may treat those calls as the helper's own, and
hand the GradScaler to each of them by keyword, only where nothing else can run the helper
through that name:

* the partial is ``name = functools.partial(helper, a, b)`` as a statement of a function,
  binding positional arguments only (no keyword, no star);
* every other occurrence of ``name`` in that function, nested scopes included, is the callee
  of a call made by the function itself (not inside a lambda or a nested definition): the
  bound object is never stored, returned, passed on or rebound;
* each call comes after the statement that binds the name and passes no star argument.

Then a parameter of the helper at position ``i`` is the call's positional argument
``i - len(bound)`` (``bound_offset``), and a parameter among the bound ones is one the
partial fixed (the routes that need it from the call refuse).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, cast

import libcst as cst

from ._edits import code_of
from ._tree import walk, walk_of

PARTIAL = "functools.partial"


def partial_calls(rule: Any, ref: cst.Name) -> Optional[List[cst.Call]]:
    """``ref`` names a module-level helper as the first argument of a proven partial (see the
    module docstring): the calls of the name it is bound to, else None."""
    return bound_calls(rule, ref)[0]


def bound_calls(rule: Any, ref: cst.Name) -> Tuple[Optional[List[cst.Call]], str]:
    """``partial_calls`` and, for a partial whose calls are not all proven, why (the
    occurrence of the bound name that is no call of its function); "" for no partial."""
    binding = _binding(rule, ref)
    if binding is None:
        return None, ""
    stmt, bound, func = binding
    assign: Any = stmt.body[0]
    calls: List[cst.Call] = []
    for node in walk(func):
        if not (isinstance(node, cst.Name) and node.value == bound):
            continue
        if node is assign.targets[0].target:
            continue
        parent = rule.parents.get(node)
        if not (isinstance(parent, cst.Call) and parent.func is node) or _scope_of(rule.parents, parent) is not func:
            line = rule.statement_of(node) if hasattr(rule, "statement_of") else None
            text = code_of(line).strip().splitlines()[0] if line is not None else code_of(parent)
            return None, f"the name it binds, {bound}, is also used other than by a call of {func.name.value}() (`{text}`)"
        if any(a.star for a in parent.args):
            return None, f"{bound}() is called with a star argument (`{code_of(parent)}`)"
        if rule.position(parent).start.line <= rule.position(stmt).end.line:
            return None, f"{bound}() is called before the partial binds it"
        calls.append(parent)
    if not calls:
        return None, f"the name it binds, {bound}, is never called"
    return calls, ""


def bound_offset(rule: Any, call: cst.Call) -> int:
    """How many leading positional arguments a partial bound for ``call`` (0 for a direct
    call of the helper)."""
    if not isinstance(call.func, cst.Name):
        return 0
    func = _scope_of(rule.parents, call)
    if func is None:
        return 0
    for node in walk_of(func, cst.Assign):
        if code_of(node.targets[0].target) != call.func.value:
            continue
        value = _partial_value(rule, node.value)
        if value is not None and lone_assignment(rule.parents, value) is not None:
            return len(value.args) - 1
    return 0


def _binding(rule: Any, ref: cst.Name) -> Optional[tuple]:
    """(the binding statement, the bound name, its function) for ``ref`` as the helper given
    to a partial, else None."""
    parents = rule.parents
    arg = parents.get(ref)
    call = parents.get(arg)
    if not (isinstance(arg, cst.Arg) and isinstance(call, cst.Call) and call.args[0] is arg):
        return None
    if _partial_value(rule, call) is None:
        return None
    stmt = lone_assignment(parents, call)
    func = _scope_of(parents, stmt) if stmt is not None else None
    if func is None:
        return None
    return stmt, cast(Any, stmt).body[0].targets[0].target.value, func


def lone_assignment(parents: Any, value: Any) -> Optional[cst.SimpleStatementLine]:
    """The line ``name = value`` when it is all of its line (one target, a plain name)."""
    assign = parents.get(value)
    stmt = parents.get(assign)
    if (
        isinstance(assign, cst.Assign)
        and assign.value is value
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
    ):
        return stmt
    return None


def _partial_value(rule: Any, value: Any) -> Optional[cst.Call]:
    """``partial(helper, a, b)`` (functools') binding positional arguments only."""
    if not isinstance(value, cst.Call) or not value.args or not rule.refers_to(value.func, PARTIAL):
        return None
    if any(a.keyword is not None or a.star for a in value.args):
        return None
    if not isinstance(value.args[0].value, cst.Name):
        return None
    return value


def _scope_of(parents: Any, node: Any) -> Optional[cst.FunctionDef]:
    """The function whose own code ``node`` is (None inside a lambda, a class body or at
    module level)."""
    cur = parents.get(node)
    while cur is not None:
        if isinstance(cur, cst.FunctionDef):
            return cur
        if isinstance(cur, (cst.Lambda, cst.ClassDef)):
            return None
        cur = parents.get(cur)
    return None
