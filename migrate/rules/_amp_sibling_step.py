"""The step of a reader's scaled backward in a sibling function (vissl's train step).

``run_backward(task, loss)`` scales through apex on one clause of an if-chain and runs plain
backwards on the others (``if task.amp_type == AmpType.APEX: <scale> elif ...: ... else:
loss.backward()``); no step follows there.  Its caller runs it and then, in the same block,
``run_optimizer_step(task)``, whose plain ``task.optimizer.step()`` sits alone in the ``else``
of a chain on the same switch (``if task.amp_type == AmpType.PYTORCH: <native> else: <step>``).

Where the module-level GradScaler of the reader route stands in, that step gets ``elif <the
scale clause's test>:`` stepping through it (``_amp_mirrored_step``), written in the sibling's
own names.  It holds exactly when the scale clause ran, provided that:

* each call of the scaling function is a statement (inside ``with`` blocks at most) followed,
  later in the same block, by a call of the sibling, and nothing else in the file names
  either function (a call that runs the backward without the step, or the step alone, would
  be another path);
* the tests read only the functions' parameters (passed the same names by the caller) and
  names neither function nor the caller's statements between the two calls bind, and call
  or index nothing;
* the step chain starts with the tests that lead to the scale clause, and each of its later
  clauses compares the same expression as the scale clause's test with another constant
  (``AmpType.PYTORCH`` against ``AmpType.APEX``; two members of one enum, or two literals):
  when the scale clause's test holds, none of them does and the plain step was the one run.

apex unscaled the gradients when the block exited, so whatever the caller runs between the
two calls (vissl's hooks, a clipping one among them) saw them unscaled: the scaled backward is
followed by ``scaler.unscale_(optimizer)`` (``ScaleLossSite.exit_unscale``), which the step
then does not repeat.  One scaled backward per step is then required: a second one before the
step raises in ``unscale_`` (loud, never a silent change).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import libcst as cst

from ._amp_mirrored_step import chain_tests, scale_clause
from ._edits import code_of
from ._tree import assignment_targets, children, enclosing_function, walk

#: a found step: the call, the ``else`` the new clause goes before, the test (sibling's names)
SiblingStep = Tuple[cst.Call, cst.Else, cst.BaseExpression]


def sibling_steps(
    rule: Any, func: cst.FunctionDef, with_stmt: cst.With, optimizer: cst.BaseExpression, heir: Callable[[Any], str]
) -> Tuple[List[SiblingStep], str, List[cst.FunctionDef]]:
    """The steps, as above, of ``optimizer`` (scaled in ``with_stmt`` of ``func``), each with
    the ``else`` and the test of its new clause, and the functions that call ``func`` (whose
    forward passes feed its loss); or [] and why not, said only where a sibling that steps
    the optimizer follows a call but does not fit ("" for every other shape, which is not
    this one) (``heir(f)``: the class of the repository that overrides the method ``f``, ""
    when none does)."""
    parents = rule.parents
    clause = scale_clause(parents, with_stmt, func)
    if clause is None:
        return [], "", []
    _head, lead = chain_tests(parents, clause)
    tests = [*lead, clause.test]
    if any(isinstance(n, (cst.Call, cst.Subscript, cst.Await, cst.NamedExpr, cst.Lambda)) for t in tests for n in walk(t)):
        return [], "", []
    if not isinstance(optimizer, (cst.Name, cst.Attribute)):
        return [], "", []
    owner = _owner(parents, func)
    if owner is None:
        return [], "", []
    params = _params(func, owner)
    roots = set().union(*(_roots(t) for t in [*tests, optimizer]))
    bound = _bound(func)
    if roots & bound or _attributes(tests) & _assigned_texts(func.body):
        return [], "", []
    if heir(func):
        return [], "", []
    calls = _calls_of(rule, func, owner)
    if not calls:
        return [], "", []
    found: List[SiblingStep] = []
    for call in calls:
        steps, why = _after_call(rule, call, func, owner, params, roots, tests, optimizer, heir)
        if not steps:
            return [], why, []
        found += [s for s in steps if all(s[0] is not f[0] for f in found)]
    return found, "", [c for c in dict.fromkeys(enclosing_function(parents, call) for call in calls) if c is not None]


def _owner(parents: Any, func: cst.FunctionDef) -> Optional[Any]:
    """The class ``func`` is defined in, or the module; None when nested in a function."""
    holder = parents.get(parents.get(func))
    if isinstance(holder, cst.ClassDef):
        return holder
    if isinstance(parents.get(func), cst.Module):
        return parents[func]
    return None


def _params(func: cst.FunctionDef, owner: Any) -> List[str]:
    """The parameters a call through ``self.<name>(...)`` (or ``<name>(...)``) fills in
    order: a plain method's first one is its instance."""
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    static = any(code_of(d.decorator) == "staticmethod" for d in func.decorators)
    return names[1:] if isinstance(owner, cst.ClassDef) and not static else names


def _roots(expr: cst.CSTNode) -> Set[str]:
    """The names a test or an optimizer expression starts its reads from (``task`` and
    ``AmpType`` in ``task.amp_type == AmpType.APEX``)."""
    found: Set[str] = set()

    def visit(node: cst.CSTNode) -> None:
        if isinstance(node, cst.Attribute):
            visit(node.value)
        elif isinstance(node, cst.Name):
            found.add(node.value)
        else:
            for child in children(node):
                visit(child)

    visit(expr)
    return found


def _attributes(tests: List[cst.BaseExpression]) -> Set[str]:
    return {code_of(n) for t in tests for n in walk(t) if isinstance(n, cst.Attribute)}


def _bound(func: cst.FunctionDef) -> Set[str]:
    """The bare names ``func`` binds in its body (its parameters excluded)."""
    out: Set[str] = set()
    for node in walk(func.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            out |= {n.name.value for n in node.names}
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            out.add(node.name.value)
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                name = alias.asname.name if alias.asname is not None else alias.name
                out.add(code_of(name).split(".")[0])
    return out | {t.split(".")[0] for t in _assigned_texts(func.body) if "." not in t}


def _assigned_texts(node: cst.CSTNode) -> Set[str]:
    """What ``node`` assigns, as code (``x``, ``task.amp_type``)."""
    out: Set[str] = set()
    for sub in walk(node):
        targets: List[Any] = assignment_targets(sub)
        if isinstance(sub, cst.ExceptHandler) and sub.name is not None:
            targets = [sub.name.name]
        elif isinstance(sub, cst.Del):
            targets = [sub.target]
        for target in targets:
            out |= {code_of(n) for n in walk(target) if isinstance(n, (cst.Name, cst.Attribute))}
    return out


def _functions(owner: Any) -> Dict[str, cst.FunctionDef]:
    body = owner.body.body if isinstance(owner, cst.ClassDef) else owner.body
    return {s.name.value: s for s in body if isinstance(s, cst.FunctionDef)}


def _callee(parents: Any, call: cst.Call, owner: Any) -> Optional[cst.FunctionDef]:
    """The function of ``owner`` that ``call`` runs: ``self.<name>(...)`` in a plain method
    of the same class, ``<name>(...)`` in a top-level function."""
    func = call.func
    caller = enclosing_function(parents, call)
    if caller is None or _owner(parents, caller) is not owner:
        return None
    if isinstance(owner, cst.ClassDef):
        static = any(code_of(d.decorator) in ("staticmethod", "classmethod") for d in caller.decorators)
        me = caller.params.params[0].name.value if caller.params.params and not static else None
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == me:
            return _functions(owner).get(func.attr.value)
        return None
    if isinstance(func, cst.Name):
        return _functions(owner).get(func.value)
    return None


def _calls_of(rule: Any, func: cst.FunctionDef, owner: Any) -> List[cst.Call]:
    """Every call of ``func`` in the file, when each is one ``_callee`` resolves and nothing
    else names it; else []."""
    name = func.name.value
    calls = [n for n in walk(rule.tree) if isinstance(n, cst.Call) and _callee(rule.parents, n, owner) is func]
    params = _params(func, owner)
    required = len([p for p in func.params.params if p.default is None]) - (len(func.params.params) - len(params))
    spelled = [
        n for n in walk(rule.tree)
        if (isinstance(n, cst.Attribute) and n.attr.value == name and not _too_few(rule.parents, n, required))
        or (isinstance(n, cst.Name) and n.value == name and not isinstance(rule.parents.get(n), (cst.FunctionDef, cst.Attribute)))
    ]
    return calls if calls and len(spelled) == len(calls) else []


def _too_few(parents: Any, attribute: cst.Attribute, required: int) -> bool:
    """``loss.backward()`` beside a method ``backward(self, engine, loss)``: a call through
    ``attribute`` with fewer arguments than the method requires runs something else."""
    call = parents.get(attribute)
    return (
        isinstance(call, cst.Call) and call.func is attribute and not any(a.star for a in call.args)
        and len(call.args) < required
    )


def _unwrapped(parents: Any, stmt: Any) -> Any:
    """The statement holding ``stmt`` through ``with`` blocks only."""
    while True:
        block = parents.get(stmt)
        holder = parents.get(block)
        if isinstance(block, cst.IndentedBlock) and isinstance(holder, cst.With) and len(block.body) == 1:
            stmt = holder
            continue
        return stmt


def _inner_call(stmt: Any) -> Optional[cst.Call]:
    """The call a statement is, through ``with`` blocks holding only it."""
    while isinstance(stmt, cst.With) and isinstance(stmt.body, cst.IndentedBlock) and len(stmt.body.body) == 1:
        stmt = stmt.body.body[0]
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
        value = stmt.body[0].value
        return value if isinstance(value, cst.Call) else None
    return None


def _arguments(call: cst.Call, params: List[str]) -> Optional[Dict[str, str]]:
    """Parameter -> the name passed for it; None when an argument is starred."""
    out: Dict[str, str] = {}
    for index, arg in enumerate(call.args):
        if arg.star:
            return None
        key = arg.keyword.value if arg.keyword is not None else (params[index] if index < len(params) else None)
        if key is not None and isinstance(arg.value, cst.Name):
            out[key] = arg.value.value
    return out


def _renamed(expr: cst.BaseExpression, names: Dict[str, str]) -> str:
    """``expr`` as code with its root names replaced."""

    class Renamer(cst.CSTTransformer):
        def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.Attribute:
            return updated.with_changes(attr=original.attr)

        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            return updated.with_changes(value=names.get(original.value, original.value))

    return code_of(expr.visit(Renamer()))


def _after_call(
    rule: Any,
    call: cst.Call,
    func: cst.FunctionDef,
    owner: Any,
    params: List[str],
    roots: Set[str],
    tests: List[cst.BaseExpression],
    optimizer: cst.BaseExpression,
    heir: Callable[[Any], str],
) -> Tuple[List[SiblingStep], str]:
    parents = rule.parents
    name = func.name.value
    line = parents.get(parents.get(call))
    if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and _inner_call(line) is call):
        return [], ""
    stmt = _unwrapped(parents, line)
    block = parents.get(stmt)
    if not isinstance(block, cst.IndentedBlock):
        return [], ""
    caller = enclosing_function(parents, call)
    passed = _arguments(call, params)
    if passed is None or caller is None:
        return [], ""
    # the caller's names for what the tests and the optimizer read (globals keep theirs)
    outside = roots - set(params)
    if any(p not in passed for p in roots & set(params)):
        return [], ""
    here = {p: passed[p] for p in roots & set(params)}
    if outside & (_bound(caller) | {p.name.value for p in caller.params.params}):
        return [], ""
    body = list(block.body)
    between: List[Any] = []
    for later in body[body.index(stmt) + 1:]:
        inner = _inner_call(later)
        sibling = _callee(parents, inner, owner) if inner is not None else None
        if sibling is None or sibling is func:
            between.append(later)
            continue
        steps, why = _sibling(rule, inner, sibling, owner, here, outside, tests, optimizer, heir)
        if why:
            return [], why
        if not steps:
            between.append(later)
            continue
        read = {_renamed(t, here) for t in tests} | {
            _renamed(n, here) for t in tests for n in walk(t) if isinstance(n, (cst.Attribute, cst.Name))
        }
        rebound = sorted(read & set().union(*(_assigned_texts(s) for s in [stmt, *between, later])))
        if rebound:
            return [], f"{caller.name.value}() assigns {rebound[0]}, which the tests read, between {name}() and its step"
        return steps, ""
    return [], ""


def _sibling(
    rule: Any,
    call: cst.Call,
    sibling: cst.FunctionDef,
    owner: Any,
    here: Dict[str, str],
    outside: Set[str],
    tests: List[cst.BaseExpression],
    optimizer: cst.BaseExpression,
    heir: Callable[[Any], str],
) -> Tuple[List[SiblingStep], str]:
    """The steps of ``sibling`` (called by ``call``) as above; ([], "") when it steps nothing
    the scale names, ([], why) when it does but not in the mirrored shape."""
    parents = rule.parents
    params = _params(sibling, owner)
    passed = _arguments(call, params)
    given = {v: k for k, v in (passed or {}).items()}
    if passed is None or any(v not in given for v in here.values()):
        return [], ""
    theirs = {p: given[v] for p, v in here.items()}
    opt_text = _renamed(optimizer, theirs)
    steps = [
        n for n in walk(sibling.body)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
        and code_of(n.func.value) == opt_text
    ]
    if not steps:
        return [], ""
    label = f"{sibling.name.value}()"
    if heir(sibling):
        return [], f"{heir(sibling)} overrides {label}, which steps {opt_text}"
    if outside & (_bound(sibling) | set(params)):
        return [], f"{label} binds a name the tests read"
    mine = [_renamed(t, theirs) for t in tests]
    if {_renamed(n, theirs) for t in tests for n in walk(t) if isinstance(n, cst.Attribute)} & _assigned_texts(sibling.body):
        return [], f"{label} assigns what the tests read"
    found: List[SiblingStep] = []
    for step in steps:
        line = parents.get(parents.get(step))
        else_node = parents.get(parents.get(line))
        last = parents.get(else_node)
        if not (
            isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 and isinstance(else_node, cst.Else)
            and isinstance(last, cst.If) and enclosing_function(parents, step) is sibling
        ):
            return [], f"{code_of(step)} in {label} is not alone in the else of an if-chain"
        if any(isinstance(n, (cst.For, cst.While)) for n in _ancestors(parents, last, sibling)):
            return [], f"{code_of(step)} in {label} is in a loop"
        _head, leading = chain_tests(parents, last)
        step_tests = [code_of(t) for t in [*leading, last.test]]
        scale_lead, scale_test = mine[:-1], cst.parse_expression(mine[-1])
        if step_tests[: len(scale_lead)] != scale_lead:
            return [], f"the if-chain of {code_of(step)} in {label} does not start with the tests that lead to the scaling branch"
        others = [*leading, last.test][len(scale_lead):]
        if others and _mirrored(last, mine[-1], opt_text):
            others.pop()  # the step rule, which runs first, added this clause
        if not all(_exclusive(cst.parse_expression(code_of(t)), scale_test) for t in others):
            return [], (
                f"a test of the if-chain of {code_of(step)} in {label} may hold together with the scaling branch's "
                f"`{mine[-1]}`"
            )
        found.append((step, else_node, scale_test))
    return found, ""


def _mirrored(clause: cst.If, test: str, opt_text: str) -> bool:
    """``elif <test>: <scaler>.step(<opt>); <scaler>.update()``: the clause this module has
    the step rule add (the later rules see the file with it)."""
    body = clause.body.body if isinstance(clause.body, cst.IndentedBlock) else ()
    texts = [code_of(s).strip() for s in body]
    return (
        code_of(clause.test) == test and len(texts) == 2
        and texts[0].endswith(f".step({opt_text})") and texts[1] == texts[0][: -len(f".step({opt_text})")] + ".update()"
    )


def _ancestors(parents: Any, node: Any, stop: Any) -> List[Any]:
    out = []
    cur = parents.get(node)
    while cur is not None and cur is not stop:
        out.append(cur)
        cur = parents.get(cur)
    return out


def _exclusive(a: cst.BaseExpression, b: cst.BaseExpression) -> bool:
    """``x == C1`` and ``x == C2`` (or ``is``) with the same ``x`` and two different
    constants: two literals of different values, or two differently named members of one
    dotted name (an enum's: only an alias could make them equal)."""
    sides = [_compared(a), _compared(b)]
    if None in sides:
        return False
    (left_a, const_a), (left_b, const_b) = sides  # type: ignore[misc]
    if code_of(left_a) != code_of(left_b):
        return False
    if isinstance(const_a, cst.Attribute) and isinstance(const_b, cst.Attribute):
        return code_of(const_a.value) == code_of(const_b.value) and const_a.attr.value != const_b.attr.value
    literal = (cst.SimpleString, cst.Integer)
    if isinstance(const_a, literal) and isinstance(const_b, literal):
        return type(const_a) is type(const_b) and const_a.evaluated_value != const_b.evaluated_value
    return False


def _compared(test: cst.BaseExpression) -> Optional[Tuple[cst.BaseExpression, cst.BaseExpression]]:
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.Is)):
        return None
    return test.left, target.comparator
