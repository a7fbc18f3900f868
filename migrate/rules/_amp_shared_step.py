"""A step shared by the scaled and the plain backward: FARM's trainer scales through apex when
its own flag is set and runs a plain backward otherwise (``if self.use_amp: <scale> else:
loss.backward()``), then steps on one line after that if-chain, at each accumulation boundary.

Where the GradScaler is a module-level variable of another file, set only where that file
initialized apex (None on the runs that did not), the line cannot step through it always: a
plain run would fail, and a plain backward stepped through an enabled GradScaler would be
divided by its scale.  It takes the scaling clause's test instead: ``if <test>:
scaler.step(opt); scaler.update() else: opt.step()``, so the step goes through the GradScaler
exactly on the runs whose backward it scaled, provided the test reads the same value at the
step as at the backward: a test of names and attributes only (nothing it calls or indexes),
none of them assigned between the two.  Where the step may not follow every backward (an
accumulation boundary, a loop), the backwards of earlier calls add up to the same step, so the
test must hold one value across calls as well: attributes of ``self`` that only ``__init__``
assigns.

When that test and the initializing file's switch disagree the output fails or trains as apex
did (torch 2.13, measured): a GradScaler still None fails at ``scaler.scale`` (AttributeError),
as apex's ``scale_loss`` raised without ``amp.initialize``; an enabled GradScaler whose run
takes the plain branch is never asked to scale, unscale or step (each of those would assert
``_scale is None`` on a GradScaler that scaled nothing; the plain step of apex's patched
optimizer stepped unscaled gradients too), while the forward runs under autocast keyed on the
GradScaler, as apex's patched functions ran once it was initialized.  Where the initializing
module makes a disabled GradScaler on its other paths (FARM's), the scaled branch of a run that
set no apex up passes the loss and the step through unchanged: float32 training where apex's
``scale_loss`` raised.  Gradient uses after the backward (clips, norms, ``.grad``,
``amp.master_params``) must each sit on one side of the same test (``gradient_uses``): the
scaled side gets the ``unscale_``, the plain side none (``clipping``).
"""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import libcst as cst

from ._amp_mirrored_step import assigned, chain_tests, holds, plain_test, read_names, scale_clause, statements_between
from ._edits import code_of
from ._tree import assignment_targets, children, walk

#: names a test may read besides ``self``'s attributes without being assigned anywhere
_CONSTANTS = ("None", "True", "False")


def shared_guard(
    parents: Any, func: Any, scale_stmt: Any, step_call: cst.Call
) -> Tuple[Optional[cst.SimpleStatementLine], Optional[cst.BaseExpression], str]:
    """For ``step_call`` (``optimizer.step()`` alone on its line, after the if-chain whose
    first clause holds ``scale_stmt``, the scaled backward): that line and the clause's test
    to put it under, and "" -- or None, None and why not."""
    line = parents.get(parents.get(step_call))
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        return None, None, "the step is not alone on its line"
    clause = scale_clause(parents, scale_stmt, func)
    if clause is None:
        return None, None, "the scaled backward is under no if"
    head, leading = chain_tests(parents, clause)
    if leading:
        return None, None, "the scaled backward is not in the first clause of its if-chain"
    if holds(parents, head, step_call):
        return None, None, "the step is inside the if-chain that scales the loss"
    if not plain_test(clause.test):
        return None, None, "the scaled backward's test calls or indexes something"
    between = statements_between(parents, head, line)
    if between is None:
        return None, None, "the step is not in the function body that scales the loss"
    read = set(read_names(clause.test))
    rebound = sorted({name for stmt in between for name in assigned(stmt)} & read)
    if rebound:
        return None, None, f"{rebound[0]}, which the scaled backward's test reads, is assigned before the step"
    if not _follows_every_backward(parents, head, line, between):
        why = _fixed_across_calls(parents, func, clause.test)
        if why:
            return None, None, f"the step may not follow every backward, and {why}"
    return line, clause.test, ""


def follows_each_backward(parents: Any, scale_stmt: Any, step_call: Any) -> bool:
    """``step_call`` runs after the backward of ``scale_stmt`` on every run of their function
    that reaches that backward (the test ``_follows_every_backward`` makes)."""
    line = parents.get(parents.get(step_call))
    between = statements_between(parents, scale_stmt, line) if line is not None else None
    return between is not None and _follows_every_backward(parents, scale_stmt, line, between)


def _follows_every_backward(parents: Any, head: Any, line: Any, between: List[Any]) -> bool:
    """The step's line is in the block of the statement that holds the if-chain, and nothing
    between them leaves that block (a return, or a break or continue of an outer loop)."""
    holder = next(s for s in between if s is head or holds(parents, s, head))
    if parents.get(line) is not parents.get(holder):
        return False
    for stmt in between:
        for node in walk(stmt):
            if isinstance(node, cst.Return) and not _nested_def(parents, node, stmt):
                return False
            if isinstance(node, (cst.Break, cst.Continue)) and not _inner_loop(parents, node, stmt):
                return False
    return True


def _nested_def(parents: Any, node: Any, stop: Any) -> bool:
    cur = parents.get(node)
    while cur is not None and cur is not stop:
        if isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return True
        cur = parents.get(cur)
    return isinstance(stop, (cst.FunctionDef, cst.ClassDef))


def _inner_loop(parents: Any, node: Any, stop: Any) -> bool:
    """``node`` (a break or continue) belongs to a loop at or inside ``stop``."""
    cur = parents.get(node)
    while cur is not None:
        if isinstance(cur, (cst.For, cst.While)):
            return True
        if cur is stop:
            return False
        cur = parents.get(cur)
    return False


def _fixed_across_calls(parents: Any, func: Any, test: cst.BaseExpression) -> str:
    """"" where every name ``test`` reads is an attribute of ``self`` that only the class's
    ``__init__`` assigns in this file (and nothing calls ``setattr``); else why not."""
    cls = parents.get(parents.get(func))
    params = func.params.params
    if not isinstance(cls, cst.ClassDef) or not params or func.decorators:
        return f"its test {code_of(test).strip()} is not read from attributes of self"
    me = params[0].name.value
    attrs = set()
    for node in _leaves(test):
        if isinstance(node, cst.Name) and node.value in _CONSTANTS:
            continue
        if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == me):
            return f"{code_of(node)}, which its test reads, is no attribute of {me}"
        attrs.add(node.attr.value)
    module = _module_of(parents, cls)
    for node in walk(module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "setattr":
            return "the file calls setattr"
    for node in walk(module):
        for name in _targets(node):
            if name in attrs and not _in_init(parents, node, cls):
                where = _owner(parents, node)
                return f"{me}.{name}, which its test reads, is assigned outside {cls.name.value}.__init__ ({where})"
    return ""


def _targets(node: Any) -> List[str]:
    """The attribute names ``node`` itself assigns (``a.b.c = ...`` -> ``c``)."""
    return [n.attr.value for t in assignment_targets(node) for n in walk(t) if isinstance(n, cst.Attribute)]


def _leaves(test: cst.BaseExpression) -> List[Any]:
    """The outermost names and attributes ``test`` reads."""
    found: List[Any] = []

    def visit(node: Any) -> None:
        if isinstance(node, (cst.Name, cst.Attribute)):
            found.append(node)
            return
        for child in children(node):
            visit(child)

    visit(test)
    return found


def _module_of(parents: Any, node: Any) -> Any:
    while node in parents:
        node = parents[node]
    return node


def _owner(parents: Any, node: Any) -> str:
    """``in f()`` for the function holding ``node``, else ``at module level``."""
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, cst.FunctionDef):
        cur = parents.get(cur)
    return f"in {cur.name.value}()" if cur is not None else "outside any function"


def _in_init(parents: Any, node: Any, cls: cst.ClassDef) -> bool:
    cur = parents.get(node)
    while cur is not None:
        if isinstance(cur, cst.FunctionDef):
            return cur.name.value == "__init__" and parents.get(parents.get(cur)) is cls
        cur = parents.get(cur)
    return False


def test_branch(parents: Any, node: Any, tests: Set[str]) -> Tuple[str, Optional[cst.If]]:
    """Where ``node`` lies under the innermost if testing one of ``tests`` (their code):
    ``"scaled"`` in its body, ``"plain"`` in what follows its ``else`` or ``elif``, ``""``
    under none; and that if."""
    cur = node
    while cur in parents:
        parent = parents[cur]
        if isinstance(parent, cst.If) and code_of(parent.test).strip() in tests:
            if parent.body is cur:
                return "scaled", parent
            if parent.orelse is cur:
                return "plain", parent
        cur = parent
    return "", None


def opposite_sides(parents: Any, first: Any, second: Any) -> bool:
    """``first`` (a scaled backward) and ``second`` (a later clip) lie on opposite sides of
    two ifs with the same test, which reads nothing assigned between the two ifs (the shape
    ``_amp_shared_step`` leaves: never both on one run)."""
    cur = first
    while cur in parents:
        parent = parents[cur]
        if isinstance(parent, cst.If) and (parent.body is cur or parent.orelse is cur):
            test = code_of(parent.test).strip()
            side, other = test_branch(parents, second, {test})
            mine = "scaled" if parent.body is cur else "plain"
            if other is not None and other is not parent and side and side != mine and plain_test(parent.test):
                between = statements_between(parents, chain_tests(parents, parent)[0], other)
                names = set(read_names(parent.test))
                if between is not None and not {n for stmt in between for n in assigned(stmt)} & names:
                    return True
        cur = parent
    return False


def gradient_uses(parents: Any, func: Any, head: Any, test: cst.BaseExpression) -> str:
    """Why a gradient use of ``func`` (a clip, a norm, ``amp.master_params``, ``.grad``) is
    not provably on one side of the scaling test: outside every if testing it (it would see
    the scaled and the plain backward's gradients alike: an ``unscale_`` before it would run
    on the plain runs too), or under an if whose test names are assigned after the
    backward's if-chain; "" when every use is on one side."""
    tests = {code_of(test).strip()}
    read = set(read_names(test))
    for node in walk(func.body):
        if isinstance(node, cst.Call):
            callee = code_of(node.func)
            if not any(word in callee for word in ("clip", "grad_norm", "master_params")):
                continue
        elif not (isinstance(node, cst.Attribute) and node.attr.value == "grad"):
            continue
        shown = code_of(test).strip()
        branch = test_branch(parents, node, tests)[1]
        if branch is None:
            return f"{code_of(node)} reads the gradients of either backward, under no if testing {shown}"
        if branch is head or holds(parents, head, branch):
            continue
        between = statements_between(parents, head, branch)
        if between is None or {name for stmt in between for name in assigned(stmt)} & read:
            return f"{code_of(node)} is under an if testing {shown} whose names may change after the backward"
    return ""

