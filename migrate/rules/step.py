"""APX311-APX314: the optimizer step apex patched -> ``scaler.step(optimizer)``, then one
``scaler.update()`` after the last step of each phase.

Only ``step()`` calls of optimizers passed to an ``amp.scale_loss`` in the same function are
touched (or, for a function that scales the loss of optimizers it takes as parameters, the
steps of what each of its callers in the file passes; ``for opt in optimizers: opt.step()``
for a list given whole, with one update after that loop), so gradient-accumulation
boundaries (``if (i + 1) % accum == 0:``) are kept: the scaler steps and updates exactly
where the original stepped.

A step after the training loop that applies the gradients left over from an unfinished
accumulation (a *flush* step: the loop holds the scaled backward and the regular step, the
flush follows the loop with no scaled backward in between) may find no gradient at all when
the batch count was a multiple of the accumulation count.  apex's ``optimizer.step()`` did
nothing then, but ``GradScaler.step`` raises ("No inf checks were recorded for this
optimizer"), so the rewritten step and its update run only when some parameter of that
optimizer has a gradient; where that guard cannot be written (several steps share the
update, or the step shares its line) the site is reported instead.

Where the step runs only at such a boundary while every iteration scales its loss without
``delay_unscale``, the loss scale's growth changes pace (APX314, a warning): apex updated its
dynamic scale at every ``amp.scale_loss`` exit, so it doubled after 2000 overflow-free
backwards; a GradScaler updates once per step, so it doubles after 2000 overflow-free steps.
The gradients are unscaled the same either way; the finding says how to keep apex's pace."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Set, Tuple, cast

import libcst as cst

from ._amp_rule import APEX_AMP, AmpRule
from ._amp_sites import (
    accumulation_boundary,
    analyse,
    arg_value,
    caller_links,
    code_of,
    enclosing_function,
    find_scalers,
    find_steps,
    keyed_optimizer,
    step_calls,
    stepping_loop,
    walk,
)
from ._edits import expression, statement
from ._amp_caller_steps import helper_shape, stepped_helper
from ._amp_guarded_step import guarded_step
from ._amp_mirrored_step import apex_branch
from ._binding import param_names
from ._plain_alternative import alternative_if
from ._plain_alternative_examples import ALTERNATIVE_EXAMPLES
from ._plain_backward import UNPROVEN, plain_backwards
from ._plain_step_callers import plains_to_scale
from ._tree import inside, walk_of
from ._amp_examples import OPTIMIZER_READ_FROM_SELF, OPTIMIZER_READ_FROM_SELF_NATIVE
from .base import Example
from ..codes import HANDED_CODE


#: the start of the TODO written where a flush step cannot be guarded (also a trigger, so a
#: later run reports the comment again)
FLUSH_TODO = "step with possibly no gradients:"


def flush_steps(rule: Any, info: Any, lookup: Any) -> Set[cst.Call]:
    """The flush steps of a file: ``<opt>.step()`` calls after a loop that holds both a
    scale_loss feeding ``opt`` and another ``<opt>.step()``, with no scale_loss feeding
    ``opt`` between the loop and the call (same function throughout)."""
    parents = rule.parents
    found: Set[cst.Call] = set()
    # every scaled backward: (its statement or the call of the function holding it, that
    # function, the optimizer text there); a caller of a backward helper steps what it passed
    backwards: List[Tuple[cst.CSTNode, Any, str]] = []
    for site in info.scale_losses:
        if lookup(site.with_stmt) is None:
            continue
        for opt in site.optimizers:
            if isinstance(opt, (cst.Name, cst.Attribute)) or keyed_optimizer(opt):
                backwards.append((site.with_stmt, site.func, code_of(opt)))
                for link in caller_links(rule, site) or []:
                    if code_of(opt) in link.optimizers:
                        backwards.append((link.call, link.func, link.optimizers[code_of(opt)]))
    for node, func, text in backwards:
        scope = func.body if func is not None else rule.tree
        steps = [c for c in step_calls(scope, text) if enclosing_function(parents, c) is func]
        feeding = [n for n, f, t in backwards if f is func and t == text]
        for loop in _loops_around(parents, node):
            if not any(inside(parents, c, loop) for c in steps):
                continue
            loop_end = end_of(rule, loop)
            for call in steps:
                here = start_of(rule, call)
                if inside(parents, call, loop) or here <= loop_end:
                    continue
                if any(loop_end < start_of(rule, n) < here for n in feeding):
                    continue
                found.add(call)
    return found


def _loops_around(parents: Any, node: cst.CSTNode) -> List[cst.CSTNode]:
    """The ``for``/``while`` statements around ``node`` in its own function."""
    loops: List[cst.CSTNode] = []
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        if isinstance(cur, (cst.For, cst.While)):
            loops.append(cur)
        cur = parents.get(cur)
    return loops


def start_of(rule: Any, node: cst.CSTNode) -> Tuple[int, int]:
    pos = rule.position(node).start
    return (pos.line, pos.column)


def end_of(rule: Any, node: cst.CSTNode) -> Tuple[int, int]:
    pos = rule.position(node).end
    return (pos.line, pos.column)


def _boundary_per_call(parents: Any, with_stmt: Any, step: cst.Call) -> Any:
    """FARM's ``backward_propagate(loss, step)``: the loop is in the caller, and the function
    scales every loss it is handed but steps only under an ``if`` that reads one of its
    parameters (``if step % self.grad_acc_steps == 0:``), so its callers decide which calls
    step: that ``if``, where the scale_loss block is in no loop of the function and outside
    it; else None."""
    func = enclosing_function(parents, with_stmt)
    if func is None or enclosing_function(parents, step) is not func:
        return None
    cur: Any = parents.get(with_stmt)
    backward_tests = set()
    while cur is not None and cur is not func:
        if isinstance(cur, (cst.For, cst.While)):
            return None
        if isinstance(cur, cst.If):
            backward_tests.add(code_of(cur.test).strip())
        cur = parents.get(cur)
    params = set(param_names(func.params)[1:])  # not self: the same on every call
    cur = parents.get(step)
    while cur is not None and cur is not func:
        if isinstance(cur, (cst.For, cst.While)):
            return None
        if (
            isinstance(cur, cst.If)
            and not inside(parents, with_stmt, cur)
            and code_of(cur.test).strip() not in backward_tests
            and any(isinstance(n, cst.Name) and n.value in params for n in walk(cur.test))
        ):
            return cur
        cur = parents.get(cur)
    return None


class StepRule(AmpRule):
    """optimizer.step() -> scaler.step(optimizer) + scaler.update()."""

    CODES = {
        "APX311": "optimizer.step() goes through the GradScaler, followed by scaler.update()",
        "APX312": "a step after the loop (leftover accumulated gradients) runs only when some gradient is left",
        "APX313": "a step after the loop may find no gradient, and GradScaler.step() then raises: guard it by hand",
        "APX228": "wrapper.step(**kw) of an optimizer wrapper whose step steps the optimizer amp.scale_loss named "
        "-> scaler.step(wrapper, **kw)",
        "APX315": "wrapper.step() of an optimizer wrapper of another file whose step steps the optimizer "
        "amp.scale_loss named -> wrapper.step(scaler), the wrapper's step given a scaler parameter that steps "
        "that optimizer through it",
        "APX314": "gradient accumulation without delay_unscale: apex's loss scale grew per micro-batch, "
        "a GradScaler's grows per step",
        "APX316": "a plain loss.backward() between the scaled backward and the step -> "
        "scaler.scale(loss).backward(): apex had unscaled the scaled loss's gradients before it added its own; "
        "one in the other branch of the if that scales, unless that branch runs only with the GradScaler off",
        "APX255": "scaler.unscale_(opt) before a gradient use after a plain backward the GradScaler now scales",
        "APX272": "scaler.unscale_(opt) before a gradient clip between a call of another file's backward helper, "
        "which scales through the GradScaler, and the step",
        "APX256": "a plain loss.backward() in the other branch of the if that scales stays plain (another "
        "optimizer is stepped plainly, or a gradient use after it cannot be unscaled once): it is right only "
        "where that branch runs with the GradScaler off, which the tool could not show",
    }
    TRIGGERS = (b"scale_loss", b"step with possibly no gradients:")
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = ("scale_loss", FLUSH_TODO)
    PLANNED_WORK = ("stepped_calls",)
    NAMESPACES = APEX_AMP
    KNOWN = {FLUSH_TODO: ("APX313", "error", False)}

    def plan(self, module: cst.Module) -> None:
        self._growth_reported: Set[cst.If] = set()  # the boundaries APX314 named
        info = analyse(self, module)
        if not (info.scale_losses or info.caller_steps) or info.inits:
            return
        lookup = find_scalers(self, module)
        chosen: Dict[cst.Call, str] = {}
        through: Dict[cst.Call, Tuple[str, str]] = {}  # a wrapper's step -> what it steps, its class
        handed: Dict[cst.Call, Tuple[str, str, str, str]] = {}  # a step handed the scaler -> the same, its class
        loops: Dict[cst.Call, cst.For] = {}
        delegated: Dict[cst.Call, str] = {}  # a holder's step -> the one optimizer it steps
        backward_lines: List[int] = []
        unproven: Dict[cst.Call, Tuple[str, Any, str]] = {}  # a plain backward left plain unproven
        scaled: Set[cst.Call] = set()
        for site in info.scale_losses:
            scaler = lookup(site.with_stmt)
            if scaler is None:
                continue
            backward_lines.append(self.line_of(site.with_stmt))
            # a call of the helper holding it is a backward of its caller (the next step
            # after one steps other gradients, and takes an update of its own before)
            backward_lines.extend(self.line_of(link.call) for link in caller_links(self, site) or [])
            for opt in site.optimizers:
                for call in find_steps(self, site, code_of(opt)):
                    here = lookup(call)
                    receiver = code_of(cast(Any, call.func).value)
                    is_handed = site.handed.get(code_of(opt), ("",))[0] == receiver
                    if here is not None:
                        chosen[call] = (  # where each call picks the loss id's, the one stepping it
                            info.scaler_of(here.expr, code_of(cast(Any, call.func).value))
                            if site.call_loss_ids
                            else info.loss_scaler(here.expr, site.loss_id)
                        )
                        self._report_growth_pace(site, call)
                        if code_of(opt) in site.wrapped:
                            through[call] = site.wrapped[code_of(opt)]
                        if is_handed:
                            handed[call] = (code_of(opt),) + site.handed[code_of(opt)][1:]
                        if site.delegated.get(code_of(opt)) == receiver:
                            delegated[call] = code_of(opt)  # its step() only steps that optimizer
                    loop = stepping_loop(self, call) if receiver != code_of(opt) and not is_handed else None
                    if loop is not None:
                        # a step of each optimizer of a list, in a loop: one update after it
                        loops[call] = loop
            if stepped_helper(info.plan, site.func, self.parents) is not None:
                plain = helper_shape(site)  # its launchers step through the GradScaler
                if isinstance(plain, cst.Call):
                    self._scale_plain(plain, info.loss_scaler(scaler.expr, site.loss_id), site)
            stepping = [chosen[c] for o in site.optimizers for c in find_steps(self, site, code_of(o)) if c in chosen]
            withs = [other.with_stmt for other in info.scale_losses]
            for step in (c for o in site.optimizers for c in find_steps(self, site, code_of(o)) if c in chosen):
                if enclosing_function(self.parents, step) is site.func:
                    continue  # its function's plain backwards: ``plain_backwards`` below
                for plain in plains_to_scale(self, site, step, withs) or ():
                    if plain not in scaled:
                        scaled.add(plain)
                        self._scale_plain(plain, chosen[step], site)
            if stepping:
                for plain, before, why in plain_backwards(self, site, withs, stepping[0], info):
                    if before is UNPROVEN:
                        unproven.setdefault(plain, (stepping[0], site, why))
                    else:
                        scaled.add(plain)
                        self._scale_plain(plain, stepping[0], site, before)
        for step, (helper_call, (_step, clips, boundary)) in info.caller_steps.items():
            here = lookup(step)
            if here is None:
                continue
            backward_lines.append(self.line_of(helper_call))  # a backward of this file's
            if step in chosen:
                continue  # a scale_loss of this file steps it too
            chosen[step] = info.loss_scaler(here.expr, 0)
            opt = code_of(cast(Any, step.func).value)
            self._unscale_before(clips, chosen[step], opt)
            if boundary is not None and boundary not in self._growth_reported:
                self._growth_reported.add(boundary)
                self.report(
                    step,
                    "APX314",
                    f"{opt}.step() runs only when `{code_of(boundary.test).strip()}`, while each call of "
                    f"{code_of(helper_call.func)}() before it scales a loss through amp.scale_loss: apex counted every "
                    "such backward toward the 2000 overflow-free iterations after which it doubles the loss scale, a "
                    "GradScaler counts steps, so the scale grows more slowly (the gradients are the same)",
                    fixed=True,
                    severity="warning",
                )
        for plain, (through_scaler, at, why) in unproven.items():
            if plain not in scaled:  # another scaling if's site scales it
                self._unproven_plain(plain, through_scaler, at, why)
        for node in walk_of(module, cst.Call):
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward":
                backward_lines.append(self.line_of(node))
        flush = flush_steps(self, info, lookup)
        # group steps per block: a step followed (in the same block, with no backward in
        # between) by another step shares one update after the last of them
        by_block: Dict[Tuple[cst.CSTNode, str], List[Tuple[int, cst.Call, cst.CSTNode]]] = {}
        for call, scaler in chosen.items():
            if call in info.mirrored_steps:
                self._mirrored_step(call, scaler, *info.mirrored_steps[call])
                continue
            if call in info.shared_steps:
                self._shared_step(call, scaler, *info.shared_steps[call])
                continue
            guard = info.scaler_guards.get(enclosing_function(self.parents, call))
            if guard is not None and self._guarded_step(call, scaler, guard):
                continue
            holder = self.parents[call]
            line = self.parents[holder]
            anchor = line if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else holder
            block = self.parents[line]
            if call in loops:
                anchor = loops[call]
                block = self.parents[anchor]
            by_block.setdefault((block, scaler), []).append((self.line_of(call), call, anchor))
            opt_text = code_of(cast(Any, call.func).value)
            if call in through:
                self._wrapper_step(call, scaler, *through[call])
                continue
            if call in handed:
                self._handed_step(call, scaler, *handed[call])
                continue
            stepped = delegated.get(call, opt_text)
            self.replace_node(call, expression(f"{scaler}.step({stepped})"))
            self.report(
                call,
                "APX311",
                f"{opt_text}.step() -> {scaler}.step({stepped}) + {scaler}.update()",
                fixed=True,
                severity="info",
            )
        for (_block, scaler), steps in by_block.items():
            steps.sort(key=lambda s: s[0])
            flushed = [call for _, call, _ in steps if call in flush]
            guarded = bool(flushed) and self._guard(steps, scaler)
            if flushed and not guarded:
                self._flush_todo(flushed, scaler)
            for index, (line, _call, anchor) in enumerate(steps):
                if guarded:
                    continue  # the update is inside the guard
                nxt = steps[index + 1][0] if index + 1 < len(steps) else None
                if nxt is not None and not any(line < b < nxt for b in backward_lines):
                    continue
                self.edits.insert_after(anchor, [statement(f"{scaler}.update()\n")])

    def _mirrored_step(self, call: cst.Call, scaler: str, orelse: cst.Else, test: Any) -> None:
        """``else: optimizer.step()`` where the GradScaler exists only on apex runs -> ``elif
        <the scale clause's test>: scaler.step(optimizer); scaler.update()`` before that
        ``else``, which keeps the plain step (``_amp_mirrored_step``)."""
        opt_text = code_of(cast(Any, call.func).value)
        self.replace_node(orelse, lambda kept: apex_branch(test, scaler, opt_text, kept))
        self.report(
            call,
            "APX311",
            f"{opt_text}.step() -> elif {code_of(test)}: {scaler}.step({opt_text}) + {scaler}.update(), "
            "the plain step kept for the runs that set no GradScaler up",
            fixed=True,
            severity="info",
        )

    def _shared_step(self, call: cst.Call, scaler: str, line: cst.SimpleStatementLine, test: Any) -> None:
        """``optimizer.step()`` after both the scaled and the plain backward, where the
        GradScaler exists only on apex runs -> ``if <the scale clause's test>:
        scaler.step(optimizer); scaler.update()``, the plain step kept in its ``else``
        (``_amp_shared_step``)."""
        self._step_under_test(call, scaler, line, test, "as the backward before it was scaled or not")

    def _guarded_step(self, call: cst.Call, scaler: str, test: Any) -> bool:
        """The same for a step alone on its line in a hook whose runner may carry no GradScaler
        (``_amp_guarded_step``); False when the step is not alone on its line (then a blocker
        was due: never expected)."""
        holder = self.parents.get(call)
        line = self.parents.get(holder)
        if not (isinstance(holder, cst.Expr) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            return False
        self._step_under_test(
            call, scaler, line, test, "for the runs that did not scale (their runner may carry no GradScaler)"
        )
        return True

    def _step_under_test(self, call: cst.Call, scaler: str, line: cst.SimpleStatementLine, test: Any, why: str) -> None:
        opt_text = code_of(cast(Any, call.func).value)
        self.replace_node(line, lambda kept: guarded_step(test, scaler, opt_text, kept))
        self.report(
            call,
            "APX311",
            f"{opt_text}.step() -> if {code_of(test)}: {scaler}.step({opt_text}) + {scaler}.update(), else the plain "
            f"step, {why}",
            fixed=True,
            severity="info",
        )

    def _scale_plain(self, call: cst.Call, scaler: str, site: Any, before: Any = None) -> None:
        """``loss_adv.backward()`` after the scaled backward, or ``loss.backward()`` in the other
        branch of the if that scales -> ``scaler.scale(loss).backward()`` (``_plain_backward``,
        ``_plain_alternative``), with ``scaler.unscale_(opt)`` before ``before``, the first
        statement after it that reads the gradients."""
        receiver = code_of(cast(Any, call.func).value)
        arguments = code_of(call)[len(code_of(call.func)) :]  # "(retain_graph=True)"
        self.replace_node(call, expression(f"{scaler}.scale({receiver}).backward{arguments}"))
        opts = ", ".join(code_of(o) for o in site.optimizers)
        if alternative_if(self.parents, call, site.with_stmt, site.func) is not None:
            message = (
                f"{receiver}.backward() in the branch that does not scale, before {opts}'s step -> "
                f"{scaler}.scale({receiver}).backward(): the GradScaler may be on where this branch runs, and its "
                "step would divide these unscaled gradients by the loss scale"
            )
        else:
            message = (
                f"{receiver}.backward() between the scaled backward and {opts}'s step -> "
                f"{scaler}.scale({receiver}).backward(): apex had unscaled the scaled loss's gradients when "
                "this backward added its own; a GradScaler unscales every gradient at the step"
            )
        self.report(
            call,
            "APX316",
            message,
            fixed=True,
            severity="info",
        )
        if before is None:
            return
        self.edits.insert_before(before, [statement(f"{scaler}.unscale_({code_of(o)})\n") for o in site.optimizers])
        self.report(
            before,
            "APX255",
            f"scaler.unscale_({opts}) before this gradient use: the plain backward before it is scaled now",
            fixed=True,
            severity="info",
        )

    def _unscale_before(self, clips: Sequence[cst.Call], scaler: str, opt: str) -> None:
        """``scaler.unscale_(opt)`` before the first of the gradient clips between a call of a
        backward helper of another file and the step (``_amp_caller_steps``)."""
        if not clips:
            return
        first = self.parents[self.parents[clips[0]]]
        self.edits.insert_before(first, [statement(f"{scaler}.unscale_({opt})\n")])
        self.report(
            clips[0],
            "APX272",
            f"{scaler}.unscale_({opt}) before this clip: the backward helper called before it scales through the "
            "GradScaler, which keeps the gradients scaled until the step (apex had unscaled them)",
            fixed=True,
            severity="info",
        )

    def _unproven_plain(self, call: cst.Call, scaler: str, site: Any, why: str) -> None:
        """APX256 where a plain backward in the other branch of the if that scales stays plain
        though nothing shows that branch runs only with the GradScaler off."""
        receiver = code_of(cast(Any, call.func).value)
        head, when_false = cast(Any, alternative_if(self.parents, call, site.with_stmt, site.func))
        test = code_of(head.test).strip()
        opts = ", ".join(code_of(o) for o in site.optimizers)
        self.report(
            call,
            "APX256",
            f"{receiver}.backward() stays plain in the branch that runs when `{test}` is "
            f"{'false' if when_false else 'true'}: {why}. Where that branch runs with {scaler} enabled, "
            f"{scaler}.step({opts}) fails (nothing was scaled) or divides these gradients by the loss scale: "
            "check that it runs only where the GradScaler is off",
            fixed=True,
            severity="warning",
        )

    def _report_growth_pace(self, site: Any, call: cst.Call) -> None:
        """APX314 where the step runs at an accumulation boundary of the loop that scales each
        micro-batch's loss without ``delay_unscale``: apex updated its dynamic loss scale on
        every ``amp.scale_loss`` exit then, so its 2000 clean iterations before growth were
        micro-batches; a GradScaler counts updates, that is steps."""
        delay = arg_value(site.call, 4, "delay_unscale")
        if delay is not None and code_of(delay).strip() != "False":
            return
        boundary = accumulation_boundary(self.parents, site.with_stmt, call)
        each = "each iteration"
        if boundary is None:
            boundary = _boundary_per_call(self.parents, site.with_stmt, call)
            each = f"each call of {site.func.name.value}()" if boundary is not None else each
        if boundary is None:
            return
        if boundary in self._growth_reported:
            return
        self._growth_reported.add(boundary)
        opt = code_of(cast(Any, call.func).value)
        test = code_of(boundary.test).strip()
        self.report(
            call,
            "APX314",
            f"{opt}.step() runs only when `{test}`, while {each} scales its loss through "
            "amp.scale_loss without delay_unscale: apex counted every such backward toward the 2000 "
            "overflow-free iterations after which it doubles the loss scale, a GradScaler counts steps, so "
            f"where `{test}` skips iterations (gradient accumulation) the scale now grows more slowly (the "
            "gradients are unscaled the same). To keep apex's pace, give the GradScaler "
            "growth_interval=2000 // <backwards per step>",
            fixed=True,
            severity="warning",
        )

    def _wrapper_step(self, call: cst.Call, scaler: str, held: str, wrapper: str) -> None:
        """``self.optimizer.step(where=w)`` of a proven wrapper -> ``scaler.step(self.optimizer,
        where=w)``: GradScaler.step passes the keywords on to the wrapper's step."""
        opt = cast(cst.Attribute, call.func).value
        args = [cst.Arg(opt)] + [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in call.args]
        new = cst.Call(func=expression(f"{scaler}.step"), args=args)
        self.replace_node(call, new)
        self.report(
            call,
            "APX228",
            f"{code_of(call)} -> {code_of(new)} + {scaler}.update(): {wrapper}.step() steps {held} once and its "
            f"param_groups are {held}'s, so the GradScaler unscales and steps what amp.scale_loss named through it",
            fixed=True,
            severity="info",
        )

    def _handed_step(self, call: cst.Call, scaler: str, held: str, wrapper: str, path: str, cls: str) -> None:
        """``optim.step()`` of a wrapper whose step the plan hands the GradScaler ->
        ``optim.step(scaler)``: its step then runs ``scaler.step`` on the optimizer it holds
        (``migrate.wrapper_step_edit``, applied to the wrapper's file: the finding carries
        that file's path and the class, for the driver)."""
        receiver = code_of(cast(cst.Attribute, call.func).value)
        self.replace_node(call, expression(f"{receiver}.step({scaler})"))
        self.report(
            call,
            HANDED_CODE,
            f"{receiver}.step() -> {receiver}.step({scaler}) + {scaler}.update(): {wrapper}.step() steps {held} "
            f"once; it now takes the GradScaler and steps {held} through it (the rest of its step runs as under "
            "apex, overflowing or not)",
            fixed=True,
            severity="info",
            about=(path, cls),
        )

    def _guard(self, steps: Sequence[Any], scaler: str) -> bool:
        """A flush step alone on its line (no other step sharing its update) runs, with its
        update, only when some gradient is left; False when it cannot be guarded so."""
        if len(steps) != 1 or not isinstance(steps[0][2], cst.SimpleStatementLine):
            return False
        _, call, anchor = steps[0]
        opt = code_of(cast(Any, call.func).value)
        test = f'any(p.grad is not None for group in {opt}.param_groups for p in group["params"])'

        def guarded(upd: Any) -> List[Any]:
            body = cst.IndentedBlock(body=[upd.with_changes(leading_lines=[]), statement(f"{scaler}.update()\n")])
            return [cst.If(test=expression(test), body=body, leading_lines=upd.leading_lines)]

        self.edits.replace(anchor, guarded)
        self.report(
            call,
            "APX312",
            f"{opt}.step() after the loop applies leftover accumulated gradients: {scaler}.step({opt}) and "
            f"{scaler}.update() run only when some gradient is left (GradScaler.step() raises on an "
            "optimizer without gradients; apex's step did nothing)",
            fixed=True,
            severity="info",
        )
        return True

    def _flush_todo(self, calls: Sequence[cst.Call], scaler: str) -> None:
        names = [code_of(cast(Any, c.func).value) for c in calls]
        steps = " and ".join(f"{n}.step()" for n in names)
        if len(names) == 1:
            advice = f"run it and {scaler}.update() only if some p.grad of {names[0]} is not None"
        else:
            advice = (
                f"step each optimizer only if some p.grad of it is not None, and call {scaler}.update() "
                "only if one of them stepped"
            )
        self.todo(
            calls[0],
            "APX313",
            f"{FLUSH_TODO} {steps} after the loop {'apply' if len(names) > 1 else 'applies'} leftover "
            f"accumulated gradients, and {scaler}.step() raises on an optimizer with none left (apex's step "
            f"did nothing): {advice}",
        )


#: a gradient-accumulation loop that delays the unscale to its boundary, and its rewrite
ACCUMULATION_LOOP = """\
from apex import amp


def train(model, optimizer, loader, accumulation_steps=4):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % accumulation_steps != 0) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
ACCUMULATION_LOOP_NATIVE = """\
import torch


def train(model, optimizer, loader, accumulation_steps=4):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accumulation_steps
        scaler.scale(loss).backward()
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""

# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "accumulation-boundary-with-delay-unscale",
        before=ACCUMULATION_LOOP,
        after=ACCUMULATION_LOOP_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311"),
    ),
    Example(
        # the same loop without delay_unscale: apex grew its scale per backward
        "accumulation-without-delay-unscale-grows-more-slowly",
        before=ACCUMULATION_LOOP.replace(", delay_unscale=(i + 1) % accumulation_steps != 0", ""),
        after=ACCUMULATION_LOOP_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX314"),
    ),
    Example(
        # ``optimizer = self.optimizer`` then the initialize that hands the same object back:
        # ``self.optimizer.step()`` is the step of the loss scale_loss scaled
        "step-through-the-attribute-the-optimizer-was-read-from",
        before=OPTIMIZER_READ_FROM_SELF,
        after=OPTIMIZER_READ_FROM_SELF_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "two-optimizers-one-update",
        before="""\
from apex import amp


def train(model, opt_body, opt_head, batches):
    model, [opt_body, opt_head] = amp.initialize(model, [opt_body, opt_head], opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, [opt_body, opt_head]) as scaled_loss:
            scaled_loss.backward()
        opt_body.step()
        opt_head.step()
""",
        after="""\
import torch


def train(model, opt_body, opt_head, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(opt_body)
        scaler.step(opt_head)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX311"),
    ),
    Example(
        "one-line-step-in-an-if",
        before="""\
from apex import amp as apex_amp
import torch


def train(model, optimizer, batches, fp16=True):
    if fp16:
        model, optimizer = apex_amp.initialize(model, optimizer, opt_level="O1")
    for step, (x, y) in enumerate(batches):
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if fp16:
            with apex_amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()
        else:
            loss.backward()
        if step % 2 == 0: optimizer.step(); optimizer.zero_grad()
    return {"amp": apex_amp.state_dict() if fp16 else None}
""",
        after="""\
import torch


def train(model, optimizer, batches, fp16=True):
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for step, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            out = model(x)
            loss = torch.nn.functional.mse_loss(out, y)
        if fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if step % 2 == 0: scaler.step(optimizer); scaler.update(); optimizer.zero_grad()
    return {"amp": scaler.state_dict() if fp16 else None}
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX314", "APX401"),
    ),
    Example(
        "flush-step-after-the-loop-is-guarded",
        before="""\
from apex import amp


def train(model, optimizer, loader, accumulation_steps):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % accumulation_steps != 0) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()  # apply the leftover gradients
    optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, accumulation_steps):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accumulation_steps
        scaler.scale(loss).backward()
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    if any(p.grad is not None for group in optimizer.param_groups for p in group["params"]):
        scaler.step(optimizer)  # apply the leftover gradients
        scaler.update()
    optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311", "APX312"),
    ),
    Example(
        # an optimizer kept in a dict (PWGAN_Torch's ``self.optimizer_Dict[...]``): its flush
        # step was not looked for and became a bare ``scaler.step``, which raises where the
        # leftover gradients are None (the loop just stepped and zeroed them); apex's was a no-op
        "flush-step-of-an-optimizer-kept-in-a-dict-is-guarded",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, accumulation_steps):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.optimizers = {"main": optimizer}
        self.accumulation_steps = accumulation_steps

    def train(self, loader):
        for i, (x, y) in enumerate(loader):
            loss = torch.nn.functional.mse_loss(self.model(x), y) / self.accumulation_steps
            with amp.scale_loss(loss, self.optimizers["main"], delay_unscale=(i + 1) % self.accumulation_steps != 0) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % self.accumulation_steps == 0:
                self.optimizers["main"].step()
                self.optimizers["main"].zero_grad()
        self.optimizers["main"].step()
        self.optimizers["main"].zero_grad()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, accumulation_steps):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.model = model
        self.scaler = torch.amp.GradScaler("cuda")
        self.optimizers = {"main": optimizer}
        self.accumulation_steps = accumulation_steps

    def train(self, loader):
        for i, (x, y) in enumerate(loader):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(self.model(x), y) / self.accumulation_steps
            self.scaler.scale(loss).backward()
            if (i + 1) % self.accumulation_steps == 0:
                self.scaler.step(self.optimizers["main"])
                self.scaler.update()
                self.optimizers["main"].zero_grad()
        if any(p.grad is not None for group in self.optimizers["main"].param_groups for p in group["params"]):
            self.scaler.step(self.optimizers["main"])
            self.scaler.update()
        self.optimizers["main"].zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311", "APX312"),
    ),
    Example(
        "flush-steps-of-two-optimizers-reported",
        before="""\
from apex import amp


def train(model, opt_body, opt_head, loader, accumulation_steps):
    model, [opt_body, opt_head] = amp.initialize(model, [opt_body, opt_head], opt_level="O1")
    for i, x in enumerate(loader):
        loss = model(x).sum() / accumulation_steps
        with amp.scale_loss(loss, [opt_body, opt_head]) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accumulation_steps == 0:
            opt_body.step()
            opt_head.step()
            model.zero_grad()
    opt_body.step()
    opt_head.step()
""",
        after="""\
import torch


def train(model, opt_body, opt_head, loader, accumulation_steps):
    scaler = torch.amp.GradScaler("cuda")
    for i, x in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum() / accumulation_steps
        scaler.scale(loss).backward()
        if (i + 1) % accumulation_steps == 0:
            scaler.step(opt_body)
            scaler.step(opt_head)
            scaler.update()
            model.zero_grad()
    # TODO(apexcompat): step with possibly no gradients: opt_body.step() and opt_head.step()
    #   after the loop apply leftover accumulated gradients, and scaler.step() raises on an
    #   optimizer with none left (apex's step did nothing): step each optimizer only if some
    #   p.grad of it is not None, and call scaler.update() only if one of them stepped
    scaler.step(opt_body)
    scaler.step(opt_head)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX313", "APX314"),
    ),
    # a step before the training loop, with no gradient yet (UNITER's "quick hack for amp
    # delay_unscale bug"): GradScaler.step() would raise there, so it stays optimizer.step()
    Example(
        "warm-up-step-before-the-loop-stays",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, accum):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    # quick hack for amp delay_unscale bug
    optimizer.zero_grad()
    optimizer.step()
    for step, batch in enumerate(loader):
        loss = model(batch).mean()
        delay_unscale = (step + 1) % accum != 0
        with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
            scaled_loss.backward()
        if not delay_unscale:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, accum):
    scaler = torch.amp.GradScaler("cuda")
    # quick hack for amp delay_unscale bug
    optimizer.zero_grad()
    optimizer.step()
    for step, batch in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).mean()
        delay_unscale = (step + 1) % accum != 0
        scaler.scale(loss).backward()
        if not delay_unscale:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX301', 'APX302', 'APX311'),
    ),
    # the helper scales each micro-batch loss; its caller clips and steps: the scaler reaches both
    Example(
        "step-in-the-caller-of-the-backward-helper",
        before="""\
import torch
from apex import amp


def backward_micro_batch(model, batch, optimizer, delay_unscale):
    loss = model(batch).mean()
    with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
        scaled_loss.backward()
    return loss.item()


def train(model, optimizer, loader, micro_batches, max_norm):
    for batch in loader:
        for k, part in enumerate(batch.chunk(micro_batches)):
            backward_micro_batch(model, part, optimizer, k < micro_batches - 1)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        optimizer.zero_grad()


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, loader, micro_batches=4, max_norm=1.0)
""",
        after="""\
import torch


def backward_micro_batch(model, batch, optimizer, delay_unscale, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    scaler.scale(loss).backward()
    return loss.item()


def train(model, optimizer, loader, micro_batches, max_norm, scaler):
    for batch in loader:
        for k, part in enumerate(batch.chunk(micro_batches)):
            backward_micro_batch(model, part, optimizer, k < micro_batches - 1, scaler)
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()


def main(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    train(model, optimizer, loader, micro_batches=4, max_norm=1.0, scaler=scaler)
""",
        codes=('APX101', 'APX201', 'APX207', 'APX207', 'APX209', 'APX301', 'APX302', 'APX311', 'APX325'),
    ),
    # one list of optimizers given to scale_loss, stepped one by one: one update after the loop;
    # the delayed backward (delay_unscale=True) is stepped by the other branch on a later call
    Example(
        "list-of-optimizers-stepped-in-a-loop",
        before="""\
import torch
from apex import amp


def train(encoder, decoder, opt_enc, opt_dec, loader, accumulate, clip):
    [encoder, decoder], [opt_enc, opt_dec] = amp.initialize([encoder, decoder], [opt_enc, opt_dec], opt_level="O1")
    optimizers = [opt_enc, opt_dec]
    for step, batch in enumerate(loader):
        loss = decoder(encoder(batch)).mean()
        if (step + 1) % accumulate == 0:
            with amp.scale_loss(loss, optimizers) as scaled_loss:
                scaled_loss.backward()
            for optimizer in optimizers:
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip)
            for optimizer in optimizers:
                optimizer.step()
                optimizer.zero_grad()
        else:
            with amp.scale_loss(loss, optimizers, delay_unscale=True) as scaled_loss:
                scaled_loss.backward()
""",
        after="""\
import torch


def train(encoder, decoder, opt_enc, opt_dec, loader, accumulate, clip):
    scaler = torch.amp.GradScaler("cuda")
    optimizers = [opt_enc, opt_dec]
    for step, batch in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = decoder(encoder(batch)).mean()
        if (step + 1) % accumulate == 0:
            scaler.scale(loss).backward()
            for optimizer in optimizers:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), clip)
            for optimizer in optimizers:
                scaler.step(optimizer)
                optimizer.zero_grad()
            scaler.update()
        else:
            scaler.scale(loss).backward()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX301', 'APX302', 'APX311', 'APX321'),
    ),
    # the caller's step after the loop applies leftover accumulated gradients: guarded like
    # a flush step in the function that scales the loss
    Example(
        "flush-step-in-the-caller-is-guarded",
        before="""\
from apex import amp


def backward_micro_batch(model, batch, optimizer, delay_unscale):
    loss = model(batch).mean()
    with amp.scale_loss(loss, optimizer, delay_unscale=delay_unscale) as scaled_loss:
        scaled_loss.backward()


def train(model, optimizer, loader, accumulate):
    for i, batch in enumerate(loader):
        boundary = (i + 1) % accumulate == 0
        backward_micro_batch(model, batch, optimizer, not boundary)
        if boundary:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()
    optimizer.zero_grad()


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, loader, accumulate=4)
""",
        after="""\
import torch


def backward_micro_batch(model, batch, optimizer, delay_unscale, scaler):
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(batch).mean()
    scaler.scale(loss).backward()


def train(model, optimizer, loader, accumulate, scaler):
    for i, batch in enumerate(loader):
        boundary = (i + 1) % accumulate == 0
        backward_micro_batch(model, batch, optimizer, not boundary, scaler)
        if boundary:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    if any(p.grad is not None for group in optimizer.param_groups for p in group["params"]):
        scaler.step(optimizer)
        scaler.update()
    optimizer.zero_grad()


def main(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    train(model, optimizer, loader, accumulate=4, scaler=scaler)
""",
        codes=('APX101', 'APX201', 'APX207', 'APX207', 'APX209', 'APX301', 'APX302', 'APX311', 'APX311', 'APX312'),
    ),
    Example(
        # a regularization loss backed plainly at the accumulation boundary, in the method that
        # steps, after _training_step() scaled the loss (the adapter-transformers Trainer of
        # 2020): apex had unscaled the scaled gradients when its block exited, so this added
        # its own at their true size; scaled through the same GradScaler, the step divides
        # every gradient by the scale (it kept apex.amp: "train() runs a plain backward")
        "plain-backward-in-the-stepping-method-after-a-scaled-method-is-scaled",
        before="""\
# file: trainer.py
import torch
from apex import amp


class Trainer:
    def __init__(self, model, args):
        self.model = model
        self.args = args

    def train(self, loader, optimizer):
        model = self.model
        if self.args.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for step, x in enumerate(loader):
            self._training_step(model, x, optimizer)
            if (step + 1) % self.args.accumulation == 0:
                if self.args.regularize:
                    reg_loss = fusion_regularization(model)
                    reg_loss.backward()
                optimizer.step()
                model.zero_grad()

    def _training_step(self, model, x, optimizer):
        loss = model(x).sum() / self.args.accumulation
        if self.args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
# file: run.py
from trainer import Trainer


def main(model, loader, optimizer, args):
    Trainer(model, args).train(loader, optimizer)
""",
        after="""\
# file: trainer.py
import torch


class Trainer:
    def __init__(self, model, args):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.args = args

    def train(self, loader, optimizer):
        model = self.model
        use_amp = bool(self.args.fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for step, x in enumerate(loader):
            self._training_step(model, x, optimizer)
            if (step + 1) % self.args.accumulation == 0:
                if self.args.regularize:
                    reg_loss = fusion_regularization(model)
                    self.scaler.scale(reg_loss).backward()
                self.scaler.step(optimizer)
                self.scaler.update()
                model.zero_grad()

    def _training_step(self, model, x, optimizer):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = model(x).sum() / self.args.accumulation
        if self.args.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        return loss.item()
# file: run.py
from trainer import Trainer


def main(model, loader, optimizer, args):
    Trainer(model, args).train(loader, optimizer)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX261', 'APX301', 'APX311', 'APX316'),
    ),
]


NOOP_EXAMPLES: List[Example] = []

StepRule.EXAMPLES = EXAMPLES + ALTERNATIVE_EXAMPLES
StepRule.NOOP_EXAMPLES = NOOP_EXAMPLES
