"""The branch a step needs where its GradScaler may not exist: mmgeneration's train steps scale
through apex only on one branch of an if-chain (``if loss_scaler: ... elif use_apex_amp: <scale>
else: loss.backward()``) and step in the ``else`` of a second chain with the same leading tests
(``if loss_scaler: ... else: optimizer.step()``), which runs for apex and for plain fp32 alike.

Where the GradScaler is a module-level variable set only when apex was set up (None otherwise,
as apex's state was empty), ``scaler.step`` in that ``else`` would fail on every fp32 run.  The
second chain takes the apex branch's test as an ``elif`` of its own instead, the plain step
kept in its ``else``: it holds exactly when the first chain reached the scale (the same leading
tests were false and the same test true), provided no name those tests read is assigned between
the two chains and the tests call nothing (a call could answer differently the second time).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._edits import code_of, statement
from ._tree import assignment_targets, walk

#: why ``mirrored_guard`` refuses a step that is no plain step alone in an ``else``
NOT_IN_ELSE = "the step is not alone in the else of an if-chain"


def chain_tests(parents: Any, clause: cst.If) -> Tuple[cst.If, List[cst.BaseExpression]]:
    """The first clause of the if-chain ``clause`` belongs to (``elif`` clauses are Ifs in
    their predecessor's ``orelse``) and the tests of the clauses before ``clause``."""
    tests: List[cst.BaseExpression] = []
    head = clause
    while isinstance(parents.get(head), cst.If) and parents[head].orelse is head:
        head = parents[head]
        tests.insert(0, head.test)
    return head, tests


def scale_clause(parents: Any, node: Any, stop: Any) -> Optional[cst.If]:
    """The innermost If clause whose body holds ``node`` (below ``stop``)."""
    cur = node
    while cur is not None and cur is not stop:
        parent = parents.get(cur)
        if isinstance(parent, cst.If) and parent.body is cur:
            return parent
        cur = parent
    return None


def plain_test(test: cst.BaseExpression) -> bool:
    """A test of names and attributes joined by ``not``/``and``/``or`` and comparisons, no
    call or subscript (whose value could change between the two chains)."""
    return not any(isinstance(n, (cst.Call, cst.Subscript, cst.Await, cst.NamedExpr)) for n in walk(test))


def read_names(test: cst.BaseExpression) -> List[str]:
    found = []
    for node in walk(test):
        if isinstance(node, (cst.Name, cst.Attribute)):
            found.append(code_of(node))
    return found


def assigned(stmt: Any) -> List[str]:
    out = []
    for node in walk(stmt):
        for target in assignment_targets(node):
            out.extend(code_of(n) for n in walk(target) if isinstance(n, (cst.Name, cst.Attribute)))
    return out


def mirrored_guard(parents: Any, func: Any, scale_stmt: Any, step_call: cst.Call) -> Tuple[Optional[cst.If], str]:
    """For ``step_call`` (``optimizer.step()``, alone on its line in the ``else`` of an
    if-chain) and ``scale_stmt`` (the scaled backward, inside one clause of an earlier
    if-chain of ``func``): the step chain's last clause, to which an ``elif <the scale
    clause's test>`` goes (``scale_clause(...)`` gives that clause), and "" -- or None and
    why not."""
    line = parents.get(parents.get(step_call))
    block = parents.get(line)
    else_node = parents.get(block)
    if not (
        isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and isinstance(else_node, cst.Else)
        and isinstance(parents.get(else_node), cst.If)
    ):
        return None, NOT_IN_ELSE
    last = parents[else_node]
    guard = scale_clause(parents, scale_stmt, func)
    if guard is None:
        return None, "the scaled backward is under no if"
    scale_head, scale_tests = chain_tests(parents, guard)
    step_head, step_tests = chain_tests(parents, last)
    step_tests.append(last.test)
    if [code_of(t) for t in step_tests] != [code_of(t) for t in scale_tests]:
        return None, "its if-chain does not test what the scaled backward's if-chain tests before the scaling branch"
    tests = [*scale_tests, guard.test]
    if not all(plain_test(t) for t in tests):
        return None, "a test of the scaled backward's if-chain calls or indexes something"
    read = {name for t in tests for name in read_names(t)}
    between = statements_between(parents, scale_head, step_head)
    if between is None:
        return None, "the two if-chains are not in one function body"
    rebound = sorted({name for stmt in between for name in assigned(stmt)} & read)
    if rebound:
        return None, f"{rebound[0]}, which the tests read, is assigned between the two if-chains"
    return last, ""


def statements_between(parents: Any, first: Any, second: Any) -> Optional[List[Any]]:
    """The statements that may run from ``first`` up to ``second`` (a superset): going up from
    ``second``, the earlier siblings of it and of its ancestors, back to the statement that
    holds ``first`` (``first`` itself, or a loop around it: mmgeneration accumulates the
    generator's scaled backwards in a loop and steps after it); None when no block of the
    same function holds both."""
    found: List[Any] = []
    cur = second
    while cur is not None:
        block = parents.get(cur)
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            body = list(block.body)
            earlier = body[: body.index(cur)]
            holder = next((s for s in earlier if s is first or holds(parents, s, first)), None)
            if holder is not None:
                found.extend(earlier[earlier.index(holder) :])
                return found
            found.extend(earlier)
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
        cur = block
    return None


def holds(parents: Any, outer: Any, node: Any) -> bool:
    while node in parents:
        node = parents[node]
        if node is outer:
            return True
    return False


def apex_branch(test: cst.BaseExpression, scaler: str, optimizer: str, orelse: cst.Else) -> cst.If:
    """``elif <test>:`` stepping ``optimizer`` through ``scaler`` and updating it, before
    ``orelse`` (the plain step's ``else``)."""
    body = cst.IndentedBlock(body=[statement(f"{scaler}.step({optimizer})\n"), statement(f"{scaler}.update()\n")])
    return cst.If(test=test, body=body, orelse=orelse)
