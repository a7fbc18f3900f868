"""Whether an on/off switch is provably a bool, and ``bool(...)`` around it when not.

``torch.autocast(enabled=...)`` refuses anything but a real bool on entry (None, "", 0 raise
TypeError), and a GradScaler keeps whatever it was given and hands it back from
``is_enabled()``.  apex took any truthy value, so a switch copied from the apex code
(``args.fp16``, an opt level that defaults to None) is wrapped once, where the migration
writes it, unless its shape proves a bool: a comparison, ``not``, ``True``/``False``,
``bool()``/``isinstance()`` and a few other builtins that always return one, ``and``/``or``/
``x if c else y`` over such operands, or a name the scope that binds it (its function, an
enclosing one, the module) assigns only from them."""

from __future__ import annotations

from typing import Any, FrozenSet, List, Optional, Sequence, Union

import libcst as cst

from ._tree import walk_of

#: builtins whose result is always a bool
BOOL_BUILTINS: FrozenSet[str] = frozenset({"bool", "isinstance", "issubclass", "hasattr", "callable", "any", "all"})


Scopes = Union[cst.CSTNode, Sequence[cst.CSTNode], None]


def is_provably_bool(node: cst.BaseExpression, scope: Scopes = None) -> bool:
    """Whether ``node`` always evaluates to ``True`` or ``False``; a bare name counts when
    the scope that binds it (``scope``: its function, or a list of scopes innermost first as
    ``scope_at`` gives, ending with the module) assigns it only from such expressions."""
    if scope is None:
        scopes: List[cst.CSTNode] = []
    elif isinstance(scope, cst.CSTNode):
        scopes = [scope]
    else:
        scopes = list(scope)
    return _proves(node, scopes, frozenset())


def as_bool(text: str, scope: Scopes = None) -> str:
    """``text`` unchanged when it is provably a bool, else ``bool(text)``."""
    if is_provably_bool(cst.parse_expression(text), scope):
        return text
    return f"bool({text})"


def _proves(node: Any, scopes: List[cst.CSTNode], seen: FrozenSet[str]) -> bool:
    if isinstance(node, cst.Comparison):
        return True
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, cst.Not)
    if isinstance(node, cst.BooleanOperation):
        return _proves(node.left, scopes, seen) and _proves(node.right, scopes, seen)
    if isinstance(node, cst.IfExp):
        return _proves(node.body, scopes, seen) and _proves(node.orelse, scopes, seen)
    if isinstance(node, cst.Call):
        return isinstance(node.func, cst.Name) and node.func.value in BOOL_BUILTINS
    if isinstance(node, cst.Name):
        if node.value in ("True", "False"):
            return True
        if node.value in seen:
            return False
        for index, scope in enumerate(scopes):
            values = _assigned_values(scope, node.value)
            if values is None:
                return False
            if values:  # the innermost scope that binds the name decides
                outer = scopes[index:]
                return all(_proves(v, outer, seen | {node.value}) for v in values)
    return False


def _assigned_values(scope: cst.CSTNode, name: str) -> Optional[List[cst.BaseExpression]]:
    """The values ``scope`` assigns to ``name`` (its own statements, not nested functions'
    or classes'; empty: it does not bind the name); None when the name is bound some other
    way there too (a parameter, a loop target, ``+=``, ``global``, a function of the module
    declaring it ``global``), since then its value is not one of them."""
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        every = list(params.params) + list(params.kwonly_params) + list(params.posonly_params)
        for extra in (params.star_arg, params.star_kwarg):
            if isinstance(extra, cst.Param):
                every.append(extra)
        if any(p.name.value == name for p in every):
            return None
    finder = _Bindings(name)
    if isinstance(scope, cst.Module):
        for stmt in scope.body:
            stmt.visit(finder)
        declared = any(n.name.value == name for node in walk_of(scope, cst.Global) for n in node.names)
        finder.other = finder.other or declared
    elif isinstance(scope, cst.FunctionDef):
        scope.body.visit(finder)
    else:
        return None
    return None if finder.other else finder.values


class _Bindings(cst.CSTVisitor):
    """Collects the plain assignments of one name, noting any other kind of binding."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.values: List[cst.BaseExpression] = []
        self.other = False

    def _binds(self, target: Any) -> bool:
        if isinstance(target, cst.Name):
            return target.value == self.name
        if isinstance(target, (cst.Tuple, cst.List)):
            return any(self._binds(e.value) for e in target.elements)
        if isinstance(target, cst.StarredElement):
            return self._binds(target.value)
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if node.name.value == self.name:
            self.other = True
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        if node.name.value == self.name:
            self.other = True
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == self.name:
                self.values.append(node.value)
            elif self._binds(target.target):
                self.other = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._binds(node.target):
            if node.value is None:
                return
            self.values.append(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.other = self.other or self._binds(node.target)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        if self._binds(node.target):
            self.values.append(node.value)

    def visit_For(self, node: cst.For) -> None:
        self.other = self.other or self._binds(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.other = self.other or self._binds(node.asname.name)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self.other = self.other or self._binds(node.name.name)

    def visit_CompFor(self, node: cst.CompFor) -> None:
        self.other = self.other or self._binds(node.target)

    def visit_Global(self, node: cst.Global) -> None:
        self.other = self.other or any(n.name.value == self.name for n in node.names)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        self.other = self.other or any(n.name.value == self.name for n in node.names)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname is not None else node.name
        if isinstance(bound, cst.Name) and bound.value == self.name:
            self.other = True


def scope_at(parents: Any, node: cst.CSTNode) -> List[cst.CSTNode]:
    """The scopes a name read at ``node`` is looked up in, innermost first: the functions
    holding it, then the module (class bodies are skipped, as Python skips them)."""
    scopes: List[cst.CSTNode] = []
    cur: Any = parents.get(node)
    last: Any = node
    while cur is not None:
        if isinstance(cur, cst.FunctionDef):
            scopes.append(cur)
        last, cur = cur, parents.get(cur)
    if isinstance(last, cst.Module):
        scopes.append(last)
    return scopes
