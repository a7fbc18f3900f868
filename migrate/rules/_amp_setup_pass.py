"""The setup pass of a training loop: an ``if`` in the loop that creates the optimizer and initializes.

AutoTinyBERT's shape::

    for epoch in range(args.epochs):
        if epoch < args.start:
            continue
        if epoch == args.start:
            optimizer = BertAdam(...)
            if args.fp16:
                model, optimizer = amp.initialize(model, optimizer, opt_level=...)
        ...  # every pass trains with the optimizer the setup pass left

The test of that ``if`` reads what the loop assigns anew on each pass, so a GradScaler created
after it with the test as its switch would be disabled on the later passes (APX220).  But when
each optimizer the initialize is given is created in the body of that ``if``, before the
initialize, and bound nowhere else in the function, a GradScaler created in that body (after the
``if args.fp16:`` holding the initialize, switched by the tests below the loop's ``if``) lives
exactly as long as the optimizer it scales: a later pass whose test fails keeps both from the
setup pass, a pass that sets up again makes both afresh (apex replaced its loss scalers on each
initialize too), and a path on which the setup never ran has no optimizer either, so the
original fails on the same read.  ``setup_pass`` finds that ``if``'s body statement; the rules
then create the GradScaler after it instead of refusing.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence

import libcst as cst

from ._edits import code_of
from ._tree import inside, walk


def setup_pass(parents: Any, site: Any, stale: Sequence[cst.If], func: Any) -> Optional[cst.BaseStatement]:
    """The statement of the innermost of ``stale`` (the ``if`` links whose tests read what a
    loop around them assigns on each pass, innermost first) whose body holds ``site``'s
    initialize, when the GradScaler may be created after it (the module's docstring says
    when); None otherwise."""
    if not stale or func is None or not site.optimizers:
        return None
    link = stale[0]
    holder = _statement_in(parents, site.stmt, link.body)
    if holder is None:
        return None
    if _caught_in_the_loop(parents, link):
        return None
    body = list(link.body.body)
    before = body[: body.index(holder)]
    for optimizer in site.optimizers:
        if not isinstance(optimizer, cst.Name):
            return None
        name = optimizer.value
        made = [i for i, stmt in enumerate(before) if _creates(stmt, name)]
        if not made or any(_jumps(stmt) for stmt in [*before[made[0] :], holder]):
            return None
        allowed = [*before, site.stmt]
        if any(not any(inside(parents, node, stmt) for stmt in allowed) for node in _bindings(func, name)):
            return None
    return holder


def _jumps(stmt: Any) -> bool:
    """Whether ``stmt`` may leave the setup body early without an exception (``continue``,
    ``break``, ``return``): the optimizer made, the GradScaler after it not."""
    return any(isinstance(node, (cst.Continue, cst.Break, cst.Return)) for node in walk(stmt))


def _caught_in_the_loop(parents: Any, link: Any) -> bool:
    """Whether a ``try`` between the setup ``if`` and its loop may catch what the setup body
    raises after making the optimizer, so that later passes go on with the optimizer made
    and the GradScaler not."""
    cur = parents.get(link)
    while cur is not None and not isinstance(cur, (cst.For, cst.While, cst.FunctionDef)):
        if isinstance(cur, cst.Try):
            return True
        cur = parents.get(cur)
    return False


def setup_pass_refusal(site: Any, info: Any) -> str:
    """Why the GradScaler of ``site`` (given a ``setup_if``) may not be created in the setup
    pass after all: the proof needs every use of the scaler to read the optimizer as well
    (a ``scale_loss`` or ``amp.master_params`` of it, the steps), in the same function, so
    that a path on which the setup never ran fails on that read in the original too.  A
    scaler kept on ``self``, used in another function, or read otherwise (its state, its
    scale) is not followed: ``site.setup_why`` then, with why; "" when the proof holds."""
    optimizers = {code_of(o) for o in site.optimizers}
    if info.storage != "local":
        return f"{site.setup_why}; {_BESIDE} would be kept on self, where other methods may read it first"
    for scaled in info.scale_losses:
        if scaled.func is not site.func or not {code_of(o) for o in scaled.optimizers} <= optimizers:
            return f"{site.setup_why}; {_BESIDE} would also serve a scale_loss of another function or optimizer"
    for need in info.needs:
        call = need.node
        read = code_of(call.args[0].value) if isinstance(call, cst.Call) and call.args else None
        if need.func is not site.func or need.kind != _READS_THE_OPTIMIZER or read not in optimizers:
            return f"{site.setup_why}; {_BESIDE} is also read where its optimizer is not (its state, its scale)"
    return ""


#: how the refusals name the GradScaler the setup pass would have made
_BESIDE = "one created in that if beside the optimizer it scales"

#: the one kind of use (``Need.kind``) besides ``scale_loss`` the setup pass follows: the
#: ``amp.master_params(optimizer)`` that reads the optimizer too
_READS_THE_OPTIMIZER = "master_params"


def _statement_in(parents: Any, stmt: Any, block: Any) -> Optional[cst.BaseStatement]:
    """The statement of ``block`` that is or holds ``stmt``."""
    cur = stmt
    while cur is not None:
        if parents.get(cur) is block:
            return cur
        cur = parents.get(cur)
    return None


def _creates(stmt: Any, name: str) -> bool:
    """Whether ``stmt`` is ``name = <call>`` (an optimizer made there, ``BertAdam(...)``)."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    assign = stmt.body[0]
    return (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and code_of(assign.targets[0].target) == name
        and isinstance(assign.value, cst.Call)
    )


def _bindings(func: Any, name: str) -> List[Any]:
    """The nodes of ``func`` (its parameters included) that bind ``name``, or may bind it in
    another scope (``global name``, a nested def or class of that name)."""
    found: List[Any] = []
    for node in walk(func):
        targets: List[Any] = []
        if isinstance(node, cst.Param):
            targets = [node.name]
        elif isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr)):
            targets = [node.target]
        elif isinstance(node, (cst.AsName, cst.Del)):
            targets = [node.name if isinstance(node, cst.AsName) else node.target]
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            targets = [item.name for item in node.names]
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node is not func:
            targets = [node.name]
        elif isinstance(node, cst.ImportAlias) and node.asname is None:
            targets = [node.name]
        if any(isinstance(n, cst.Name) and n.value == name for t in targets for n in walk(t)):
            found.append(node)
    return found

