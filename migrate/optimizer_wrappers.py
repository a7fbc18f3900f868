"""Optimizer wrapper classes: a class that holds a torch optimizer in an attribute, whose
``step`` steps that optimizer exactly once and whose ``param_groups`` are that optimizer's
(ClassyVision's ``ClassyOptimizer``: ``step(where=...)`` updates its schedules, then calls
``self.optimizer.step()``).

``GradScaler.step(wrapper, **kwargs)`` unscales ``wrapper.param_groups`` (the wrapped
optimizer's), skips the step on inf/nan, else calls ``wrapper.step(**kwargs)``: for such a
class that is the native form of apex's ``amp.scale_loss(loss, wrapper.<attr>)`` followed by
``wrapper.step(...)``.  Read with the stdlib ``ast`` (the repository index calls
:func:`wrapped_attribute` on every top-level class).
"""

from __future__ import annotations

import ast
from typing import List, Optional, Set, Tuple

from .wrapper_step_edit import PARAMETER, shares_lines as _shares_lines

#: what a subclass must not redefine for its parent's proof to hold for its instances
PROVEN_MEMBERS = frozenset({"step", "param_groups"})


def wrapped_attribute(cls: ast.ClassDef) -> Optional[str]:
    """The attribute ``cls`` keeps its optimizer in, when ``cls`` is a wrapper as above:
    ``param_groups`` a property returning ``self.<attr>.param_groups``; ``step`` a plain
    method that calls ``self.<attr>.step(...)`` once on every path that returns (a path may
    raise instead) and sets no attribute of the instance (``_advances_own_state``); no other
    method of the class steps ``self.<attr>``.  None otherwise."""
    methods = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if any(name in PROVEN_MEMBERS for name in _assigned_names(cls)):
        return None  # ``step = ...`` in the class body: not (only) the method read here
    groups, step = methods.get("param_groups"), methods.get("step")
    if not isinstance(groups, ast.FunctionDef) or not isinstance(step, ast.FunctionDef):
        return None
    attr = _property_of_held(groups)
    if attr is None or step.decorator_list or not step.args.args:
        return None
    self_name = step.args.args[0].arg
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(step)):
        return None
    flow = _flow(step.body, self_name, attr, {0})
    if flow is None or (flow[0] | flow[1]) != {1}:
        return None
    if _advances_own_state(step, self_name):
        return None
    for method in methods.values():
        if method is step or not method.args.args:
            continue
        if _steps_in(method, method.args.args[0].arg, attr):
            return None
    return attr


def scaler_steppable_attribute(cls: ast.ClassDef) -> Optional[str]:
    """The attribute ``cls`` keeps an optimizer in, when its ``step`` can be handed a
    GradScaler for it: ``def step(self)`` (no other parameter, no decorator, no yield) that
    runs ``self.<attr>.step()`` as a statement of its own exactly once on every path that
    returns; no other method of the class steps ``self.<attr>`` or, but ``__init__``, rebinds
    it, and the class body binds no ``step`` of its own.  Unlike :func:`wrapped_attribute` the step may advance the wrapper's
    own state (a step count, a learning rate it sets on the param groups): once the inner step
    goes through ``scaler.step(self.<attr>)``, apex's skip of an overflowing step is the
    GradScaler's skip of that one call, and the rest of the wrapper's step runs as it did under
    apex (``migrate.wrapper_step_edit``).  None otherwise."""
    methods = {s.name: s for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    step = methods.get("step")
    if "step" in _assigned_names(cls) or not isinstance(step, ast.FunctionDef) or step.decorator_list:
        return None
    args = step.args
    if len(args.args) != 1 or args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg:
        return None
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(step)):
        return None
    self_name = args.args[0].arg
    steps = [
        n for n in ast.walk(step) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
        and isinstance(n.value.func, ast.Attribute) and n.value.func.attr == "step"
        and not n.value.args and not n.value.keywords
    ]
    attrs = {_held(n.value.func.value, self_name) for n in steps} - {None}
    if len(attrs) != 1:
        return None
    (attr,) = attrs
    if any(isinstance(n, ast.Name) and n.id == PARAMETER for n in ast.walk(step)):
        return None  # the name the edit would give the GradScaler is taken
    if any(_shares_lines(step, n) for n in steps):
        return None  # the edit rewrites the inner step's own lines
    flow = _flow(step.body, self_name, attr, {0})
    if flow is None or (flow[0] | flow[1]) != {1}:
        return None
    for method in methods.values():
        if method is step or not method.args.args:
            continue
        me = method.args.args[0].arg
        if _steps_in(method, me, attr) or (method.name != "__init__" and _assigns_held(method, me, attr)):
            return None
    return attr


def _assigns_held(method: ast.AST, self_name: str, attr: str) -> bool:
    """Whether ``method`` rebinds ``self.<attr>`` (the optimizer the step steps may then not
    be the one a caller scaled the loss for)."""
    return any(
        _held(part, self_name) == attr
        for node in ast.walk(method)
        for target in _targets(node)
        for part in ast.walk(target)
    )


def _advances_own_state(step: ast.FunctionDef, self_name: str) -> bool:
    """Whether ``step`` assigns to an attribute of its instance (``self._step += 1``, a
    learning rate kept on ``self``).  GradScaler.step skips the whole wrapper step on inf/nan
    where apex skipped only the inner optimizer's, so such state would fall behind by the
    skipped steps; a wrapper that derives everything from its arguments (ClassyVision's
    ``where``) loses nothing."""
    for node in ast.walk(step):
        for target in _targets(node):
            for part in ast.walk(target):
                if isinstance(part, (ast.Attribute, ast.Subscript)):
                    root = part.value
                    while isinstance(root, (ast.Attribute, ast.Subscript)):
                        root = root.value
                    if isinstance(root, ast.Name) and root.id == self_name:
                        return True
    return False


def class_members(cls: ast.ClassDef) -> Set[str]:
    """The names the body of ``cls`` defines (methods, properties, class attributes)."""
    names = {s.name for s in cls.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    return names | _assigned_names(cls)


def base_texts(cls: ast.ClassDef) -> Tuple[str, ...]:
    """The bases of ``cls`` as dotted names (``""`` for anything else)."""
    return tuple(_dotted(b) for b in cls.bases)


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return f"{inner}.{node.attr}" if inner else ""
    return ""


def _assigned_names(cls: ast.ClassDef) -> Set[str]:
    names: Set[str] = set()
    for stmt in cls.body:
        for target in _targets(stmt):
            names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


def _targets(node: ast.AST) -> List[ast.AST]:
    """What an assignment statement (plain, annotated or augmented) assigns to; [] for any
    other node."""
    if isinstance(node, ast.Assign):
        return list(node.targets)
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [node.target]
    return []


def _property_of_held(func: ast.FunctionDef) -> Optional[str]:
    """``@property def param_groups(self): return self.<attr>.param_groups``: ``attr``."""
    if len(func.decorator_list) != 1 or _dotted(func.decorator_list[0]) != "property" or not func.args.args:
        return None
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        return None
    value = body[0].value
    if not (isinstance(value, ast.Attribute) and value.attr == "param_groups"):
        return None
    return _held(value.value, func.args.args[0].arg)


def _held(node: ast.AST, self_name: str) -> Optional[str]:
    """``self.<attr>``: ``attr``."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self_name:
        return node.attr
    return None


def _is_step(node: Optional[ast.AST], self_name: str, attr: str) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "step"
        and _held(node.func.value, self_name) == attr
    )


def _steps_in(node: ast.AST, self_name: str, attr: str) -> int:
    return sum(1 for n in ast.walk(node) if _is_step(n, self_name, attr))


def _flow(
    stmts: List[ast.stmt], self_name: str, attr: str, counts: Set[int]
) -> Optional[Tuple[Set[int], Set[int]]]:
    """How many steps of ``self.<attr>`` the paths through ``stmts`` take: (counts of the
    paths that fall through, counts of those that return); a raise ends a path with no
    count.  None when a step sits where paths are not followed (a loop, a ``with``, a
    ``try``, an ``if`` test, inside a larger expression)."""
    ended: Set[int] = set()
    for stmt in stmts:
        if not counts:
            break  # unreachable: after a raise or return on every path
        if isinstance(stmt, ast.If):
            if _steps_in(stmt.test, self_name, attr):
                return None
            body = _flow(stmt.body, self_name, attr, counts)
            orelse = _flow(stmt.orelse, self_name, attr, counts)
            if body is None or orelse is None:
                return None
            counts, ended = body[0] | orelse[0], ended | body[1] | orelse[1]
            continue
        if isinstance(stmt, ast.Raise):
            counts = set()
            continue
        found = _steps_in(stmt, self_name, attr)
        if found:
            value = getattr(stmt, "value", None) if isinstance(stmt, (ast.Expr, ast.Return, ast.Assign)) else None
            if found != 1 or not _is_step(value, self_name, attr):
                return None
            counts = {c + 1 for c in counts}
        elif not isinstance(stmt, ast.Return) and any(isinstance(n, ast.Return) for n in ast.walk(stmt)):
            ended |= counts  # a return in a loop, with, try or match ends some paths as they are
        if isinstance(stmt, ast.Return):
            ended |= counts
            counts = set()
    return counts, ended
