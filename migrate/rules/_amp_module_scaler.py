"""The module-scaler route of one file: where no call chain hands the GradScaler from the
function that initializes to the functions that scale (the cross-file plan's
``module_scaler``), the file keeps it in a module-level variable instead, as apex kept its
loss scalers per process.

The variable starts as None with a comment saying what it replaced; the initializing
function declares it ``global`` and assigns the GradScaler where ``amp.initialize`` was;
the other functions read it by name when they run.  A site run before the initializer
fails on None, as apex's ``amp.scale_loss`` raised before ``amp.initialize``.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._tree import children, enclosing_function, is_docstring, names_spelled

#: the comment above the module-level variable
COMMENT = "# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler"


def module_route(rule: Any, training: List[Any], unreached: List[Any], home: Any, info: Any) -> Tuple[bool, str]:
    """Whether the functions in ``unreached`` may read the GradScaler from a module-level
    variable that ``home`` (the one initializing function) assigns; when not, why not where
    only the initializer's own shape stands in the way ("" otherwise)."""
    plan = info.plan
    stand_in = "nor can a module-level GradScaler stand in"
    if plan is not None and plan.module_refusal:
        return False, f"{stand_in}: {plan.module_refusal}"
    if plan is None or not plan.module_scaler:
        return False, ""
    refused = False, ""
    parents = rule.parents
    if len(training) != 1 or info.absorbed or info.alternatives or info.storage != "local":
        return refused
    if info.fallback is not None or info.scaler_in_branch or info.run_once is not None or info.carrier is not None:
        return refused
    if info.returned_to or info.entry_functions or info.received or info.class_threaded:
        return refused
    if not isinstance(home, cst.FunctionDef) or not isinstance(parents.get(home), cst.Module):
        return refused
    if not all(
        isinstance(func, cst.FunctionDef) and func is not home and isinstance(parents.get(func), cst.Module)
        for func in unreached
    ):
        return refused
    for scaled in info.scale_losses:
        handed = _parameters_in(scaled.func, scaled.loss) if scaled.func in unreached else []
        if handed:
            return False, (
                f"{stand_in}: the loss {scaled.func.name.value}() scales comes in as its parameter {handed[0]}, "
                "computed by callers that may be in other files, whose forward passes the autocast "
                "placed here would not cover"
            )
    site = training[0]
    anchor, guards = _past_availability_try(parents, site, home)
    if parents.get(anchor) is not home.body or site.hoist_before is not None:
        return False, (
            f"{stand_in}: the amp.initialize of {home.name.value}() is inside a statement other than an if "
            "(a loop, a with, a try), so a path through it could leave that variable unset"
        )
    if _returns_before(home, anchor):
        return False, (
            f"{stand_in}: {home.name.value}() may return before its amp.initialize, which would leave that "
            "variable unset"
        )
    early = _run_before_home(rule, [f for f in unreached if not _sets_it_first(rule, f, home, info)], home)
    if early:
        return False, f"{stand_in}: {early}"
    site.anchor, site.guards = anchor, guards
    return True, ""


def _run_before_home(rule: Any, funcs: List[Any], home: cst.FunctionDef) -> str:
    """Why a module-level call of one of ``funcs`` (a script's ``main(...)`` in its
    ``__main__`` guard) may run before ``home`` has set the variable ("" when none may):
    each must follow, in its own block, a statement of that block that calls ``home``; in a
    script (a ``__main__`` guard), no other function of the file may call one of them."""
    from ._amp_sites import is_main_guard  # (a cycle at import time)

    parents = rule.parents
    script = any(is_main_guard(parents, stmt) for stmt in rule.tree.body)
    for func in funcs:
        for name in names_spelled(rule.tree, func.name.value):
            call = parents.get(name)
            caller = enclosing_function(parents, name)
            if name is func.name or caller is func:
                continue
            if caller is not None and script:
                # the guard may run that function before the initializer: followed no further
                return (
                    f"{func.name.value}() is also used in {caller.name.value}() (line {rule.line_of(name)}), "
                    f"which this script's __main__ guard may run before {home.name.value}() sets that variable"
                )
            if caller is not None:
                continue
            if not (isinstance(call, cst.Call) and call.func is name and _after_a_call_of(parents, call, home)):
                return (
                    f"{func.name.value}() is run at module level (line {rule.line_of(name)}) where no call "
                    f"of {home.name.value}() before it in the same block would have set that variable"
                )
    return ""


def _sets_it_first(rule: Any, func: cst.FunctionDef, home: cst.FunctionDef, info: Any) -> bool:
    """Whether every amp site of ``func`` (a scale_loss, a use of the scaler) is in a statement
    of its body after one that calls ``home`` (unilm's ``train()``: ``model, optimizer =
    prepare_for_training(...)`` first): the variable is set there whoever runs ``func``."""
    parents = rule.parents
    body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
    first = next((i for i, stmt in enumerate(body) if _calls_home(stmt, home)), None)
    if first is None:
        return False
    later = set(body[first + 1 :])
    sites = [s.with_stmt for s in info.scale_losses if s.func is func] + [n.node for n in info.needs if n.func is func]
    return bool(sites) and all(any(a in later for a in [node] + _ancestors(parents, node)) for node in sites)


def _calls_home(stmt: Any, home: cst.FunctionDef) -> bool:
    """``stmt`` is a one-statement line whose value is a call of ``home``."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == home.name.value


def _after_a_call_of(parents: Any, call: cst.Call, home: cst.FunctionDef) -> bool:
    """Whether the statement holding ``call`` follows, in its block, a one-statement line
    whose value is a call of ``home`` (``model, opt = setup(args)``)."""
    line = parents.get(call)
    while line is not None and not isinstance(line, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        line = parents.get(line)
    block = parents.get(line)
    body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    for stmt in body[: body.index(line)] if line in body else []:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == home.name.value:
            return True
    return False


def reader_home(rule: Any, training: List[Any], home_info: Any) -> str:
    """Why the one initialize of the reader route's home (its files read the GradScaler
    through this module) cannot assign a module-level variable on every path that reaches
    it ("" when it can)."""
    stand_in = (
        "no amp.scale_loss in this file, and the module-level GradScaler the other files would read cannot be set here"
    )
    if len(training) != 1 or home_info.absorbed or home_info.alternatives or training[0].old_api:
        return f"{stand_in}: amp.initialize is called more than once"
    site = training[0]
    home = site.func
    parents = rule.parents
    if not isinstance(home, cst.FunctionDef) or any(
        isinstance(n, (cst.FunctionDef, cst.Lambda)) for n in _ancestors(parents, home)
    ):
        return f"{stand_in}: amp.initialize is not in a function or method of its own"
    anchor, guards = _past_availability_try(parents, site, home)
    if parents.get(anchor) is not home.body or site.hoist_before is not None:
        return (
            f"{stand_in}: the amp.initialize of {home.name.value}() is inside a statement other than an if "
            "(a loop, a with, a try), so a path through it could leave that variable unset"
        )
    if _returns_before(home, anchor):
        name = home.name.value
        return f"{stand_in}: {name}() may return before its amp.initialize, which would leave that variable unset"
    if anchor is not site.stmt and leaves_after(parents, site.stmt, anchor):
        # mmgeneration's ``if mode == "gan": <initialize> ... return models, optimizers``: the
        # GradScaler goes where amp.initialize was, as code after the if would not run; the
        # other paths leave the variable None, as apex was not set up there
        anchor, guards = site.stmt, []
    site.anchor, site.guards = anchor, guards
    home_info.storage = "local"
    return ""


def leaves_after(parents: Any, stmt: Any, anchor: Any) -> bool:
    """A ``return`` or ``raise`` of ``anchor`` (a statement holding ``stmt``) in a block that
    holds ``stmt`` or one of its enclosing statements, after it: the code after ``anchor``
    does not run on that path."""
    cur = stmt
    while cur is not anchor and cur in parents:
        block = parents[cur]
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        if cur in body:
            later = body[body.index(cur) + 1 :]
            if any(isinstance(n, (cst.Return, cst.Raise)) for s in later for n in _own_nodes(s)):
                return True
        cur = block
    return False


def _ancestors(parents: Any, node: Any) -> List[Any]:
    found = []
    while node in parents:
        node = parents[node]
        found.append(node)
    return found


def _parameters_in(func: cst.FunctionDef, expr: Any) -> List[str]:
    """The parameters of ``func`` that ``expr`` names."""
    params = {p.name.value for p in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)}
    return sorted({n.value for n in _own_nodes(expr) if isinstance(n, cst.Name) and n.value in params})


def _past_availability_try(parents: Any, site: Any, home: cst.FunctionDef) -> Tuple[Any, List[Any]]:
    """The statement of ``home``'s body after which the GradScaler is created, and the tests
    that switch it: bonito's ``if use_amp: try: <initialize> except NameError: <exit>`` (apex
    not installed) is looked through to the ``if``, since the native path always runs."""
    stmt = site.stmt
    block = parents.get(stmt)
    owner = parents.get(block) if block is not None else None
    if site.anchor is not stmt or not availability_try(owner, block):
        return site.anchor, site.guards
    if_block = parents.get(owner)
    if_stmt = parents.get(if_block) if if_block is not None else None
    if (
        not isinstance(if_stmt, cst.If)
        or if_stmt.body is not if_block
        or parents.get(if_stmt) is not home.body
        or if_stmt.orelse is not None
    ):
        return site.anchor, site.guards
    return if_stmt, [if_stmt.test]


def initialize_only_try(owner: Any, block: Any) -> bool:
    """``owner`` is a ``try:`` whose body ``block`` is the initialize statement alone, without
    ``else`` or ``finally`` (cryodrgn: ``try: model, optim = amp.initialize(...)`` / ``except:
    scaler = torch.cuda.amp.GradScaler()``): once the initialize is native nothing in the body
    can raise, so its handlers never run and the code after the try runs wherever the
    initialize did; the scaler goes after it, where it exists on every path."""
    return (
        isinstance(owner, cst.Try)
        and owner.body is block
        and len(block.body) == 1
        and owner.orelse is None
        and owner.finalbody is None
    )


def availability_try(owner: Any, block: Any) -> bool:
    """``owner`` is a ``try:`` whose body ``block`` is the initialize alone and whose handlers
    all catch NameError (apex not installed, so ``amp`` unbound): nothing in it can raise
    that once the initialize is native."""
    return (
        initialize_only_try(owner, block)
        and bool(owner.handlers)
        and all(isinstance(h.type, cst.Name) and h.type.value == "NameError" for h in owner.handlers)
    )


def _returns_before(home: cst.FunctionDef, anchor: Any) -> bool:
    """A ``return`` of ``home`` itself in a statement before ``anchor``."""
    for stmt in home.body.body:
        if stmt is anchor:
            return False
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue  # a nested definition's returns are its own
        if any(isinstance(n, cst.Return) for n in _own_nodes(stmt)):
            return True
    return False


def _own_nodes(node: Any) -> List[Any]:
    """``node`` and its descendants, nested functions, lambdas and classes left out."""
    found = [node]
    for child in children(node):
        if not isinstance(child, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            found.extend(_own_nodes(child))
    return found


def first_body_statement(func: cst.FunctionDef) -> Optional[Any]:
    """The first statement of ``func`` after its docstring (None when the docstring is all)."""
    body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
    if body and is_docstring(body[0]):
        body = body[1:]
    return body[0] if body else None


def first_definition(module: cst.Module) -> Optional[Any]:
    """The first top-level ``def`` or ``class`` of ``module``: the variable goes before it."""
    return next((s for s in module.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))), None)


def module_variable(module: cst.Module) -> Optional[str]:
    """The name of the module-level GradScaler this route made in ``module`` (the later rules
    read the rewritten text): a top-level ``name = None`` under :data:`COMMENT` that some
    top-level function or method of a top-level class declares ``global``; None when there
    is none."""
    for stmt in module.body:
        if not (
            isinstance(stmt, cst.SimpleStatementLine)
            and any(line.comment is not None and line.comment.value == COMMENT for line in stmt.leading_lines)
            and len(stmt.body) == 1
            and isinstance(stmt.body[0], cst.Assign)
            and len(stmt.body[0].targets) == 1
            and isinstance(stmt.body[0].targets[0].target, cst.Name)
        ):
            continue
        name = stmt.body[0].targets[0].target.value
        # a top-level function, or a method of a top-level class (the reader route's home
        # may initialize in one: vissl's task)
        methods = [
            member for cls in module.body if isinstance(cls, cst.ClassDef) and isinstance(cls.body, cst.IndentedBlock)
            for member in cls.body.body if isinstance(member, cst.FunctionDef)
        ]
        functions = [func for func in module.body if isinstance(func, cst.FunctionDef)] + methods
        if any(_declares_global(func, name) for func in functions):
            return name
    return None


def _declares_global(func: cst.FunctionDef, name: str) -> bool:
    body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
    return any(
        isinstance(stmt, cst.SimpleStatementLine)
        and any(isinstance(s, cst.Global) and any(n.name.value == name for n in s.names) for s in stmt.body)
        for stmt in body
    )
