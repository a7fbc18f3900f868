"""Definite binding: whether a name is bound whenever a node runs (a parameter, a module
binding read from a function, or a binding in a statement that precedes the node in its own
block or an enclosing one).  Used where a rewrite must name something the code already has:
the local rank of the DDP rule, the device of the amp rules."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, Optional, Sequence

import libcst as cst
from libcst.metadata import BuiltinScope, GlobalScope

from ._edits import code_of
from ._tree import walk


def bound_at(
    name: str, node: cst.CSTNode, parent_of: Callable[[cst.CSTNode], Optional[cst.CSTNode]], scope: Any
) -> bool:
    """Whether ``name`` is bound whenever ``node`` runs: a parameter of the function
    around it, a module-level binding read from inside a function, or a binding in a
    statement that precedes ``node`` in its own block or an enclosing one (not in a
    sibling branch, not later, not only inside a loop)."""
    assignments = [a for a in scope[name] if not isinstance(a.scope, BuiltinScope)]
    if not assignments:
        return False
    home = assignments[0].scope
    owner = getattr(home, "node", None)  # the module's scope has none
    current: cst.CSTNode = node
    parent = parent_of(current)
    while parent is not None:
        if isinstance(parent, (cst.IndentedBlock, cst.Module, cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            for stmt in _before(parent.body, current):
                if _binds(stmt, name):
                    return True
        elif isinstance(parent, (cst.FunctionDef, cst.Lambda)) and parent.body is current:
            if name in param_names(parent.params):
                return True
            if parent is owner:
                return False
            if isinstance(home, GlobalScope):
                # read from a function: the module binding exists when it runs, unless the
                # script binds it only under its ``__main__`` guard (a process that imports
                # the module, as multiprocessing's spawn does, never runs that block) and the
                # function does not read it already (then it needed that block before too)
                return _reads(parent, name) or any(
                    isinstance(a.scope, GlobalScope) and not _under_main_guard(a.node, parent_of) for a in assignments
                )
        elif isinstance(parent, cst.For) and parent.body is current and target_binds(parent.target, name):
            return True
        elif isinstance(parent, cst.With) and parent.body is current:
            if any(item.asname is not None and target_binds(item.asname.name, name) for item in parent.items):
                return True
        elif isinstance(parent, cst.ExceptHandler) and parent.body is current:
            if parent.name is not None and target_binds(parent.name.name, name):
                return True
        if parent is owner:
            return False
        current, parent = parent, parent_of(parent)
    return False


def _reads(func: cst.FunctionDef | cst.Lambda, name: str) -> bool:
    """``func`` reads ``name`` itself (not as ``x.name`` or a keyword)."""
    skip = set()
    for node in walk(func):
        if isinstance(node, cst.Attribute):
            skip.add(id(node.attr))
        elif isinstance(node, cst.Arg) and node.keyword is not None:
            skip.add(id(node.keyword))
    return any(isinstance(n, cst.Name) and n.value == name and id(n) not in skip for n in walk(func))


def _under_main_guard(node: cst.CSTNode, parent_of: Callable[[cst.CSTNode], Optional[cst.CSTNode]]) -> bool:
    """``node`` lies in the body of a module-level ``if __name__ == "__main__":``."""
    child, current = node, parent_of(node)
    while current is not None:
        if isinstance(current, cst.If) and current.body is child and isinstance(parent_of(current), cst.Module):
            test = code_of(current.test).replace("'", '"').replace(" ", "")
            if test in ('__name__=="__main__"', '"__main__"==__name__'):
                return True
        child, current = current, parent_of(current)
    return False


def _before(body: Sequence[cst.CSTNode], current: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements of ``body`` that come before ``current`` (none if it is not there)."""
    if not any(stmt is current for stmt in body):
        return
    for stmt in body:
        if stmt is current:
            return
        yield stmt


def param_names(params: cst.Parameters) -> List[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.append(star.name.value)
    return names


def target_binds(target: cst.BaseExpression, name: str) -> bool:
    """An assignment target (``x``, ``a, (b, *c)``) that binds ``name``."""
    if isinstance(target, cst.Name):
        return target.value == name
    if isinstance(target, (cst.Tuple, cst.List)):
        return any(target_binds(e.value, name) for e in target.elements)
    if isinstance(target, cst.StarredElement):
        return target_binds(target.value, name)
    return False


def _import_binds(small: cst.BaseSmallStatement, name: str) -> bool:
    if not isinstance(small, (cst.Import, cst.ImportFrom)) or isinstance(small.names, cst.ImportStar):
        return False
    for alias in small.names:
        if alias.asname is not None:
            bound = alias.asname.name
            if isinstance(bound, cst.Name) and bound.value == name:
                return True
        elif code_of(alias.name).split(".", 1)[0] == name:
            return True
    return False


def _small_binds(small: cst.BaseSmallStatement, name: str) -> bool:
    if isinstance(small, cst.Assign):
        return any(target_binds(t.target, name) for t in small.targets)
    if isinstance(small, cst.AnnAssign):
        return small.value is not None and target_binds(small.target, name)
    if isinstance(small, cst.AugAssign):
        return target_binds(small.target, name)  # raises before going on if it was unbound
    return _import_binds(small, name)


def _exits(small: cst.BaseSmallStatement) -> bool:
    """Control never goes on past it: what follows is reached only through other paths."""
    return isinstance(small, (cst.Return, cst.Raise, cst.Continue, cst.Break))


def block_binds(block: cst.BaseSuite, name: str) -> bool:
    """Every way through ``block`` that goes on after it binds ``name``."""
    return any(_binds(stmt, name) for stmt in block.body)


def _binds(stmt: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is bound once control goes on past ``stmt`` (loops may run zero times)."""
    if isinstance(stmt, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return any(_small_binds(s, name) or _exits(s) for s in stmt.body)
    if isinstance(stmt, cst.BaseSmallStatement):
        return _small_binds(stmt, name) or _exits(stmt)
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return stmt.name.value == name
    if isinstance(stmt, cst.If):
        if not block_binds(stmt.body, name) or stmt.orelse is None:
            return False
        if isinstance(stmt.orelse, cst.If):
            return _binds(stmt.orelse, name)
        return block_binds(stmt.orelse.body, name)
    if isinstance(stmt, cst.With):
        return block_binds(stmt.body, name)
    if isinstance(stmt, cst.Try):
        if stmt.finalbody is not None and block_binds(stmt.finalbody.body, name):
            return True
        body = block_binds(stmt.body, name) or (stmt.orelse is not None and block_binds(stmt.orelse.body, name))
        return body and all(block_binds(h.body, name) for h in stmt.handlers)
    return False
