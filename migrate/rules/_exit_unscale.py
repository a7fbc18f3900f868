"""A gradient use inside ``with amp.scale_loss(...)``, after the backward.

Under O1 apex's gradients there are this backward's only, times the loss scale, and apex
unscaled them when the block exited (GPT2-Chinese's ``clip_grad_norm_(amp.master_params(
optimizer), max_norm)`` in the block clips the scaled gradients at ``max_norm``).  Natively
the statement stays after ``scaler.scale(loss).backward()`` on the scaled gradients and
``scaler.unscale_(optimizer)`` follows it where the block ended: the same operation, as long
as no earlier backward's gradients are in them, that is when every backward is a step.  That
holds when the optimizer's one step follows the block in the same loop body, unconditionally
or under ``if <x> % K == 0:`` with ``K`` 1 under the default flags, and every training
``amp.initialize`` of the file runs O1 under the default flags: no opt_level (apex's default),
the literal ``"O1"``, a choice of literals among O1 and O0 (amp off: no scaling to undo), or a
level read from a flag of the file whose default is one of those (GPT2-Chinese's
``opt_level=fp16_opt_level``, ``--fp16_opt_level`` default "O1").  Such a flag can select O2,
where the block's ``amp.master_params`` are the fp32 master weights, whose gradients apex fills
only when the block exits (None inside it after ``zero_grad``): apex's clip there did nothing,
while the native clip cuts the scaled gradients.  As for the O2 clip of ``model.parameters()``
after the block, that run is not the default one: the finding names the level and says so
(``run_time_levels``).  A level read at run time with no such default (a config, a parameter)
is refused and the file keeps apex.amp through the shim.  With ``K > 1`` the next backward's
``unscale_`` raises.
"""

from __future__ import annotations

from typing import Any, Optional, Set, Tuple

import libcst as cst

from ._default_flags import bound_once, default_literal, every_time_by_default, parser_factories
from ._edits import code_of

#: the file state key: None when this file's training initializes are not proven O1 under the
#: default flags, else the opt levels among them read from a flag (their code; empty when
#: every level is O1 on every run), for the rules that run after the initialize rule removed them
O1_KEY = "o1_by_default"
#: the opt levels under which the parameters' gradients inside the block are this backward's
#: (scaled under O1, plain under O0 where amp is off), as after ``scaler.scale(loss).backward()``
BLOCK_HOLDS_THIS_BACKWARD = frozenset({"O0", "O1"})


def exit_unscale_count(rule: Any, module: cst.Module, call: Any, block: cst.With, info: Any) -> Optional[str]:
    """For ``call`` (a gradient use) in the scale_loss statement ``block``: the accumulation
    count that is 1 by default ("" when the step is unconditional) when the use can stay on
    the scaled gradients with ``unscale_`` after the block, as above; None otherwise (also
    where another amp.scale_loss of the function comes before the same step: two backwards
    per step, whose second ``unscale_`` would raise)."""
    from ._amp_sites import enclosing_function, find_steps

    if not _o1_on_every_run(rule, module, info):
        return None
    body = block.body.body if isinstance(block.body, cst.IndentedBlock) else ()
    stmt = rule.statement_of(call)
    if stmt not in body or body.index(stmt) == 0:
        return None
    site = next((s for s in info.scale_losses if s.with_stmt is block), None)
    if site is None or site.func is None or len(site.optimizers) != 1:
        return None
    opt = code_of(site.optimizers[0])
    steps = find_steps(rule, site, opt)
    if len(steps) != 1 or enclosing_function(rule.parents, steps[0]) is not site.func:
        return None
    others = [s for s in info.scale_losses if s is not site and s.func is site.func]
    if any(steps[0] in find_steps(rule, other, opt) for other in others):
        return None  # another backward before the same step: not every backward is a step
    step_stmt = rule.statement_of(steps[0])
    if not (isinstance(step_stmt, cst.SimpleStatementLine) and len(step_stmt.body) == 1):
        return None
    on_the_way = _blocks_up_to_the_loop(rule.parents, block)
    holder = rule.parents.get(step_stmt)
    if _after(holder, step_stmt, on_the_way):
        return ""
    guard = rule.parents.get(holder)
    if not (isinstance(guard, cst.If) and guard.body is holder and guard.orelse is None):
        return None
    if not _after(rule.parents.get(guard), guard, on_the_way):
        return None
    return every_time_by_default(module, site.func, guard.test, parser_factories(rule))


def _after(block: Any, stmt: Any, on_the_way: dict) -> bool:
    """Whether ``stmt`` of ``block`` comes after the statement of ``block`` that holds the
    scale_loss statement."""
    if block not in on_the_way:
        return False
    statements = list(block.body)
    return statements.index(stmt) > statements.index(on_the_way[block])


def _blocks_up_to_the_loop(parents: dict, node: Any) -> dict:
    """The blocks around ``node`` inside its innermost loop (a step in one of them, after
    it, follows each of its passes), each with its statement on the way to ``node``."""
    found = {}
    cur = node
    while True:
        parent = parents.get(cur)
        if parent is None or isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return found
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            found[parent] = cur
        if isinstance(parent, (cst.For, cst.While)):
            return found
        cur = parent


def run_time_levels(rule: Any) -> Tuple[str, ...]:
    """The opt levels (their code) of the file's training initializes that a flag gives,
    O1 (or O0) by default: a run with that flag at O2 clips otherwise than apex did."""
    return tuple(rule.file_state().get(O1_KEY) or ())


def _o1_on_every_run(rule: Any, module: cst.Module, info: Any) -> bool:
    """Every training initialize of the file runs O1 (or O0) under the default flags;
    remembered, with the levels read from a flag, for the rules that run after the initialize
    is gone (never proven for an initialize of another file)."""
    from ._amp_sites import arg_value

    state = rule.file_state()
    training = [s for s in info.inits if s.has_optimizers and not s.old_api]
    if not training:
        return state.get(O1_KEY) is not None
    flagged = []
    proven = True
    for site in training:
        level = arg_value(site.call, 3, "opt_level")
        if site.options is not None:
            proven = False
        elif level is None:
            continue  # apex's own default, O1
        elif (written := opt_levels(site.func, level)) is not None:
            proven = proven and written <= BLOCK_HOLDS_THIS_BACKWARD
        elif default_literal(module, site.func, level, parser_factories(rule)) in BLOCK_HOLDS_THIS_BACKWARD:
            flagged.append(code_of(level))
        else:
            proven = False
    state[O1_KEY] = tuple(flagged) if proven else None
    return proven


def opt_levels(func: Any, level: cst.BaseExpression) -> Optional[Set[str]]:
    """The opt levels ``level`` can give on any run: string literals (or a conditional of
    them), directly or through a local that ``func`` binds once to them; None for anything
    read at run time (a flag, a config, a parameter)."""
    from ._run_time_loss_scale import literal_levels

    if isinstance(level, cst.Name) and isinstance(func, cst.FunctionDef):
        bound = bound_once(func, level.value)
        if bound is None or isinstance(bound, cst.Name):
            return None
        level = bound
    return literal_levels(level) or None
