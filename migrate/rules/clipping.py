"""APX321-APX327: gradients used between the scaled backward and the optimizer step.

apex unscaled the gradients when the ``amp.scale_loss`` block exited; GradScaler leaves them
scaled until ``scaler.step``, so anything that reads them in between (clipping, norms,
``p.grad``) needs ``scaler.unscale_(optimizer)`` first.  A *phase* is one rewritten
``<opt>.step()`` and the gradient uses before it: ``torch.nn.utils.clip_grad_norm_`` /
``clip_grad_value_`` (any spelling that resolves to them) on any parameters, a call that is
given ``x.parameters()`` (directly, or through a comprehension or collector over them), a
``p.grad`` read (not of a tensor the function makes itself, ``delta = torch.zeros_like(x)``:
neither apex nor GradScaler unscales a gradient that is no optimizer's), and ``amp.master_params(opt)`` (in a file that
mentions clipping, a gradient norm, ``.grad`` or ``master_params`` at all).  One
``scaler.unscale_(opt)`` per phase is inserted before the first of them, for every optimizer
of the ``amp.scale_loss`` before the use (only ``opt`` for ``amp.master_params(opt)``), when
the use is after that scaled backward in the same function and the step surely follows it
(the step is in the use's block or an enclosing one; a use inside a loop there gets the
unscale_ before that loop).

When the step runs only sometimes after the use (``if (i + 1) % k == 0: optimizer.step()``
while the clip runs on every micro-step) an ``unscale_`` there would run twice before
``update()`` and raise.  A norm or value clip there clips the scaled gradients at its
threshold times ``scaler.get_scale()`` instead, which is what apex's clip of the unscaled
ones did (APX328; a norm it returns is divided back); any other use on every micro-step (a
norm helper) has no exact native equivalent and is reported (APX326) with a TODO to move it
to the step boundary, unless the count of ``if <x> % K == 0`` is 1 under the default flags
(``K`` an ``add_argument`` default of the file, ``_default_flags``): every backward is then a
step.  A use that is the statement right before that ``if`` moves into it, after ``unscale_``
(APX263): apex's order under the default flags, and with ``K > 1`` one clip of the summed
gradients per step (apex clipped each running sum; the same unless a partial sum exceeds the
threshold).  Any other such use gets ``unscale_`` before it where it is (APX329); with
``K > 1`` the next ``unscale_`` raises, so no run trains otherwise than apex did without
failing.  A clip whose step or scaled backward is not in the same function, or whose step is
a guarded flush step after the loop, is reported (APX327).

``amp.master_params(opt)`` becomes the optimizer's parameters: the sibling branch's
expression when an ``if fp16: ... else: ...`` clips ``model.parameters()`` the other way
(the two branches are then identical, layout aside, and are merged), else the parameters the optimizer
was built from in this file, else its param groups.  A NaN check on the clipped norm gets a
TODO: GradScaler also skips steps on inf."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from ._amp_rule import APEX_AMP, AmpRule
from ._amp_shared_step import test_branch
from ._plain_alternative import bound_names
from ._amp_sites import (
    _chain_root,
    backs_a_loss,
    backs_loss_in,
    keyed_optimizer,
    optimizer_params,
    analyse,
    arg_value,
    caller_links,
    class_of_method,
    code_of,
    enclosing_function,
    exclusive,
    find_scalers,
    find_steps,
    helpers_called_elsewhere,
    methods_of,
    self_name,
    step_calls,
    walk,
)
from ._amp_guarded_step import guarded_unscale
from ._edits import expression, move_leading, statement, suite_statements
from .base import Example
from ._default_flags import every_time_by_default, parser_factories
from ._clip_functions import CLIP_FUNCTIONS, SCALABLE_CLIPS
from ._exit_unscale import exit_unscale_count, run_time_levels
from ._fresh_tensor import holds_fresh_tensors
from ._o2_model_clip import reads_module_parameters
from ._statement_hole import HOLE, filled_hole
from ._tree import walk_of
from ._opaque_calls import CHANGES_GRADIENTS, gradient_access, may_read_gradients
from .step import end_of, flush_steps, start_of

#: calls that only collect the parameters they are given
_COLLECTORS = frozenset({"list", "tuple", "iter", "filter", "enumerate", "zip", "sorted", "len", "set", "dict"})
#: the start of the TODO written for a gradient use on every micro-step (APX326) and for one
#: whose phase is unknown (APX327); triggers too, so a later run reports the comments again
ACCUM_TODO = "per-micro-step gradient use:"
UNKNOWN_TODO = "gradients used after the scaled backward:"
#: why a gradient read gets no unscale_ before it (APX327): a backward follows it before the step
BACKWARD_AGAIN = (
    "another backward runs before that step, whose gradients an unscale_ here would leave scaled (scaler.step "
    "unscales once per step)"
)


def _negation(test: str) -> Optional[str]:
    """The text of ``not (test)`` as scripts write it: ``not x`` <-> ``x``, ``a != b`` ->
    ``a == b``; None for other tests."""
    if test.startswith("not "):
        return test[4:].strip()
    if test.count("!=") == 1 and "==" not in test:
        return test.replace("!=", "==")
    return f"not {test}" if test.isidentifier() else None


def _may_delay_unscale(call: cst.Call) -> bool:
    """Whether ``amp.scale_loss(...)`` is given a ``delay_unscale`` that is not ``False``."""
    delay = arg_value(call, 4, "delay_unscale")
    return delay is not None and not (isinstance(delay, cst.Name) and delay.value == "False")


def _names_parameters_only(use: "_Use") -> bool:
    """``params = amp.master_params(opt)`` alone: the use binds a name to the parameters and
    reads no gradient (the clip that reads them is a use of its own)."""
    stmt = use.stmt
    if use.kind != "master" or use.merged is not None or not isinstance(stmt, cst.SimpleStatementLine):
        return False
    if len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Assign):
        return False
    assign = stmt.body[0]
    if not all(isinstance(t.target, cst.Name) for t in assign.targets):
        return False
    return assign.value is use.node or use.node in _spread_master_params(assign.value)


#: calls that hand on the parameters of their arguments without reading a gradient
_PASS_THROUGH = frozenset({"itertools.chain", "chain", "list", "tuple"})


def _spread_master_params(value: Any) -> List[cst.Call]:
    """The calls of ``[*amp.master_params(a), *amp.master_params(b)]`` or
    ``itertools.chain(amp.master_params(a), amp.master_params(b))`` (nothing else in the list,
    tuple or chain, as for the optimizers of one ``amp.initialize``); [] for anything else."""
    if isinstance(value, (cst.List, cst.Tuple)):
        calls = [element.value for element in value.elements]
    elif isinstance(value, cst.Call) and code_of(value.func) in _PASS_THROUGH - {"list", "tuple"}:
        calls = [arg.value for arg in value.args if not arg.keyword and not arg.star]
        if len(calls) != len(value.args):
            return []
    else:
        return []
    if calls and all(isinstance(c, cst.Call) and code_of(c.func).endswith("master_params") for c in calls):
        return calls
    return []


def _reading_call(parents: Dict[Any, Any], call: cst.Call) -> Optional[cst.Call]:
    """The call that reads what ``call`` yields: the call it is an argument of, directly or as
    an element of a list or tuple argument, and through ``itertools.chain``/``list``/``tuple``
    to the call those are handed to (``clip([*amp.master_params(a), *amp.master_params(b)], n)``
    and ``clip(itertools.chain(...), n)`` -> the clip); None where it is not an argument."""
    reader: Optional[cst.Call] = None
    node: Any = call
    while True:
        node = parents.get(node)
        while isinstance(node, (cst.Element, cst.StarredElement, cst.List, cst.Tuple)):
            node = parents.get(node)
        parent = parents.get(node) if isinstance(node, cst.Arg) else None
        if not isinstance(parent, cst.Call):
            return reader
        reader = node = parent
        if code_of(parent.func) not in _PASS_THROUGH:
            return reader


def _moved_into_if(ups: List[Any], unscale: Any) -> List[Any]:
    """``[use, if]`` (updated) -> ``[if]`` whose body opens with ``unscale`` and ``use``; the
    comments above ``use`` go above ``unscale`` (blank lines before them stay out)."""
    use, boundary = ups
    lines = list(use.leading_lines)
    first = next((i for i, line in enumerate(lines) if line.comment is not None), len(lines))
    opening = [unscale.with_changes(leading_lines=lines[first:]), use.with_changes(leading_lines=[])]
    block = boundary.body
    return [boundary.with_changes(body=block.with_changes(body=[*opening, *block.body]))]


def _tested_against_none(parents: Any, grad: cst.Attribute) -> bool:
    """``grad`` (a ``.grad``) is only compared with None (``p.grad is not None``): whether a
    gradient exists does not depend on the loss scale, so the test is no gradient use."""
    parent = parents.get(grad)
    if isinstance(parent, cst.ComparisonTarget):
        parent = parents.get(parent)
    if not isinstance(parent, cst.Comparison) or len(parent.comparisons) != 1:
        return False
    target = parent.comparisons[0]
    other = target.comparator if parent.left is grad else parent.left
    return (
        isinstance(target.operator, (cst.Is, cst.IsNot))
        and isinstance(other, cst.Name)
        and other.value == "None"
        and grad in (parent.left, target.comparator)
    )


@dataclass(eq=False)
class _Use:
    """A gradient use: ``node`` (the call or the ``.grad`` attribute), ``stmt`` (the
    statement an unscale_ would precede), ``kind`` master/clip/helper/grad, or indirect (a
    call of a same-file function or method that clips)."""

    node: Any
    stmt: Any
    kind: str
    func: Any
    scaler: str
    what: str
    opt: Optional[str] = None  # master: the optimizer named in amp.master_params(opt)
    params: str = ""  # master: what amp.master_params(opt) became
    merged: Optional[Tuple[Any, Any]] = None  # master: (if statement, the kept branch)
    status: str = ""
    reason: str = ""
    unscaled: List[str] = field(default_factory=list)
    #: with one GradScaler per loss id: their list (``scaler`` is then the one of this use)
    scalers: str = ""
    #: status defaults: the test of the accumulation if around the step
    boundary: str = ""
    #: status defaults: the accumulation if the use moved into, after the unscale_ (APX263)
    moved_into: Any = None
    #: opaque: "reads" or "changes" when the call surely reaches the gradients (``gradient_access``)
    access: str = ""


class ClippingRule(AmpRule):
    """Gradient uses after amp.scale_loss get scaler.unscale_(opt) first; amp.master_params(opt)
    -> the optimizer's parameters."""

    CODES = {
        "APX321": "amp.master_params(opt) -> the optimizer's parameters, after scaler.unscale_(opt)",
        "APX322": "the fp16 and fp32 clipping branches became identical and were merged",
        "APX323": "a NaN check on the gradient norm: GradScaler skips inf too, check with math.isfinite",
        "APX324": "a `continue` between unscale_ and the step: scaler.update() added before it",
        "APX325": "gradients clipped or read between the scaled backward and the step: scaler.unscale_(opt) first",
        "APX326": "gradients clipped or read on every micro-step, the step only at the accumulation boundary",
        "APX327": "gradients clipped or read after the scaled backward where the step or backward is not known",
        "APX328": "a clip on every micro-step clips the scaled gradients at the threshold times the loss scale",
        "APX329": "a gradient use on every micro-step, the step under an accumulation count that is 1 by default",
        "APX263": "a gradient use on every micro-step right before the accumulation if that steps moved into it",
        "APX330": "a gradient use inside the amp.scale_loss block stays on the scaled gradients, unscale_ after it",
        "APX218": "amp.master_params(opt) in a file that scales no loss (a helper) -> the optimizer's param groups",
    }
    #: gradient uses are looked for only in files that mention one of these (besides
    #: master_params: clipping, norms, ``p.grad``, parameters handed to a helper), so files
    #: without them cost nothing here
    TRIGGERS = (
        b"master_params",
        b"clip_grad",
        b"grad_norm",
        b".grad",
        b"get_total_norm",
        b"parameters(",
        b"per-micro-step gradient use:",
        b"gradients used after the scaled",
        b"scale_loss",
    )
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = (
        "master_params", "clip_grad", "grad_norm", ".grad", "get_total_norm", "parameters(", "scale_loss", ACCUM_TODO,
        UNKNOWN_TODO
    )
    NAMESPACES = APEX_AMP
    KNOWN = {ACCUM_TODO: ("APX326", "error", False), UNKNOWN_TODO: ("APX327", "error", False)}

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if info.inits:
            return
        self._info = info
        # proven when the initialize was rewritten (else the file kept apex.amp)
        info.unscale_at_callers = {need.func for need, _where in helpers_called_elsewhere(self, info)}
        lookup = find_scalers(self, module)
        sites = [s for s in info.scale_losses if lookup(s.with_stmt) is not None]
        # every rewritten step -> the optimizer it steps
        steps: Dict[cst.Call, str] = {}
        for site in sites:
            for opt in site.optimizers:
                if isinstance(opt, (cst.Name, cst.Attribute)) or keyed_optimizer(opt):
                    for call in find_steps(self, site, code_of(opt)):
                        if lookup(call) is not None:
                            steps[call] = code_of(opt)
        flush = flush_steps(self, info, lookup)
        uses = self._master_uses(module, info, lookup)
        if sites:
            uses += self._other_uses(module, uses, sites, steps, lookup)
            uses += self._opaque_uses(uses, sites, steps, lookup)
        uses.sort(key=lambda u: start_of(self, u.node))
        phases: Dict[Tuple[str, Any], List[_Use]] = {}
        # a reader's steps under the scaling test: the uses on its plain side see the plain
        # backward's gradients, never scaled (``_amp_shared_step``)
        tests = {code_of(test).strip() for _where, test in [*info.mirrored_steps.values(), *info.shared_steps.values()]}
        for use in uses:
            side = test_branch(self.parents, use.stmt, tests)[0] if tests else "scaled"
            if side == "plain":
                use.status = "skip"
                continue
            keys = self._decide(use, sites, steps, flush)
            if use.kind == "opaque" and use.access and use.status == "accum":
                pass  # surely reaches the gradients on every micro-step: APX326, as a .grad read written inline
            elif use.kind == "opaque" and (use.status != "unscale" or not self._last_backward_before(use, keys, sites)):
                use.status, keys = "skip", []  # unscale_ only where the step follows every backward
            elif use.kind == "grad" and use.status == "unscale" and not self._last_backward_before(
                use, keys, sites, delay_counts=False
            ):
                # ``x.grad`` read after a backward whose gradients are dropped or added to before the
                # step (an adversarial attack's): an unscale_ here would leave the later backward's
                # gradients scaled at scaler.step, which unscales once per step
                use.opt, use.status, keys = keys[0][0] if keys else use.opt, "unknown", []
                use.reason = BACKWARD_AGAIN
            if not side and use.status not in ("skip", "unknown"):
                # (one the analysis did not see: in another function) an unscale_ before it
                # would run after the plain backward too: a TODO, never a silent unscale_
                use.opt = use.opt or next((opt for opt, _step in keys if opt), None) or code_of(sites[0].optimizers[0])
                use.status, keys = "unknown", []
                use.reason = f"it runs after the plain backward too: only under `if {' or '.join(sorted(tests))}:`"
            for key in keys:
                phases.setdefault(key, []).append(use)
            # one GradScaler per loss id: the one of the optimizer(s) the use's phases step
            ids = {info.loss_ids.get(opt, 0) for opt, _step in keys if opt is not None}
            if info.loss_scalers > 1 and len(ids) == 1:
                use.scalers, use.scaler = use.scaler, info.loss_scaler(use.scaler, ids.pop())
        self._unscaled_twice(uses, phases)
        exits: Set[Tuple[Any, str]] = set()
        for use in uses:
            if use.status == "exit":
                self._unscale_at_exit(use, sites, exits)
        self._unscale(phases, exits)
        for use in uses:
            self._report(use, phases)

    # --- collecting the uses ----------------------------------------------------------------

    def _master_uses(self, module: cst.Module, info: Any, lookup: Any) -> List[_Use]:
        uses = []
        held = {orig: wrapper for site in info.scale_losses for wrapper, (orig, _cls) in site.wrapped.items()}
        for need in sorted((n for n in info.needs if n.kind == "master_params"), key=lambda n: self.line_of(n.node)):
            scaler = lookup(need.node)
            call = need.node
            opt = arg_value(call, 0, "optimizer")
            if scaler is None and opt is not None and not info.scale_losses and not info.inits:
                self._helper_master_params(module, call, code_of(opt))
                continue
            if scaler is None or opt is None:
                continue
            opt_text = code_of(opt)
            stmt = self.statement_of(call)
            outer = _reading_call(self.parents, call)
            what = code_of(outer.func) + "(...)" if outer is not None else f"amp.master_params({opt_text})"
            # an optimizer stepped through its wrapper is unscaled through it too: GradScaler
            # keeps its unscaled state per object, so unscale_(held) + step(wrapper) would
            # unscale twice
            stepped = held.get(opt_text, opt_text)
            use = _Use(call, stmt, "master", need.func, scaler.expr, what, opt=stepped)
            # a reader whose plain backward steps plainly (its steps under the scaling test) keeps
            # the fp32 branch too: that test is not proven to be the GradScaler's switch
            plain_runs = info.mirrored_steps or info.shared_steps
            merged = None if plain_runs else self._merge_branches(stmt, call)
            if merged is not None:
                if_stmt, other, params = merged
                use.stmt, use.merged, use.params = if_stmt, (if_stmt, other), params
                self.edits.replace(if_stmt, lambda upd, other=other: [move_leading(upd, other)])
            else:
                use.params = self._params_of(module, opt_text, enclosing_function(self.parents, call))
                self.replace_node(call, expression(use.params))
            uses.append(use)
        return uses

    def _helper_master_params(self, module: cst.Module, call: cst.Call, opt_text: str) -> None:
        """``amp.master_params(opt)`` in a file that scales no loss (a helper module's
        ``def master_params(optimizer): yield from amp.master_params(optimizer)``): the
        optimizer's param groups, which is what apex (and apexcompat) yielded under every opt
        level; no master weights exist natively.  Read from the optimizer, never from the model
        it was built on: no amp.initialize of this file tells where the optimizer went, and one
        in another file that keeps the shim (O2) put fp32 master copies in its param groups, not
        the model's parameters (ColossalAI's test clips through the optimizer its helper
        initialized).  Whether the gradients a caller clips through it are unscaled is the
        caller's matter, as it was with apex."""
        params = optimizer_params(opt_text)
        self.replace_node(call, expression(params))
        self.report(
            call,
            "APX218",
            f"amp.master_params({opt_text}) -> {params} (what apex yielded); a caller that clips through it "
            f"natively must call scaler.unscale_({opt_text}) first",
            fixed=True,
            severity="info",
        )

    def _other_uses(self, module: cst.Module, masters: List[_Use], sites, steps, lookup) -> List[_Use]:
        """Clip calls, calls given parameters and ``.grad`` reads in the functions that hold a
        rewritten scale_loss or step."""
        funcs = {s.func for s in sites} | {enclosing_function(self.parents, c) for c in steps}
        taken: Set[cst.CSTNode] = {m.node for m in masters}
        skip: Set[cst.CSTNode] = set(steps)
        for master in masters:
            if master.merged is not None:
                skip.update(walk(master.merged[0]))  # the merged branches are one master use
        uses: List[_Use] = []
        seen_grad: Set[cst.CSTNode] = set()
        for node in walk_of(module, cst.Call, cst.Attribute):
            if isinstance(node, cst.Call) and node not in skip:
                func = enclosing_function(self.parents, node)
                if func not in funcs:
                    continue  # (asked first: most calls of a file are elsewhere, and their names cost a lookup)
                kind = None
                if self.qualified_names(node.func) & CLIP_FUNCTIONS:
                    kind = "clip"
                elif self._given_parameters(node) or self._reads_master_params(node):
                    kind = "helper"
                elif self._clipping_callee(node, set(), masters) is not None:
                    kind = "indirect"
                if kind is None:
                    continue
                if any(n in taken for n in walk(node)):
                    continue  # amp.master_params(...) inside: a master use already
                scaler = lookup(node)
                if scaler is None:
                    continue
                uses.append(_Use(node, self.statement_of(node), kind, func, scaler.expr, code_of(node.func) + "(...)"))
                skip.update(walk(node))  # a clip's own parameters() call is not a helper use
            elif isinstance(node, cst.Attribute) and node.attr.value == "grad" and node not in skip:
                parent = self.parents.get(node)
                if isinstance(parent, (cst.AssignTarget, cst.Del)):
                    continue
                stmt = self.statement_of(node)
                func = enclosing_function(self.parents, node)
                scaler = lookup(node)
                if stmt in seen_grad or func not in funcs or scaler is None:
                    continue
                if self._grad_of_fresh_tensor(node, func) or _tested_against_none(self.parents, node):
                    continue
                seen_grad.add(stmt)
                uses.append(_Use(node, stmt, "grad", func, scaler.expr, f"{code_of(node)} read"))
        return uses

    def _opaque_uses(self, uses: List[_Use], sites, steps, lookup) -> List[_Use]:
        """The first call of each statement of a function holding a rewritten scale_loss that
        may read the gradients (``_opaque_calls``) and is no gradient use found already,
        outside the scale_loss blocks (apex had not unscaled there either)."""
        taken: Set[cst.CSTNode] = set(steps)
        for use in uses:
            taken.update(walk(use.merged[0] if use.merged is not None else use.stmt))
        for site in sites:
            taken.update(walk(site.with_stmt))
        found: List[_Use] = []
        seen_stmts: Set[Any] = set()
        plan = self.repo_plan()
        readers = set(plan.gradient_readers) if plan is not None else set()
        for func in {s.func for s in sites}:  # None: a loop at module level
            for node in walk(func.body if func is not None else self.tree):
                if not isinstance(node, cst.Call) or node in taken:
                    continue
                stmt = self.statement_of(node)
                scaler = lookup(node)
                if stmt in seen_stmts or scaler is None or enclosing_function(self.parents, node) is not func:
                    continue
                if self._on_fresh_grad(node, func):
                    continue  # ``delta.grad.zero_()``: the gradient of no optimizer's parameter
                if may_read_gradients(self, node, self._callee, set()):
                    # one that surely reaches ``.grad`` is a gradient use: a TODO where it cannot be unscaled
                    access = gradient_access(node, self._callee, readers)
                    if func is None and not access:
                        continue  # at module level only a call known to reach the gradients (as before: none)
                    seen_stmts.add(stmt)
                    what = code_of(node.func) + "(...)" + (f", {CHANGES_GRADIENTS}," if access == "changes" else "")
                    found.append(_Use(node, stmt, "opaque", func, scaler.expr, what, access=access))
        return found

    def _last_backward_before(
        self, use: _Use, keys: List[Tuple[str, Any]], sites, delay_counts: bool = True
    ) -> bool:
        """No backward runs between the opaque ``use`` and its steps (a second chunk's backward
        would add scaled gradients to the ones an unscale_ there had divided), neither the call
        itself nor anything it runs in this file scales or backs a loss, and the scaled
        backward before it unscaled at its exit (no ``delay_unscale``: apex left those
        gradients scaled too; not asked where ``delay_counts`` is False: a ``.grad`` read at
        the step, where the last backward did unscale, ClipBERT's check for None gradients)."""
        here = start_of(self, use.node)
        ends = [start_of(self, step) for _opt, step in keys]
        if not ends:
            return False
        for site in sites:
            if delay_counts and site.func is use.func and arg_value(site.call, 4, "delay_unscale") is not None:
                return False
        if self._backward_again(use, sites, [step for _opt, step in keys]):
            return False
        for node in walk(use.func.body if use.func is not None else self.tree):  # a module-level loop
            if not isinstance(node, cst.Call) or not here <= start_of(self, node) < max(ends):
                continue
            if backs_a_loss(node) or self._runs_a_backward(node, set()) or self._unscales_itself(node):
                return False
        return True

    def _unscales_itself(self, call: cst.Call) -> bool:
        """``call`` runs a same-file function or method that clips or reads amp.master_params:
        the clipping route gives it (or its call) an unscale_ of its own, which a second one
        before it would make raise; the phase is unscaled there, before the step, already."""
        callee = self._callee(call)
        if callee is None:
            return False
        for node in walk(callee.body):
            if isinstance(node, cst.Attribute) and node.attr.value == "master_params":
                return True
            if isinstance(node, cst.Call) and self.qualified_names(node.func) & CLIP_FUNCTIONS:
                return True
        return False

    def _backward_again(self, use: _Use, sites: Any, steps: List[Any]) -> bool:
        """A loop holds ``use`` and the scaled backward of one of ``sites`` but none of
        ``steps`` (``for _ in range(iters): <scaled backward>; delta.grad.zero_()``): that
        backward runs again after the use, before the step."""
        cur = self.parents.get(use.stmt)
        while cur is not None and cur is not use.func:
            if isinstance(cur, (cst.For, cst.While)):
                inside = set(map(id, walk(cur)))
                if not any(id(step) in inside for step in steps) and any(id(s.with_stmt) in inside for s in sites):
                    return True
            cur = self.parents.get(cur)
        return False

    def _runs_a_backward(self, call: cst.Call, seen: Set[Any]) -> bool:
        """The same-file function or method ``call`` runs backs a loss, itself or deeper."""
        callee = self._callee(call)
        if callee is None or callee in seen:
            return False
        seen.add(callee)
        return any(
            isinstance(n, cst.Call) and (backs_a_loss(n) or self._runs_a_backward(n, seen)) for n in walk(callee.body)
        )

    def _on_fresh_grad(self, call: cst.Call, func: Any) -> bool:
        """``call`` is a method of the gradient of a tensor the function makes itself
        (``delta.grad.zero_()``, ``delta.grad.data.zero_()``)."""
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        while isinstance(receiver, cst.Attribute) and receiver.attr.value == "data":
            receiver = receiver.value
        return (
            isinstance(receiver, cst.Attribute)
            and receiver.attr.value == "grad"
            and self._grad_of_fresh_tensor(receiver, func)
        )

    def _grad_of_fresh_tensor(self, grad: cst.Attribute, func: Any) -> bool:
        """``delta.grad`` of a tensor the function makes itself (an adversarial
        perturbation): no optimizer's parameter, so apex left its gradient scaled as
        GradScaler does, and the read needs no unscale_ (see ``_fresh_tensor``)."""
        owner = grad.value
        return (
            isinstance(owner, cst.Name)
            and isinstance(func, cst.FunctionDef)
            and holds_fresh_tensors(func, owner.value, self.qualified_names)
        )

    def _clipping_callee(self, call: cst.Call, seen: Set[Any], masters: List[_Use]) -> Optional[cst.FunctionDef]:
        """The same-file function or same-class method ``call`` runs (``self._clip(...)``,
        ``clip_all(...)``) when it clips gradients, itself or through such calls of its own; a
        clip there sees what the caller's gradients are at the call.  None when it does not,
        or when it reads ``amp.master_params`` (that use gets its own unscale_)."""
        callee = self._callee(call)
        if callee is None or callee in seen:
            return None
        seen.add(callee)
        if callee in self._info.unscale_at_callers:
            return callee  # its master_params use is unscaled here, at the call
        if any(m.func is callee for m in masters):
            return None
        for node in walk_of(callee.body, cst.Call):
            if self.qualified_names(node.func) & CLIP_FUNCTIONS or self._clipping_callee(node, seen, masters):
                return callee
        return None

    def _unscaled_twice(self, uses: List[_Use], phases: Dict[Tuple[str, Any], List[_Use]]) -> None:
        """A function whose ``amp.master_params`` gets an unscale_ of its own (``legacy``: no
        step follows it there) raises on the second unscale_ of one step: where a function of
        this file calls it twice, or calls two such functions, or unscales there itself, its use
        becomes a TODO (a clip in it keeps the file on apex.amp) instead of a crash."""
        legacy = [u for u in uses if u.status == "legacy" and u.func is not None]
        helpers = {u.func for u in legacy}
        if not helpers:
            return
        calls: Dict[Any, List[Any]] = {}
        for node in walk(self.tree):
            if isinstance(node, cst.Call):
                callee = self._callee(node)
                if callee in helpers:
                    calls.setdefault(enclosing_function(self.parents, node), []).append(callee)
        unscaling = {u.func for u in uses if u.status in ("unscale", "exit", "defaults")}
        twice = {h for caller, called in calls.items() if len(called) > 1 or caller in unscaling for h in called}
        for use in legacy:
            if use.func not in twice:
                continue
            for members in phases.values():
                if use in members:
                    members.remove(use)
            use.status = "unknown"
            use.reason = (
                f"{use.func.name.value}() is called more than once in a function, or where that function unscales "
                "too: an unscale_ in it would raise the second time"
            )

    def _method_calls_of(self, site: Any, func: Any) -> List[Tuple[cst.Call, List[str]]]:
        """The calls ``self.<method>(...)`` in ``func`` of the method of the same class that
        holds ``site``, each with the optimizers the site scales for as ``func`` names them:
        sockeye's ``_step`` calls ``self._forward_backward(...)``, which scales through
        ``self.optimizer``, then clips and steps that optimizer (``self`` is the same object in
        both, so ``self.optimizer`` is too).  Empty unless every optimizer of the site is an
        attribute of the method's ``self``; a subclass that redefines a method of the class
        keeps the file on the shim (``override_plan``)."""
        cls = class_of_method(self.parents, site.func)
        if cls is None or func is None or class_of_method(self.parents, func) is not cls or not func.params.params:
            return []
        own, caller = self_name(site.func), self_name(func)
        names: List[str] = []
        for opt in site.optimizers:
            if not (isinstance(opt, cst.Attribute) and _chain_root(opt) == own):
                return []
            names.append(caller + code_of(opt)[len(own):])
        return [
            (call, names)
            for call in walk_of(func.body, cst.Call)
            if not any(a.star for a in call.args) and self._callee(call) is site.func
        ]

    def _callee(self, call: cst.Call) -> Optional[cst.FunctionDef]:
        func = call.func
        caller = enclosing_function(self.parents, call)
        if isinstance(func, cst.Name):
            scope = caller
            while scope is not None:
                # ``def grad_clip_func(parameters, c): clip_grad_norm_(parameters, c)`` in the
                # training function (Enigmatisms/NeRF): the innermost scope defining the name
                nested = [d for d in walk(scope.body) if isinstance(d, cst.FunctionDef)
                          and d.name.value == func.value and enclosing_function(self.parents, d) is scope]
                if nested:
                    return nested[0] if len(nested) == 1 else scope  # several: any of them may run
                scope = enclosing_function(self.parents, scope)
            return next(
                (d for d in self.tree.body if isinstance(d, cst.FunctionDef) and d.name.value == func.value), None
            )
        cls = class_of_method(self.parents, caller)
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and cls is not None):
            return None
        if func.value.value != self_name(caller):
            return None
        return next((m for m in methods_of(cls) if m.name.value == func.attr.value), None)
    def _reads_master_params(self, call: cst.Call) -> bool:
        """``clip_gradients(scaler, optimizer, 1.0)``: another file's function the GradScaler
        is given where apex.amp was, which reads ``amp.master_params(opt)`` (cross-file plan)."""
        plan = self.repo_plan()
        return plan is not None and code_of(call.func) in plan.amp_gradients

    def _given_parameters(self, call: cst.Call) -> bool:
        """``clip(model.parameters(), 1.0)``, and the parameters handed on through a
        comprehension or a collector (``clip([(n, p) for n, p in model.named_parameters() if
        p.requires_grad], ...)``, ``clip(filter(f, model.parameters()))``): a call given the
        parameters reads their gradients (a project's own clipping or norm helper)."""
        if isinstance(call.func, cst.Name) and call.func.value in _COLLECTORS:
            return False
        for arg in call.args:
            for value in walk(arg.value):
                if (
                    isinstance(value, cst.Call)
                    and isinstance(value.func, cst.Attribute)
                    and value.func.attr.value in ("parameters", "named_parameters")
                ):
                    return True
        return False

    # --- the phase of each use ---------------------------------------------------------------

    def _decide(self, use: _Use, sites, steps: Dict[cst.Call, str], flush: Set[cst.Call]) -> List[Tuple[str, Any]]:
        """Set ``use.status`` (unscale/legacy/accum/unknown/skip); the phases it joins."""
        if use.kind == "master" and use.func in self._info.unscale_at_callers:
            use.status = "skip"  # unscaled before this file's calls of its method
            return []
        block = next((s.with_stmt for s in sites if self._inside(use.stmt, s.with_stmt.body)), None)
        if block is not None and use.kind in ("master", "clip"):
            # proven by the analysis (else the clip or amp.master_params there kept the file on
            # apex.amp); a clip whose count is not proven here is a master_params one's, below
            count = exit_unscale_count(self, self.tree, use.node, block, self._info)
            if count is not None:
                use.status, use.reason = "exit", count
                return []
        here = start_of(self, use.node)
        # the last scaled backward before the use in its function: a scale_loss there, or a
        # call of a function of this file that holds one (with the optimizers it passes)
        site: Any = None
        site_opts: List[str] = []
        for candidate in sites:
            backwards = [(candidate.with_stmt, [code_of(o) for o in candidate.optimizers])]
            if candidate.func is not use.func:
                links = caller_links(self, candidate) or []
                backwards = [(ln.call, list(ln.optimizers.values())) for ln in links if ln.func is use.func]
                backwards += self._method_calls_of(candidate, use.func)
            for node, names in backwards:
                if (
                    enclosing_function(self.parents, node) is use.func
                    and end_of(self, node) <= here
                    and not exclusive(self.parents, node, use.stmt)
                    and (site is None or start_of(self, node) > start_of(self, site))
                ):
                    site, site_opts = node, names
        opts: List[str] = []
        if use.kind == "master":
            opts = [use.opt or ""]
        elif site is not None:
            opts = site_opts
        else:
            # after no scaled backward of this function (before it, or on the path that does
            # not scale): nothing to unscale, unless the backward is elsewhere (none here)
            later = self._next_step(use, None, steps)
            if use.kind in ("clip", "indirect") and later is not None and not any(s.func is use.func for s in sites):
                use.status, use.opt = "unknown", steps[later]
                use.reason = "the scaled backward is not in this function"
            else:
                use.status = "skip"
            return []
        if site is not None:
            # a use after the step (logging, EMA) sees the gradients scaler.step unscaled
            opts = [o for o in opts if not self._stepped_since(site, use, o, steps)]
            if not opts:
                use.status = "skip"
                return []
        keys: List[Tuple[str, Any]] = []
        for opt in opts:
            step = self._next_step(use, opt, steps)
            if step is None:
                if any(o == opt and enclosing_function(self.parents, c) is use.func for c, o in steps.items()):
                    # after a step that runs only sometimes (accumulation boundary): a clip
                    # or master_params read here runs on every micro-step
                    use.status, use.opt = (
                        ("accum", opt) if use.kind in ("master", "clip", "indirect") else ("skip", None)
                    )
                    return []
                if use.kind == "master":
                    use.status = "legacy"
                    return [(opt, use.func)]
                use.status, use.opt, use.reason = "unknown", opt, self._no_step_reason(use, opt)
                return []
            if step in flush:
                use.status, use.opt = "unknown", opt
                use.reason = (
                    f"{opt}.step() after the loop runs only when gradients are left: unscale_ and clip inside that if"
                )
                return []
            if self._phase_stmt(use, step) is None:
                count = self._stepped_every_time_by_default(use, step) if len(opts) == 1 else None
                if count is None:
                    # ``params = amp.master_params(opt)`` on every micro-step reads no gradient:
                    # only the clip of ``params`` at the boundary is a use
                    use.status, use.opt = ("skip", None) if _names_parameters_only(use) else ("accum", opt)
                    return []
                use.status, use.opt, use.reason = "defaults", opt, count
                use.boundary = code_of(self.parents[self.parents[self.statement_of(step)]].test)
                return [(opt, step)]
            keys.append((opt, step))
        use.status = "unscale"
        return keys

    def _no_step_reason(self, use: _Use, opt: str) -> str:
        """Why no step of ``opt`` is known to follow ``use``: none in its function, or one there
        that the scaled backward (run by a function this one calls) is not followed to."""
        if step_calls(use.func.body if use.func is not None else self.tree, opt):
            return f"the scaled backward runs in a function this one calls, and {opt}.step() here is not followed from it"
        return f"{opt}.step() is not in this function"

    def _stepped_every_time_by_default(self, use: _Use, step: cst.Call) -> Optional[str]:
        """A use on every micro-step that is not a norm or value clip (a project's own
        clipper, which cannot be given a scaled threshold), before a step that runs only
        under ``if <x> % K == 0:`` (the step alone in that if, the use beside the if), when
        ``K`` is 1 under the default flags: the step then follows every backward, so
        ``unscale_`` before the use is apex's order.  Should ``K`` be larger, the next
        backward's ``unscale_`` raises (GradScaler unscales once per step): no silent
        change.  ``K``'s code, or None."""
        if use.kind == "clip" and self.qualified_names(use.node.func) & SCALABLE_CLIPS:
            return None  # clipped at the threshold times the scale, exact for every K (APX328)
        step_stmt = self.statement_of(step)
        block = self.parents.get(step_stmt)
        guard = self.parents.get(block)
        if not isinstance(step_stmt, cst.SimpleStatementLine) or not isinstance(guard, cst.If):
            return None
        if guard.body is not block or guard.orelse is not None:
            return None
        if self.parents.get(guard) is not self.parents.get(use.stmt):
            return None  # the use and the accumulation if side by side in one block
        return every_time_by_default(self.tree, use.func, guard.test, parser_factories(self))

    def _stepped_since(self, backward: Any, use: _Use, opt: str, steps: Dict[cst.Call, str]) -> bool:
        """Whether a step of ``opt`` surely ran between the scaled backward (``backward``: the
        statement or call) and ``use``: it lies between them, alone on its line in a block
        that holds ``use``."""
        begin, here = end_of(self, backward), start_of(self, use.node)
        for call, o in steps.items():
            if o != opt or enclosing_function(self.parents, call) is not use.func:
                continue
            if not begin <= start_of(self, call) < here:
                continue
            line = self.statement_of(call)
            if isinstance(line, cst.SimpleStatementLine) and self._inside(use.stmt, self.parents.get(line)):
                return True
        return False

    def _inside(self, node: Any, outer: Any) -> bool:
        cur = node
        while cur is not None:
            if cur is outer:
                return True
            cur = self.parents.get(cur)
        return False

    def _next_step(self, use: _Use, opt: Optional[str], steps: Dict[cst.Call, str]) -> Optional[cst.Call]:
        here = start_of(self, use.node)
        found = [
            c
            for c, o in steps.items()
            if (opt is None or o == opt)
            and enclosing_function(self.parents, c) is use.func
            and start_of(self, c) > here
        ]
        return min(found, key=lambda c: start_of(self, c)) if found else None

    def _phase_stmt(self, use: _Use, step: cst.Call) -> Optional[cst.CSTNode]:
        """The statement an unscale_ for ``use`` goes before when ``step`` surely runs after
        it: ``use``'s statement (or the outermost loop around it below the step's block),
        inside the step's block (or the block of a ``with`` holding the step) or a block
        nested in it, before the step; else None."""
        step_stmt = self.statement_of(step)
        if not isinstance(step_stmt, cst.SimpleStatementLine):
            return None
        # the blocks the step surely runs in: its own, and out through `with` statements
        stepping: Dict[Any, Any] = {}
        below: Any = step_stmt
        block = self.parents.get(below)
        opt = code_of(step.func.value) if isinstance(step.func, cst.Attribute) else ""
        while isinstance(block, (cst.IndentedBlock, cst.Module)):
            stepping[block] = below
            owner = self.parents.get(block)
            chain = self._stepping_chain(owner, opt)
            if chain is not None:
                below, block = chain, self.parents.get(chain)
                continue
            if not isinstance(owner, cst.With):
                break
            below, block = owner, self.parents.get(owner)
        lifted = use.stmt
        cur: Any = use.stmt
        while True:
            parent = self.parents.get(cur)
            if parent is None or isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return None
            if parent in stepping:
                break
            if isinstance(parent, (cst.For, cst.While)):
                lifted = parent
            cur = parent
        body = list(parent.body)
        mark = stepping[parent]
        if body.index(cur) > body.index(mark):
            return None
        if cur is mark and (cur is not step_stmt or start_of(self, use.node) > start_of(self, step)):
            return None
        return lifted

    def _stepping_chain(self, owner: Any, opt: str) -> Optional[cst.If]:
        """The whole if/elif/else chain whose branch ``owner`` is, when every branch of it
        steps ``opt`` (``if native: native_scaler.step(opt); ... else: opt.step()``, a
        native branch beside the apex one): a step surely follows whichever runs.  Should
        another branch run while this scaler is enabled, the next unscale_ raises (no
        silent error)."""
        if isinstance(owner, cst.Else):
            owner = self.parents.get(owner)
        if not isinstance(owner, cst.If) or not opt:
            return None
        while isinstance(self.parents.get(owner), cst.If) and self.parents[owner].orelse is owner:
            owner = self.parents[owner]
        branch: Any = owner
        while isinstance(branch, cst.If):
            if not self._steps_in(branch.body, opt):
                return None
            branch = branch.orelse
        if not isinstance(branch, cst.Else) or not self._steps_in(branch.body, opt):
            return None
        return owner

    def _steps_in(self, block: Any, opt: str) -> bool:
        """``opt.step(...)`` or ``<a scaler>.step(opt, ...)`` in ``block``."""
        for node in walk(block):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "step":
                if code_of(node.func.value) == opt:
                    return True
                first = arg_value(node, 0, "optimizer")
                if first is not None and code_of(first) == opt:
                    return True
        return False

    # --- edits and findings -------------------------------------------------------------------

    def _unscale(self, phases: Dict[Tuple[str, Any], List[_Use]], exits: Set[Tuple[Any, str]]) -> None:
        """One ``scaler.unscale_(opt)`` per phase, before its first use, unless the one after an
        amp.scale_loss block (``exits``: the block and the optimizer) already stands before it,
        with no backward between (a second would raise)."""
        inserted: Dict[cst.CSTNode, List[str]] = {}
        for (opt, step), members in phases.items():
            members = [u for u in members if u.status in ("unscale", "legacy", "defaults")]
            if not members:
                continue
            if members[0].status == "legacy":
                point = members[0].stmt
            else:
                point = self._first_point(
                    [u.stmt if u.status == "defaults" else self._phase_stmt(u, step) for u in members]
                )
            scaler = self._info.scaler_of(members[0].scalers or members[0].scaler, opt)
            # the uses a point after ``point`` leaves before the unscale_ (they only name the
            # parameters); None: the unscale_ goes before ``point``
            named_only: Optional[List[_Use]] = None
            if backs_loss_in(point):
                # ``point`` holds a use and a backward (``if cpu: loss.backward(); params = ...
                # else: <scaled backward>; params = amp.master_params(opt)``, clip after the
                # if): an unscale_ before it would run before that backward, and the step
                # would then take the gradients still scaled
                named_only = [u for u in members if u.stmt is point or self._inside(u.stmt, point)]
                if not all(_names_parameters_only(u) for u in named_only):
                    for use in members:
                        use.status = "unknown"
                        use.opt = use.opt or opt
                        use.reason = "a backward runs between the first use and the others"
                    continue
            if opt in inserted.setdefault(point, []):
                continue
            if named_only is None and self._unscaled_at_exit_before(point, opt, exits):
                for use in members:
                    use.unscaled.append(opt)
                continue
            inserted[point].append(opt)
            guard = self._info.scaler_guards.get(enclosing_function(self.parents, point))
            unscale = statement(f"{scaler}.unscale_({opt})\n") if guard is None else guarded_unscale(guard, scaler, opt)
            if named_only is None:
                boundary = self._boundary_after(members, step)
                if boundary is not None:
                    self.edits.wrap([point, boundary], lambda ups, unscale=unscale: _moved_into_if(ups, unscale))
                    for use in members:
                        use.unscaled.append(opt)
                        use.moved_into = boundary
                    continue
                self.edits.insert_before(point, [unscale])
                self._update_before_continue(point, scaler)
            else:
                self.edits.insert_after(point, [unscale])
                following = self._next_statement(point)
                if following is not None:
                    self._update_before_continue(following, scaler, itself=True)
            for use in members:
                if named_only is None or use not in named_only:
                    use.unscaled.append(opt)

    def _unscaled_at_exit_before(self, point: Any, opt: str, exits: Set[Tuple[Any, str]]) -> bool:
        """Whether an amp.scale_loss block of ``exits`` unscaling ``opt`` stands before ``point``
        in its block, with no backward in the statements between."""
        block = self.parents.get(point)
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        if point not in body:
            return False
        for stmt in reversed(body[: body.index(point)]):
            if (stmt, opt) in exits:
                return True
            if backs_loss_in(stmt):
                return False
        return False

    def _boundary_after(self, members: List[_Use], step: Any) -> Optional[cst.If]:
        """The accumulation ``if`` holding ``step`` when the phase's uses, all on every
        micro-step under a count that is 1 by default (``defaults``), are one statement right
        before it (DLE-BERT run_squad.py: ``gradClipper.step(amp.master_params(optimizer))``,
        then ``if (step + 1) % args.gradient_accumulation_steps == 0:``): that statement moves
        into the ``if``, after ``unscale_``, so that a count > 1 unscales once per step
        instead of raising on the second backward; else None."""
        if any(u.status != "defaults" for u in members) or len({u.stmt for u in members}) != 1:
            return None
        stmt = members[0].stmt
        if not isinstance(stmt, cst.SimpleStatementLine) or not all(isinstance(s, cst.Expr) for s in stmt.body):
            return None  # a name it binds (the norm it returns) may be read after the if
        boundary = self.parents.get(self.parents.get(self.statement_of(step)))
        block = self.parents.get(stmt)
        if not isinstance(boundary, cst.If) or not isinstance(block, cst.IndentedBlock):
            return None
        body = list(block.body)
        if boundary not in body or body.index(boundary) != body.index(stmt) + 1:
            return None
        if not isinstance(boundary.body, cst.IndentedBlock):
            return None
        if any(self.edits.planned(s) or s in self.edits.groups for s in (stmt, boundary)):
            return None
        return boundary

    def _unscale_at_exit(self, use: _Use, sites, done: Set[Tuple[Any, str]]) -> None:
        """``scaler.unscale_(opt)`` after the last statement of the scale_loss block holding
        ``use`` (once per block, ``done``): where apex unscaled when the block exited (the
        scale_loss rule keeps the block's statements, in order, after the scaled backward)."""
        site = next(s for s in sites if self._inside(use.stmt, s.with_stmt.body))
        opt = use.opt or code_of(site.optimizers[0])
        use.unscaled.append(opt)
        if (site.with_stmt, opt) in done:
            return
        done.add((site.with_stmt, opt))
        scaler = self._info.scaler_of(use.scalers or use.scaler, opt)
        self.edits.insert_after(list(site.with_stmt.body.body)[-1], [statement(f"{scaler}.unscale_({opt})\n")])

    def _first_point(self, stmts: List[Any]) -> Any:
        """The first statement of the deepest block holding all of ``stmts`` that is or holds
        one of them."""
        paths = []
        for stmt in stmts:
            path = []  # (block, statement in it), innermost first
            cur = stmt
            while cur is not None:
                parent = self.parents.get(cur)
                if isinstance(parent, (cst.IndentedBlock, cst.Module)):
                    path.append((parent, cur))
                cur = parent
            paths.append(list(reversed(path)))
        depth = 0
        while all(len(p) > depth for p in paths) and len({p[depth][0] for p in paths}) == 1:
            depth += 1
        block = paths[0][depth - 1][0]
        members = {p[depth - 1][1] for p in paths}
        return next(s for s in block.body if s in members)

    def _report(self, use: _Use, phases: Dict[Tuple[str, Any], List[_Use]]) -> None:
        after = ", ".join(f"{use.scaler}.unscale_({o})" for o in use.unscaled)
        if use.kind == "master":
            if use.merged is not None:
                message = f"both branches clip {use.params} now; merged" + (f", after {after}" if after else "")
                self.report(use.merged[0], "APX322", message, fixed=True, severity="info")
                self._nan_todo(use.func, use.merged[1])
            else:
                named = code_of(arg_value(use.node, 0, "optimizer"))
                before = after and use.status != "exit"  # at the exit the unscale_ comes after it
                message = f"amp.master_params({named}) -> {use.params}" + (f", after {after}" if before else "")
                self.report(use.node, "APX321", message, fixed=True, severity="info")
                self._nan_todo(use.func, use.stmt)
        if use.status == "unscale" and use.kind != "master":
            if use.kind in ("clip", "indirect"):
                self.report(
                    use.node,
                    "APX325",
                    f"{use.what} after {after}: apex had unscaled the gradients when amp.scale_loss exited",
                    fixed=True,
                    severity="info",
                )
                self._nan_todo(use.func, use.stmt)
            elif all(
                group[0] is use and all(u.kind not in ("master", "clip") for u in group)
                for group in phases.values()
                if use in group
            ):
                # one warning per phase, when no clip asked for the unscale_ anyway
                self.report(
                    use.node,
                    "APX325",
                    f"{use.what} between the scaled backward and the step may read gradients: {after} first, "
                    "as apex had unscaled them when amp.scale_loss exited",
                    fixed=True,
                    severity="warning",
                )
        elif use.status == "exit":
            count = (
                f"every backward is a step ({use.reason} is 1 under the default flags; with {use.reason} > 1 the "
                "next backward's unscale_ raises)"
                if use.reason
                else "every backward is a step"
            )
            levels = run_time_levels(self)
            level = (
                f"{' and '.join(f'opt_level={code}' for code in levels)}: O1 under the default flags"
                if levels
                else "its opt level on every run"
            )
            o2 = (
                "; a run that sets the opt level to O2 trains otherwise than apex did: there apex's clip read the "
                "fp32 master weights, whose gradients apex fills only when the block exits, and did nothing, "
                "while this clip cuts the scaled gradients"
                if levels and not (use.kind == "clip" and reads_module_parameters(use.node.args[0].value))
                else ""
            )
            self.report(
                use.node,
                "APX330",
                f"{use.what} inside the amp.scale_loss block reads the scaled gradients of this backward, as under "
                f"apex's O1 ({level}); {after} follows the block, where apex unscaled them: the same while {count}"
                f"{o2}",
                fixed=True,
                severity="warning" if use.reason or levels else "info",
            )
        elif use.status == "defaults" and use.moved_into is not None:
            self.report(
                use.node,
                "APX263",
                f"{use.what} runs after every backward, {use.opt}.step() only when {use.boundary}: "
                f"{use.what} moved into that if, after {after}, so that it clips the gradients of the step "
                f"once (a GradScaler unscales once per step). {use.reason} is 1 under the default flags, where "
                f"every backward is a step and this is apex's order; with {use.reason} > 1 apex clipped the "
                f"running sum after every backward, this clips the sum once: the same unless a partial sum "
                f"exceeds the threshold",
                fixed=True,
                severity="warning",
            )
        elif use.status == "defaults":
            self.report(
                use.node,
                "APX329",
                f"{use.what} runs after every backward, {use.opt}.step() only when {use.boundary}: "
                f"{use.reason} is 1 under the default flags, so every backward is a step and {after} goes "
                f"before {use.what}, as apex had unscaled the gradients; with {use.reason} > 1 the next "
                f"backward's unscale_ raises (one per step): to accumulate, move {use.what} into that if, "
                f"after {use.scaler}.unscale_({use.opt})",
                fixed=True,
                severity="warning",
            )
        elif use.status == "accum" and self._scale_threshold(use):
            pass
        elif use.status == "accum":
            apex = (
                "apex left the gradients of a delayed backward (delay_unscale) scaled and unscaled the others"
                if self._delays_unscale(use)
                else "apex unscaled the gradients after each backward"
            )
            self.todo(
                use.node,
                "APX326",
                f"{ACCUM_TODO} {use.what} runs after every backward, but {use.opt}.step() only at the "
                f"accumulation boundary (or under a condition). {apex}; {use.scaler}.unscale_({use.opt}) can run "
                f"only once per step, so there is no exact native equivalent: move this to the step boundary, "
                f"after {use.scaler}.unscale_({use.opt})",
            )
        elif use.status == "unknown" and use.reason == BACKWARD_AGAIN:
            self.todo(
                use.node,
                "APX327",
                f"{UNKNOWN_TODO} {use.what} saw gradients apex had unscaled, but {use.scaler} keeps them "
                f"scaled until {use.scaler}.step({use.opt}), and {BACKWARD_AGAIN}: divide what it reads by "
                f"{use.scaler}.get_scale() by hand",
            )
        elif use.status == "unknown":
            self.todo(
                use.node,
                "APX327",
                f"{UNKNOWN_TODO} {use.what} saw gradients apex had unscaled, but {use.scaler} keeps them "
                f"scaled until {use.scaler}.step({use.opt}) ({use.reason}): call {use.scaler}.unscale_("
                f"{use.opt}) before it, once per step",
            )

    def _delays_unscale(self, use: _Use) -> bool:
        """Whether an amp.scale_loss of ``use``'s function may delay its unscale where ``use``
        runs: not where ``use`` runs only when that delay is off (``delay_unscale=not
        backward_now`` and the use under ``if backward_now:``, or after ``if not
        backward_now: return``; SwinBERT, aps), the gradients apex had unscaled by then."""
        return any(
            site.func is use.func and _may_delay_unscale(site.call) and not self._only_undelayed(use, site.call)
            for site in self._info.scale_losses
        )

    def _only_undelayed(self, use: _Use, call: cst.Call) -> bool:
        """Whether ``use`` runs only where the ``delay_unscale`` of ``call`` is false, told by
        the text of its tests: an ``if`` around ``use`` testing the delay's negation, or an
        ``if`` testing the delay that returns, before ``use`` in an enclosing block."""
        delay = code_of(arg_value(call, 4, "delay_unscale")).strip()
        negations = {_negation(delay)} - {None}
        cur: Any = use.stmt
        while cur is not None and cur is not use.func:
            parent = self.parents.get(cur)
            if isinstance(parent, cst.IndentedBlock):
                owner = self.parents.get(parent)
                if isinstance(owner, cst.If) and owner.body is parent and code_of(owner.test).strip() in negations:
                    return True
                body = list(parent.body)
                for earlier in body[: body.index(cur)]:
                    if (
                        isinstance(earlier, cst.If)
                        and earlier.orelse is None
                        and code_of(earlier.test).strip() == delay
                        and any(isinstance(n, cst.Return) for n in walk(earlier.body))
                    ):
                        return True
            cur = parent
        return False

    def _scale_threshold(self, use: _Use) -> bool:
        """A clip on every micro-step (the step only at the accumulation boundary): apex
        clipped the unscaled gradients; clipping the scaled ones at the threshold times the
        current scale is the same operation (the scale is constant until the step's update,
        and the norm and the values scale with it), so the clip stays where it is.  Its
        returned norm is divided back.  False when the use is not such a clip call."""
        if self._delays_unscale(use):
            # apex left the gradients of a delayed micro-step scaled: its clip there cut the
            # scaled ones at the threshold itself (no scale times the threshold is that)
            return False
        if use.merged is not None:
            # ``if fp16: clip(amp.master_params(o), c) else: clip(model.parameters(), c)``: the
            # other branch's clip is written in place of the if; it gets the scaled threshold
            return self._scale_merged_threshold(use)
        call = use.node if use.kind == "clip" else self.parents.get(self.parents.get(use.node))
        if not isinstance(call, cst.Call) or not self.qualified_names(call.func) & SCALABLE_CLIPS:
            return False
        scaled = self._scaled_threshold_arg(call, use.scaler)
        if scaled is None:
            return False
        arg, value = scaled
        self.replace_node(arg, lambda upd: upd.with_changes(value=value))
        holder = self.parents.get(call)
        if not isinstance(holder, cst.Expr):  # the norm is used: give back the unscaled one
            self.replace_node(call, lambda upd: cst.parse_expression(f"({code_of(upd)} / {use.scaler}.get_scale())"))
        self.report(
            call,
            "APX328",
            f"{code_of(call.func)}(...) runs on every micro-step, the step at the accumulation boundary: "
            f"it clips the scaled gradients at the threshold times {use.scaler}.get_scale(), as apex clipped "
            "the unscaled ones",
            fixed=True,
            severity="info",
        )
        return True

    def _scaled_threshold_arg(self, call: cst.Call, scaler: str) -> Optional[Tuple[cst.Arg, cst.BaseExpression]]:
        """The threshold argument of the clip ``call`` and its value times ``scaler``'s
        current scale; None when the threshold is not given plainly."""
        index = next((i for i, a in enumerate(call.args) if a.keyword is not None or a.star), len(call.args))
        position = 1 if index > 1 else None
        named = [a for a in call.args if a.keyword is not None and a.keyword.value in ("max_norm", "clip_value")]
        arg = named[0] if named else (call.args[position] if position is not None else None)
        if arg is None or arg.star:
            return None
        value = code_of(arg.value)
        simple = isinstance(arg.value, (cst.Name, cst.Attribute, cst.Integer, cst.Float, cst.Call, cst.Subscript))
        return arg, expression(f"{value if simple else f'({value})'} * {scaler}.get_scale()")

    def _scale_merged_threshold(self, use: _Use) -> bool:
        """``_scale_threshold`` for the clip statement written in place of a merged if/else:
        that statement (the other branch's, a fresh copy) is written with the scaled
        threshold instead."""
        if_stmt, other = use.merged
        if not isinstance(other, cst.SimpleStatementLine) or len(other.body) != 1:
            return False
        expr = other.body[0]
        call = expr.value if isinstance(expr, cst.Expr) else None
        if not isinstance(call, cst.Call) or not self.qualified_names(self._original_call(use).func) & SCALABLE_CLIPS:
            return False
        if code_of(call.func) != code_of(self._original_call(use).func):
            return False
        scaled = self._scaled_threshold_arg(call, use.scaler)
        if scaled is None:
            return False
        arg, value = scaled
        written = other.deep_replace(arg, arg.with_changes(value=value))
        self.edits.replace(if_stmt, lambda upd, written=written: [move_leading(upd, written)])
        self.report(
            if_stmt,
            "APX328",
            f"{code_of(call.func)}(...) runs on every micro-step, the step at the accumulation boundary: "
            f"it clips the scaled gradients at the threshold times {use.scaler}.get_scale(), as apex clipped "
            "the unscaled ones",
            fixed=True,
            severity="info",
        )
        return True

    def _original_call(self, use: _Use) -> Any:
        """The clip call holding ``use``'s ``amp.master_params(...)``."""
        return self.parents.get(self.parents.get(use.node))

    def _next_statement(self, stmt: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The statement after ``stmt`` in its block, None for the last one."""
        block = self.parents.get(stmt)
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        index = body.index(stmt) + 1 if stmt in body else len(body)
        return body[index] if index < len(body) else None

    def _update_before_continue(self, stmt: cst.BaseStatement, scaler: str, itself: bool = False) -> None:
        """A ``continue`` between ``unscale_`` and the step skips ``scaler.update()``, and the
        next ``unscale_`` would then raise: update (and back off the scale) before it.  The
        unscale_ goes before ``stmt`` (``itself``: ``stmt`` is looked into too) or before
        it."""
        block = self.parents.get(stmt)
        body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
        if stmt not in body:
            return
        for later in body[body.index(stmt) + (0 if itself else 1) :]:
            if any(
                isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "step"
                for n in walk(later)
            ):
                return
            for node in walk(later):
                if isinstance(node, (cst.For, cst.While, cst.FunctionDef)):
                    break
                if isinstance(node, cst.Continue):
                    line = self.parents.get(node)
                    if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                        self.edits.insert_before(line, [statement(f"{scaler}.update()\n")])
                        self.report(
                            node,
                            "APX324",
                            f"continue after {scaler}.unscale_(): {scaler}.update() first, or the next unscale_ raises",
                            fixed=True,
                            severity="info",
                        )

    def _merge_branches(self, stmt, call) -> Optional[Tuple[cst.If, cst.BaseStatement, str]]:
        """``if c: clip(amp.master_params(o)) else: clip(X)`` -> ``(if, else-statement, X)``
        when the branches differ only there."""
        block = self.parents.get(stmt)
        if_stmt = self.parents.get(block) if block is not None else None
        if not isinstance(if_stmt, cst.If) or if_stmt.body is not block or not isinstance(if_stmt.orelse, cst.Else):
            return None
        outer = self.parents.get(if_stmt)
        if isinstance(outer, cst.If) and outer.orelse is if_stmt:
            return None  # an ``elif``: no statement of a block, so no edit could replace it
        body = suite_statements(if_stmt.body)
        other_body = suite_statements(if_stmt.orelse.body)
        if len(body) != 1 or len(other_body) != 1:
            return None
        mine = code_of(body[0].with_changes(leading_lines=[])).strip()
        theirs = code_of(other_body[0].with_changes(leading_lines=[])).strip()
        params = self._sibling_expression(body[0], mine, theirs, call)
        if params is None:
            return None
        try:
            value = cst.parse_expression(params)
        except cst.ParserSyntaxError:
            return None
        if _is_literal(value):
            return None  # ``else: params = None``: a sentinel its reader takes for "not apex", no parameters
        return if_stmt, other_body[0].with_changes(leading_lines=[]), params

    def _sibling_expression(self, stmt: Any, mine: str, theirs: str, call: cst.Call) -> Optional[str]:
        """The expression of ``theirs`` (the sibling branch's statement) where ``mine`` (the
        code of ``stmt``) has ``call``, the two otherwise the same: by their texts, else by
        their syntax trees (the same call wrapped over other lines, ``_statement_hole``: the texts
        would leave the line break in the expression, or not match at all)."""
        hole = code_of(call)
        if mine.count(hole) != 1:
            return None
        prefix, suffix = mine.split(hole)
        if theirs.startswith(prefix) and theirs.endswith(suffix) and len(theirs) > len(prefix) + len(suffix):
            params = theirs[len(prefix) : len(theirs) - len(suffix)]
            if params == params.strip():
                return params
        pattern = code_of(stmt.deep_replace(call, cst.Name(HOLE)).with_changes(leading_lines=[]))
        return filled_hole(pattern, theirs)

    def _params_of(self, module: cst.Module, opt_text: str, func: Any) -> str:
        """``model.parameters()`` when the optimizer is built from it in this file, where
        ``model`` means the same in ``func`` (the function of the use): the optimizer is built
        in ``func``, or ``func`` binds the model's name too (``train(model, optimizer)``), or
        the optimizer is built at module level and ``func`` does not rebind the name; else the
        optimizer's param groups (a helper ``clip(optimizer, n)`` has no ``model``)."""
        bound = bound_names(func)
        for node in walk_of(module, cst.Assign):
            if (
                len(node.targets) == 1
                and code_of(node.targets[0].target) == opt_text
                and isinstance(node.value, cst.Call)
            ):
                first = arg_value(node.value, 0, "params")
                if (
                    isinstance(first, cst.Call)
                    and isinstance(first.func, cst.Attribute)
                    and first.func.attr.value == "parameters"
                    and not first.args
                    and self._same_model(first.func.value, enclosing_function(self.parents, node), func, bound)
                ):
                    return code_of(first)
        return optimizer_params(opt_text)

    def _same_model(self, model: Any, built_in: Any, func: Any, bound: FrozenSet[str]) -> bool:
        """Whether ``model`` (of an optimizer built in ``built_in``) names the same in ``func``:
        ``func`` binds that name too (``train(model, optimizer)``), or ``func`` is ``built_in``
        or nested in it (a closure; module level holds every function) with nothing between
        rebinding it."""
        if built_in is func:
            return True
        root = model
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return False
        if func is not None and root.value in bound:
            return True
        scope = func
        while scope is not None and scope is not built_in:
            if root.value in bound_names(scope):
                return False
            scope = enclosing_function(self.parents, scope)
        return scope is built_in

    def _nan_todo(self, func, clip_stmt) -> None:
        """A ``math.isnan(norm)`` / ``torch.isnan(norm)`` on the clipped norm gets a TODO."""
        targets: Set[str] = set()
        for node in walk(clip_stmt):
            if isinstance(node, cst.Assign):
                targets |= {code_of(t.target) for t in node.targets}
        if not targets:
            return
        scope = func.body if func is not None else self.tree
        for node in walk(scope):
            if (
                isinstance(node, cst.Call)
                and code_of(node.func).split(".")[-1] == "isnan"
                and node.args
                and code_of(node.args[0].value) in targets
            ):
                self.todo(
                    node,
                    "APX323",
                    f"{code_of(node)} misses inf: GradScaler skips steps with inf or nan grads, "
                    "use math.isfinite(...) (or torch.isfinite) if this check decides anything",
                    severity="warning",
                )


def _is_literal(node: cst.BaseExpression) -> bool:
    """``None``, ``False``, a number, a string: no parameters to clip."""
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    return isinstance(node, (cst.BaseNumber, cst.BaseString))


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
#: the pieces of the two examples whose accumulation flag defaults to 1: a project's own
#: norm clipper, the flags, the model and the script's entry
_NORM_CUTTER = """\
class NormCutter:
    def __init__(self, limit):
        self.limit = limit

    def step(self, parameters):
        grads = [p.grad for p in parameters if p.grad is not None]
        total = torch.norm(torch.stack([g.norm() for g in grads])).item()
        if total > self.limit:
            for g in grads:
                g.mul_(self.limit / total)


"""
_FLAGS = '''\
def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--fp16", action="store_true")
'''
_MODEL = '''\
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
'''
_ENTRY = '''

if __name__ == "__main__":
    main()
'''


EXAMPLES: List[Example] = [
    Example(
        "fp16-and-fp32-branches-merged",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, args):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, batches, args):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX322"),
    ),
    Example(
        # an ``elif`` is no statement of a block: merging it with its ``else`` was reported
        # (APX322) but never written, and the file kept apex's master_params through the shim
        "master-params-clipped-in-an-elif-is-rewritten-in-place",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if args.max_grad_norm <= 0:
            pass
        elif args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, batches, args):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        if args.max_grad_norm <= 0:
            pass
        elif args.fp16:
            torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), args.max_grad_norm)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX321", "APX325"),
    ),
    Example(
        "master-params-without-else",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, max_norm):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX321"),
    ),
    Example(
        "nan-check-after-clips-in-both-branches-gets-one-todo",
        before="""\
import math

import torch
from apex import amp


def train(model, batches, fp16):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x in batches:
        loss = model(x).sum()
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if fp16:
            grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            overflow = math.isnan(grad_norm)
        else:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
""",
        after="""\
import math

import torch


def train(model, batches, fp16):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        if fp16:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            # TODO(apexcompat): math.isnan(grad_norm) misses inf: GradScaler skips steps with inf or
            #   nan grads, use math.isfinite(...) (or torch.isfinite) if this check decides anything
            overflow = math.isnan(grad_norm)
        else:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX321", "APX323", "APX325"),
    ),
    Example(
        "nan-check-gets-todo",
        before="""\
import math

import torch
from apex import amp


def train(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        if math.isnan(grad_norm):
            print("skipping a NaN step")
            continue
        optimizer.step()
""",
        after="""\
import math

import torch


def train(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # TODO(apexcompat): math.isnan(grad_norm) misses inf: GradScaler skips steps with inf or
        #   nan grads, use math.isfinite(...) (or torch.isfinite) if this check decides anything
        if math.isnan(grad_norm):
            print("skipping a NaN step")
            scaler.update()
            continue
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX321", "APX323", "APX324"),
    ),
    Example(
        "clip-on-model-parameters-gets-unscale",
        before="""\
import torch
from torch import nn
from apex import amp


def train(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
""",
        after="""\
import torch
from torch import nn


def train(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX325'),
    ),
    Example(
        "helper-given-parameters-gets-unscale",
        before="""\
from apex import amp


def train(model, optimizer, loader, clip_grads, max_norm):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if max_norm is not None:
            clip_grads(model.parameters(), max_norm)
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, loader, clip_grads, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        if max_norm is not None:
            scaler.unscale_(optimizer)
            clip_grads(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX325'),
    ),
    Example(
        "clip-on-every-micro-step-scales-its-threshold",
        before="""\
import torch
from apex import amp
from torch.nn.utils import clip_grad_norm_


def train(model, optimizer, loader, accumulation_steps, max_norm):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip_grad_norm_(amp.master_params(optimizer), max_norm)
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch
from torch.nn.utils import clip_grad_norm_


def train(model, optimizer, loader, accumulation_steps, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accumulation_steps
        scaler.scale(loss).backward()
        clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm * scaler.get_scale())
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX321', 'APX328'),
    ),
    Example(
        # the Hugging Face Trainer of 2020 (RE-Context-or-Names, adapter-transformers): the
        # fp16 and fp32 clips merge into one, and the step is ``xm.optimizer_step`` on a TPU, so
        # the clip runs where no GradScaler step follows: the merged clip takes the threshold
        # times the scale, as an unmerged one does (it kept apex.amp, APX326)
        "merged-clip-before-a-tpu-or-scaler-step-scales-its-threshold",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, args, xm=None):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)
    for step, x in enumerate(loader):
        loss = model(x).sum() / args.gradient_accumulation_steps
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            if args.fp16:
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
            if xm is not None:
                xm.optimizer_step(optimizer)
            else:
                optimizer.step()
            model.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, args, xm=None):
    use_amp = bool(args.fp16 and args.fp16_opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for step, x in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum() / args.gradient_accumulation_steps
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm * scaler.get_scale())
            if xm is not None:
                xm.optimizer_step(optimizer)
            else:
                scaler.step(optimizer)
                scaler.update()
            model.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX301', 'APX311', 'APX314', 'APX322', 'APX328'),
    ),
    Example(
        # Enigmatisms/NeRF's loop: the forward pass and the clip are functions nested in the
        # training function; the nested clip reads the gradients apex had unscaled, so
        # unscale_ goes before its call (a call of a nested function with plain arguments
        # passed for harmless before), and the call of the nested forward goes under autocast
        "clip-in-a-nested-function-gets-unscale-before-its-call",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, grad_clip):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    params = list(model.parameters())

    def clip(parameters, threshold):
        if threshold > 0:
            torch.nn.utils.clip_grad_norm_(parameters, threshold)

    for x, y in loader:
        def run():
            optimizer.zero_grad()
            return torch.nn.functional.mse_loss(model(x), y)
        loss = run()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip(params, grad_clip)
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, loader, grad_clip):
    scaler = torch.amp.GradScaler("cuda")
    params = list(model.parameters())

    def clip(parameters, threshold):
        if threshold > 0:
            torch.nn.utils.clip_grad_norm_(parameters, threshold)

    for x, y in loader:
        def run():
            optimizer.zero_grad()
            return torch.nn.functional.mse_loss(model(x), y)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = run()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip(params, grad_clip)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX325'),
    ),
    Example(
        "norm-helper-on-every-micro-step-reported",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, accumulation_steps, grad_norm_of):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        log(grad_norm_of(amp.master_params(optimizer)))
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, accumulation_steps, grad_norm_of):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accumulation_steps
        scaler.scale(loss).backward()
        # TODO(apexcompat): per-micro-step gradient use: grad_norm_of(...) runs after every
        #   backward, but optimizer.step() only at the accumulation boundary (or under a
        #   condition). apex unscaled the gradients after each backward;
        #   scaler.unscale_(optimizer) can run only once per step, so there is no exact native
        #   equivalent: move this to the step boundary, after scaler.unscale_(optimizer)
        log(grad_norm_of((p for group in optimizer.param_groups for p in group["params"])))
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX321', 'APX326'),
    ),
    Example(
        # an input perturbation made in the function (adversarial training): its gradient is
        # no optimizer's, apex left it scaled as GradScaler does, and the loop divides it by
        # the scale itself, so reading it on every micro-step needs no TODO; a gradient of a
        # tensor taken from the model may be a parameter's and still gets one
        "gradient-of-a-perturbation-made-in-the-function-needs-no-unscale",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, accumulation_steps, step_size):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        noise = torch.zeros_like(x).requires_grad_()
        loss = criterion(model(x + noise), y) / accumulation_steps
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        scale = scaled_loss.item() / loss.item()
        noise = (noise + step_size * noise.grad / scale).detach()
        gate = model.gate
        track(gate.grad)
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, accumulation_steps, step_size):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        noise = torch.zeros_like(x).requires_grad_()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x + noise), y) / accumulation_steps
        scaled_loss = scaler.scale(loss)
        scaled_loss.backward()
        scale = scaled_loss.item() / loss.item()
        noise = (noise + step_size * noise.grad / scale).detach()
        gate = model.gate
        # TODO(apexcompat): per-micro-step gradient use: gate.grad read runs after every
        #   backward, but optimizer.step() only at the accumulation boundary (or under a
        #   condition). apex unscaled the gradients after each backward;
        #   scaler.unscale_(optimizer) can run only once per step, so there is no exact native
        #   equivalent: move this to the step boundary, after scaler.unscale_(optimizer)
        track(gate.grad)
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX326'),
    ),
    Example(
        # a project's own clipper on every micro-step (DLE-BERT run_squad.py's GradientClipper)
        # right before the if that steps under an accumulation count whose flag defaults to 1:
        # it moves into that if, after unscale_: with the default flags every backward is a
        # step (apex's order); with a larger count it clips once per step, where an unscale_
        # before every backward would raise on the second
        "own-clipper-on-every-micro-step-with-a-count-of-one-by-default-moves-into-the-step-if",
        before="""\
import argparse

import torch
from apex import amp


"""
        + _NORM_CUTTER
        + _FLAGS
        + """\
    args = parser.parse_args()
"""
        + _MODEL
        + """\
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    cutter = NormCutter(1.0)
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        cutter.step(amp.master_params(optimizer))
        if (step + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
        + _ENTRY,
        after="""\
import argparse

import torch


"""
        + _NORM_CUTTER
        + _FLAGS
        + """\
    args = parser.parse_args()
"""
        + _MODEL
        + """\
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    cutter = NormCutter(1.0)
    for step in range(8):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (step + 1) % args.accumulate == 0:
            scaler.unscale_(optimizer)
            cutter.step(model.parameters())
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""
        + _ENTRY,
        codes=('APX101', 'APX201', 'APX209', 'APX263', 'APX301', 'APX311', 'APX314', 'APX321'),
    ),
    Example(
        # ... with a statement between the clipper and that if: the clipper stays where it is,
        # after unscale_ (apex's order under the default flags); with a larger count the
        # second backward's unscale_ raises instead of training otherwise
        "own-clipper-on-every-micro-step-apart-from-the-step-if-gets-unscale-before-it",
        before="""\
import argparse

import torch
from apex import amp


"""
        + _NORM_CUTTER
        + _FLAGS
        + """\
    args = parser.parse_args()
"""
        + _MODEL
        + """\
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    cutter = NormCutter(1.0)
    losses = []
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        cutter.step(amp.master_params(optimizer))
        losses.append(loss.item())
        if (step + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
        + _ENTRY,
        after="""\
import argparse

import torch


"""
        + _NORM_CUTTER
        + _FLAGS
        + """\
    args = parser.parse_args()
"""
        + _MODEL
        + """\
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    cutter = NormCutter(1.0)
    losses = []
    for step in range(8):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        cutter.step(model.parameters())
        losses.append(loss.item())
        if (step + 1) % args.accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""
        + _ENTRY,
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX321', 'APX329'),
    ),
    Example(
        # a clip inside the scale_loss block under O1: it clips this backward's scaled
        # gradients, and the step follows every backward (the count's default is 1): the clip
        # stays after the scaled backward and unscale_ follows it, where apex unscaled; a
        # count > 1 raises there
        "clip-inside-the-block-stays-on-the-scaled-gradients-with-a-count-of-one-by-default",
        before="""\
import argparse

import torch


"""
        + _FLAGS
        + """\
    args = parser.parse_args()
    accumulate = args.accumulate
"""
        + _MODEL
        + """\
    if args.fp16:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / accumulate
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
        + _ENTRY,
        after="""\
import argparse

import torch


"""
        + _FLAGS
        + """\
    args = parser.parse_args()
    accumulate = args.accumulate
"""
        + _MODEL
        + """\
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for step in range(8):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(torch.randn(2, 4).cuda()).mean() / accumulate
        if args.fp16:
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.unscale_(optimizer)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""
        + _ENTRY,
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX321', 'APX330'),
    ),
    Example(
        # the same with the opt level read from a flag whose default is O1 (GPT2-Chinese's
        # --fp16_opt_level): the default run is apex's O1 and migrates as above; a run with the
        # flag at O2 clipped nothing in apex (the block's master gradients are still empty) and
        # clips here, which the finding says
        "clip-inside-the-block-with-the-opt-level-from-a-flag-defaulting-to-o1",
        before="""\
import argparse

import torch


"""
        + _FLAGS
        + """\
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    accumulate = args.accumulate
"""
        + _MODEL
        + """\
    if args.fp16:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / accumulate
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
        + _ENTRY,
        after="""\
import argparse

import torch


"""
        + _FLAGS
        + """\
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    accumulate = args.accumulate
"""
        + _MODEL
        + """\
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for step in range(8):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(torch.randn(2, 4).cuda()).mean() / accumulate
        if args.fp16:
            scaler.scale(loss).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.unscale_(optimizer)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (step + 1) % accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
"""
        + _ENTRY,
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX301', 'APX311', 'APX314', 'APX321', 'APX330'),
    ),
    Example(
        "clip-before-a-step-in-another-method-reported",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def step(self):
        torch.nn.utils.clip_grad_value_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, loss):
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss: wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        self.scaler.scale(loss).backward()

    def step(self):
        # TODO(apexcompat): gradients used after the scaled backward:
        #   torch.nn.utils.clip_grad_value_(...) saw gradients apex had unscaled, but
        #   self.scaler keeps them scaled until self.scaler.step(self.optimizer) (the scaled
        #   backward is not in this function): call self.scaler.unscale_(self.optimizer) before
        #   it, once per step
        torch.nn.utils.clip_grad_value_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX210', 'APX301', 'APX311', 'APX327'),
    ),
    Example(
        # the fp16 branch clips amp.master_params(...) wrapped over two lines, the other branch
        # the model's parameters on one: the same statement but for that expression, so the
        # branches merge as one-line ones do, and the step's own method unscales before the
        # clip (the scaled backward is in another method; every gradient the clip reads is the
        # step's, which scaler.step would unscale right after it anyway)
        "wrapped-master-params-clip-merged-in-the-step-method",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        if self.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    def optim_step(self, max_norm):
        if self.fp16:
            torch.nn.utils.clip_grad_norm_(
                amp.master_params(self.optimizer), max_norm)
        else:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def train_step(self, batches, max_norm):
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
        self.optim_step(max_norm)
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            self.model, self.optimizer = model, optimizer
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def backward(self, loss):
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def optim_step(self, max_norm):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def train_step(self, batches, max_norm):
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
        self.optim_step(max_norm)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX322'),
    ),
    Example(
        # the branches differ beyond the parameters (error_if_nonfinite): no merge; the fp16
        # branch unscales, the plain branch's clip is not proven to follow an unscaled backward
        # and keeps its TODO
        "wrapped-master-params-clip-unlike-its-branch-reported",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        if self.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    def optim_step(self, max_norm):
        if self.fp16:
            torch.nn.utils.clip_grad_norm_(
                amp.master_params(self.optimizer), max_norm)
        else:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm, error_if_nonfinite=True)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def train_step(self, batches, max_norm):
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
        self.optim_step(max_norm)
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
        if fp16:
            self.model, self.optimizer = model, optimizer
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def backward(self, loss):
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def optim_step(self, max_norm):
        if self.fp16:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(
                (p for group in self.optimizer.param_groups for p in group["params"]), max_norm)
        else:
            # TODO(apexcompat): gradients used after the scaled backward:
            #   torch.nn.utils.clip_grad_norm_(...) saw gradients apex had unscaled, but self.scaler
            #   keeps them scaled until self.scaler.step(self.optimizer) (the scaled backward is not
            #   in this function): call self.scaler.unscale_(self.optimizer) before it, once per
            #   step
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), max_norm, error_if_nonfinite=True)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def train_step(self, batches, max_norm):
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
        self.optim_step(max_norm)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX321', 'APX327'),
    ),
    Example(
        # the clip is in a method of its own, called between the scaled backward and the step:
        # scaler.unscale_ goes before that call
        "clip-in-a-method-called-before-the-step",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def clip(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.clip()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def clip(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        self.clip()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX325'),
    ),
    Example(
        # a helper module yields amp.master_params(optimizer), else the param groups itself: both
        # are the param groups natively (no master weights); its callers' clips get the unscale_
        "master-params-helper-module",
        before='''\
"""Small helpers shared by the trainers."""
try:
    import apex

    apex_available = True
except ImportError:
    apex_available = False


def master_params(optimizer):
    """The parameters the optimizer steps: apex's fp32 master copies under O2."""
    if apex_available:
        yield from apex.amp.master_params(optimizer)
    else:
        for group in optimizer.param_groups:
            yield from group["params"]
''',
        after='''\
"""Small helpers shared by the trainers."""
apex_available = True


def master_params(optimizer):
    """The parameters the optimizer steps: apex's fp32 master copies under O2."""
    if apex_available:
        yield from (p for group in optimizer.param_groups for p in group["params"])
    else:
        for group in optimizer.param_groups:
            yield from group["params"]
''',
        codes=('APX101', 'APX103', 'APX218'),
    ),
    Example(
        # ColossalAI's gemini test: the optimizer built on the model's parameters went through a
        # helper of another module that initializes apex at O2 (it stays on the shim there), so
        # its param groups hold fp32 master copies, not the model's parameters: the clip reads
        # them from the optimizer (before: torch_model.parameters(), the float16 model's
        # gradients, which the step never reads)
        "master-params-of-an-optimizer-initialized-in-another-module",
        before="""\
import torch

from helpers import convert_to_apex_amp


def check_grad_clipping(model_builder, data):
    torch_model = model_builder().cuda()
    torch_optim = torch.optim.Adam(torch_model.parameters(), lr=1e-3)
    torch_model, torch_optim = convert_to_apex_amp(torch_model, torch_optim, dict(opt_level="O2"))
    torch_optim.zero_grad()
    torch_optim.backward(torch_model(data).sum())

    import apex.amp as apex_amp

    torch.nn.utils.clip_grad_norm_(apex_amp.master_params(torch_optim), 1.0)
    torch_optim.step()
""",
        after="""\
import torch

from helpers import convert_to_apex_amp


def check_grad_clipping(model_builder, data):
    torch_model = model_builder().cuda()
    torch_optim = torch.optim.Adam(torch_model.parameters(), lr=1e-3)
    torch_model, torch_optim = convert_to_apex_amp(torch_model, torch_optim, dict(opt_level="O2"))
    torch_optim.zero_grad()
    torch_optim.backward(torch_model(data).sum())

    torch.nn.utils.clip_grad_norm_((p for group in torch_optim.param_groups for p in group["params"]), 1.0)
    torch_optim.step()
""",
        codes=('APX101', 'APX218'),
    ),
    Example(
        # transform-and-tell's shape: a hook fired between the scaled backward and the step
        # may clip or read the gradients, which apex had unscaled when the block exited; the
        # meter handed plain numbers before it cannot reach them
        "hook-fired-between-the-backward-and-the-step-gets-unscaled-gradients",
        before='''\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, hooks, opt_level):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
        self.hooks = hooks

    def train_step(self, x, meter):
        loss = self.model(x).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        meter.update(loss.item(), x.size(0))
        self.hooks.after_backward(self)
        self.optimizer.step()
''',
        after='''\
import torch


class Trainer:
    def __init__(self, model, optimizer, hooks, opt_level):
        self.model, self.optimizer = model, optimizer
        use_amp = opt_level != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.hooks = hooks

    def train_step(self, x, meter):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(x).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        meter.update(loss.item(), x.size(0))
        self.scaler.unscale_(self.optimizer)
        self.hooks.after_backward(self)
        self.scaler.step(self.optimizer)
        self.scaler.update()
''',
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX325"),
    ),
    Example(
        # r17's shape: a rescale of the gradients (an opaque method) before a clipping method
        # whose amp.master_params read gets its own unscale_: a second unscale_ before the
        # rescale would raise, and none is needed (the rescale commutes with the unscale)
        "rescale-before-a-clipping-method-gets-no-second-unscale",
        before='''\
import torch
from apex import amp


class Task:
    def __init__(self, model, optimizer, accumulate, clip):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.accumulate, self.clip, self.iteration = accumulate, clip, 0

    def run_optimizer(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        if (self.iteration + 1) % self.accumulate == 0:
            self._rescale_gradients(1.0 / self.accumulate)
            self._clip_gradients(self.clip)
            self.optimizer.step()
            self.optimizer.zero_grad()
        self.iteration += 1

    def _rescale_gradients(self, factor):
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                param.grad.mul_(factor)

    def _clip_gradients(self, max_norm):
        torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), max_norm)
''',
        after='''\
import torch


class Task:
    def __init__(self, model, optimizer, accumulate, clip):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.accumulate, self.clip, self.iteration = accumulate, clip, 0

    def run_optimizer(self, loss):
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss: wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        self.scaler.scale(loss).backward()
        if (self.iteration + 1) % self.accumulate == 0:
            self._rescale_gradients(1.0 / self.accumulate)
            self._clip_gradients(self.clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
        self.iteration += 1

    def _rescale_gradients(self, factor):
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                param.grad.mul_(factor)

    def _clip_gradients(self, max_norm):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), max_norm)
''',
        codes=("APX101", "APX201", "APX210", "APX301", "APX311", "APX321"),
    ),
    Example(
        # cule's a2c shape: the parameters are named in each branch, one of which holds the
        # scaled backward, and clipped after the if: the unscale_ goes after the if (before
        # it, it would run before the backward, and the step would take the gradients still
        # scaled)
        "parameters-named-in-the-branch-of-the-backward-unscaled-after-the-if",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches, max_norm, cpu_train=False):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            params = amp.master_params(optimizer)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        optimizer.step()
''',
        after='''\
import torch


def train(model, optimizer, batches, max_norm, cpu_train=False):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        optimizer.zero_grad()
        if cpu_train:
            scaler.scale(loss).backward()
            params = model.parameters()
        else:
            scaler.scale(loss).backward()
            params = (p for group in optimizer.param_groups for p in group["params"])
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        scaler.step(optimizer)
        scaler.update()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX316', 'APX321', 'APX325'),
    ),
    Example(
        # the same with the two optimizers of one amp.initialize, their parameters spread into
        # one list: that statement too only names parameters, and each optimizer is unscaled
        # after the if (it was left to a person with TODOs, the clip cutting scaled gradients)
        "parameters-of-two-optimizers-named-in-the-branch-of-the-backward-unscaled-after-the-if",
        before='''\
import torch
from apex import amp


def train(model, batches, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    model, [encoder, decoder] = amp.initialize(model, [encoder, decoder], opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, [encoder, decoder]) as scaled_loss:
                scaled_loss.backward()
            params = [*amp.master_params(encoder), *amp.master_params(decoder)]
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        encoder.step()
        decoder.step()
        encoder.zero_grad()
        decoder.zero_grad()
''',
        after='''\
import torch


def train(model, batches, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        if cpu_train:
            scaler.scale(loss).backward()
            params = model.parameters()
        else:
            scaler.scale(loss).backward()
            params = [*model[0].parameters(), *model[1].parameters()]
        scaler.unscale_(encoder)
        scaler.unscale_(decoder)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        scaler.step(encoder)
        scaler.step(decoder)
        scaler.update()
        encoder.zero_grad()
        decoder.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX316', 'APX321', 'APX325'),
    ),
    Example(
        # ... and chained (itertools.chain(amp.master_params(a), amp.master_params(b)))
        "parameters-of-two-optimizers-chained-in-the-branch-of-the-backward-unscaled-after-the-if",
        before='''\
import itertools

import torch
from apex import amp


def train(model, batches, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    model, [encoder, decoder] = amp.initialize(model, [encoder, decoder], opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, [encoder, decoder]) as scaled_loss:
                scaled_loss.backward()
            params = itertools.chain(amp.master_params(encoder), amp.master_params(decoder))
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        encoder.step()
        decoder.step()
        encoder.zero_grad()
        decoder.zero_grad()
''',
        after='''\
import itertools

import torch


def train(model, batches, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        if cpu_train:
            scaler.scale(loss).backward()
            params = model.parameters()
        else:
            scaler.scale(loss).backward()
            params = itertools.chain(model[0].parameters(), model[1].parameters())
        scaler.unscale_(encoder)
        scaler.unscale_(decoder)
        torch.nn.utils.clip_grad_norm_(params, max_norm)
        scaler.step(encoder)
        scaler.step(decoder)
        scaler.update()
        encoder.zero_grad()
        decoder.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX316', 'APX321', 'APX325'),
    ),
    Example(
        # the parameters named on every micro-step (delay_unscale) and clipped at the boundary:
        # naming them reads no gradient (it got an APX326 TODO, a per-micro-step use)
        "parameters-named-on-every-micro-step-and-clipped-at-the-boundary",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches, accumulate, max_norm, cpu_train=False):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, x in enumerate(batches):
        loss = model(x).sum() / accumulate
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % accumulate != 0) as scaled_loss:
                scaled_loss.backward()
            params = amp.master_params(optimizer)
        if (i + 1) % accumulate == 0:
            torch.nn.utils.clip_grad_norm_(params, max_norm)
            optimizer.step()
            optimizer.zero_grad()
''',
        after='''\
import torch


def train(model, optimizer, batches, accumulate, max_norm, cpu_train=False):
    scaler = torch.amp.GradScaler("cuda")
    for i, x in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum() / accumulate
        if cpu_train:
            scaler.scale(loss).backward()
            params = model.parameters()
        else:
            scaler.scale(loss).backward()
            params = (p for group in optimizer.param_groups for p in group["params"])
        if (i + 1) % accumulate == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX302', 'APX311', 'APX316', 'APX321', 'APX325'),
    ),
    Example(
        # a helper given the optimizer reads amp.master_params(optimizer): its parameter is not the
        # training function's ``optimizer = SGD(model.parameters())`` by name, and ``model`` does
        # not exist in it (it became model.parameters(), a NameError): the param groups instead
        "master-params-of-a-helpers-optimizer-parameter-are-its-param-groups",
        before='''\
import torch
from apex import amp


def clip_gradients(optimizer, max_norm):
    return torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)


def train(data):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in data:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip_gradients(optimizer, 0.5)
        optimizer.step()
        optimizer.zero_grad()
''',
        after='''\
import torch


def clip_gradients(optimizer, max_norm, scaler):
    scaler.unscale_(optimizer)
    return torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)


def train(data):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x in data:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        clip_gradients(optimizer, 0.5, scaler)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX207', 'APX209', 'APX301', 'APX311', 'APX321'),
    ),
    Example(
        # a clip in that branch and a gradient read after the if: no one unscale_ point
        # comes after the backward and before both uses; TODOs, never an unscale_ before the
        # backward
        "gradient-uses-in-and-after-the-branch-of-the-backward-are-left-to-a-person",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches, max_norm, cpu_train=False):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        if cpu_train:
            loss.backward()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        print(sum(p.grad.norm() for p in model.parameters()))
        optimizer.step()
''',
        after='''\
import torch


def train(model, optimizer, batches, max_norm, cpu_train=False):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        optimizer.zero_grad()
        if cpu_train:
            scaler.scale(loss).backward()
        else:
            scaler.scale(loss).backward()
            # TODO(apexcompat): gradients used after the scaled backward:
            #   torch.nn.utils.clip_grad_norm_(...) saw gradients apex had unscaled, but scaler
            #   keeps them scaled until scaler.step(optimizer) (a backward runs between the first
            #   use and the others): call scaler.unscale_(optimizer) before it, once per step
            # TODO(apexcompat): torch.nn.utils.clip_grad_norm_(...) clips the gradients that
            #   scaler.scale(loss).backward() left multiplied by the loss scale (its threshold is
            #   met at scaler.get_scale() times the real norm): call scaler.unscale_(optimizer)
            #   before it
            torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)
        # TODO(apexcompat): gradients used after the scaled backward: print(...) saw gradients
        #   apex had unscaled, but scaler keeps them scaled until scaler.step(optimizer) (a
        #   backward runs between the first use and the others): call scaler.unscale_(optimizer)
        #   before it, once per step
        print(sum(p.grad.norm() for p in model.parameters()))
        scaler.step(optimizer)
        scaler.update()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316", "APX321", "APX327", "APX331"),
    ),
    Example(
        # a clip on every micro-step where the scale_loss may delay its unscale: apex clipped
        # the scaled gradients of a delayed backward at the threshold itself, so the clip at
        # the threshold times the scale (APX328) would not be apex's; a TODO (the driver then
        # keeps the file on apexcompat.amp: it clips)
        "clip-on-every-micro-step-with-delayed-unscale-is-left-to-a-person",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches, accumulate=2):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % accumulate != 0) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
''',
        after='''\
import torch


def train(model, optimizer, batches, accumulate=2):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        scaler.scale(loss).backward()
        # TODO(apexcompat): per-micro-step gradient use: torch.nn.utils.clip_grad_norm_(...)
        #   runs after every backward, but optimizer.step() only at the accumulation boundary
        #   (or under a condition). apex left the gradients of a delayed backward
        #   (delay_unscale) scaled and unscaled the others; scaler.unscale_(optimizer) can run
        #   only once per step, so there is no exact native equivalent: move this to the step
        #   boundary, after scaler.unscale_(optimizer)
        # TODO(apexcompat): torch.nn.utils.clip_grad_norm_(...) clips the gradients that
        #   scaler.scale(loss).backward() left multiplied by the loss scale (its threshold is
        #   met at scaler.get_scale() times the real norm): call scaler.unscale_(optimizer)
        #   before it
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        if (i + 1) % accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311", "APX326", "APX331"),
    ),
    Example(
        # a clip inside the amp.scale_loss block (unscale_ after the block, where apex unscaled)
        # and a gradient read after it: that unscale_ serves the read too (a second one before
        # the read raised "unscale_() has already been called"); found by the shapes check
        "clip-in-the-block-and-a-read-after-it-share-one-unscale",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        norm = sum(float(p.grad.norm()) for p in model.parameters())
        print(norm)
        optimizer.step()
        optimizer.zero_grad()
''',
        after='''\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), 1.0)
        scaler.unscale_(optimizer)
        norm = sum(float(p.grad.norm()) for p in model.parameters())
        print(norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX321", "APX325", "APX330"),
    ),
    Example(
        # delay_unscale=not is_step, and the clip runs only after `if not is_step: return`
        # (aps; SwinBERT's clip under `if backward_now:`): there apex had unscaled the
        # gradients, so the clip at the threshold times the scale (APX328) is apex's clip
        "clip-only-where-the-unscale-is-not-delayed-keeps-the-scaled-threshold",
        before='''\
import math

import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, accumulate=2, max_norm=1.0):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.accumulate, self.max_norm = accumulate, max_norm

    def train_step(self, i, x, y):
        is_step = (i + 1) % self.accumulate == 0
        loss = torch.nn.functional.mse_loss(self.model(x), y) / self.accumulate
        with amp.scale_loss(loss, self.optimizer, delay_unscale=not is_step) as scaled_loss:
            scaled_loss.backward()
        if not is_step:
            return
        norm = torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.max_norm)
        if math.isfinite(norm):
            self.optimizer.step()
            self.optimizer.zero_grad()
''',
        after='''\
import math

import torch


class Trainer:
    def __init__(self, model, optimizer, accumulate=2, max_norm=1.0):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.accumulate, self.max_norm = accumulate, max_norm

    def train_step(self, i, x, y):
        is_step = (i + 1) % self.accumulate == 0
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(x), y) / self.accumulate
        self.scaler.scale(loss).backward()
        if not is_step:
            return
        norm = (torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), self.max_norm * self.scaler.get_scale()) / self.scaler.get_scale())
        if math.isfinite(norm):
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311", "APX321", "APX328"),
    ),
    Example(
        # a read of the gradients at the accumulation boundary (a logged norm) after a
        # backward that may delay its unscale: the last backward before the step unscaled, so
        # no other backward stands between; unscale_ before it, no TODO
        "gradient-read-at-the-boundary-after-a-delayed-backward-gets-its-unscale",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches, accumulate=2):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        delay = (i + 1) % accumulate != 0
        with amp.scale_loss(loss, optimizer, delay_unscale=delay) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accumulate == 0:
            largest = max(p.grad.abs().max().item() for p in model.parameters())
            print(f"largest gradient {largest:.3g}")
            optimizer.step()
            optimizer.zero_grad()
''',
        after='''\
import torch


def train(model, optimizer, batches, accumulate=2):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        delay = (i + 1) % accumulate != 0
        scaler.scale(loss).backward()
        if (i + 1) % accumulate == 0:
            scaler.unscale_(optimizer)
            largest = max(p.grad.abs().max().item() for p in model.parameters())
            print(f"largest gradient {largest:.3g}")
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311", "APX325"),
    ),
    Example(
        # ClipBERT's check that every parameter got a gradient: whether ``p.grad`` is None
        # does not depend on the loss scale, so the test is no gradient use: the unscale_ goes
        # before the clip (it went before the test; in rotom's virtual SGD step the test got a
        # second APX327 TODO)
        "a-test-of-gradients-against-none-is-no-gradient-use",
        before='''\
import torch
from apex import amp


def train(model, optimizer, batches, accumulate=2):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        delay = (i + 1) % accumulate != 0
        with amp.scale_loss(loss, optimizer, delay_unscale=delay) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accumulate == 0:
            missing = [name for name, p in model.named_parameters() if p.grad is None]
            assert not missing, missing
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
''',
        after='''\
import torch


def train(model, optimizer, batches, accumulate=2):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        delay = (i + 1) % accumulate != 0
        scaler.scale(loss).backward()
        if (i + 1) % accumulate == 0:
            missing = [name for name, p in model.named_parameters() if p.grad is None]
            assert not missing, missing
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311", "APX325"),
    ),
    Example(
        # a loop at module level adds a sparsity term to a gradient after the scaled backward:
        # an unscale_ first, as in a function (the check for a later backward walked the
        # function's body, None here: APX002)
        "gradient-written-in-a-module-level-loop",
        before='''\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    model.weight.grad.data.add_(1e-4 * torch.sign(model.weight.data))
    optimizer.step()
    optimizer.zero_grad()
''',
        after='''\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    model.weight.grad.data.add_(1e-4 * torch.sign(model.weight.data))
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX325'),
    ),
    Example(
        # a same-file helper adds the sparsity term to the gradients, called from a loop at
        # module level: an unscale_ before it, as in a function (calls at module level were not
        # looked at: the term was added to scaled gradients, divided by the scale at the step)
        "helper-writing-gradients-in-a-module-level-loop",
        before='''\
import torch
from apex import amp


def update_bn(module, s):
    module.weight.grad.data.add_(s * torch.sign(module.weight.data))


model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    update_bn(model, 1e-4)
    optimizer.step()
    optimizer.zero_grad()
''',
        after='''\
import torch


def update_bn(module, s):
    module.weight.grad.data.add_(s * torch.sign(module.weight.data))


model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    update_bn(model, 1e-4)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX325'),
    ),
    Example(
        # the helper runs on every micro-step, the step only at the accumulation boundary: a
        # gradient use with no exact native form (APX326), as a .grad read written inline is;
        # an opaque call there was passed over and the term silently scaled
        "helper-writing-gradients-on-every-micro-step",
        before='''\
import torch
from apex import amp


def update_bn(module, s):
    module.weight.grad.data.add_(s * torch.sign(module.weight.data))


def train(loader, accumulate, s):
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for ni, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        update_bn(model, s)
        if ni % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    train([], 4, 1e-4)
''',
        after='''\
import torch


def update_bn(module, s):
    module.weight.grad.data.add_(s * torch.sign(module.weight.data))


def train(loader, accumulate, s):
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for ni, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        # TODO(apexcompat): per-micro-step gradient use: update_bn(...), which may change the
        #   gradients, runs after every backward, but optimizer.step() only at the accumulation
        #   boundary (or under a condition). apex unscaled the gradients after each backward;
        #   scaler.unscale_(optimizer) can run only once per step, so there is no exact native
        #   equivalent: move this to the step boundary, after scaler.unscale_(optimizer)
        update_bn(model, s)
        if ni % accumulate == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


if __name__ == "__main__":
    train([], 4, 1e-4)
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX326'),
    ),
    Example(
        # a helper of the file takes an input's gradient with torch.autograd.grad after the
        # scaled backward, on every micro-step: ``autograd.grad`` is no parameter's gradient, so
        # no gradient use (no TODO), as before; the clip at the step is the only use
        "input-gradient-helper-on-every-micro-step-is-no-gradient-use",
        before='''\
import torch
from apex import amp


def input_grad(model, x, y):
    delta = torch.zeros_like(x, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(model(x + delta), y)
    return torch.autograd.grad(loss, delta)[0]


def train(loader, accumulate):
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for ni, (x, y) in enumerate(loader):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        g = input_grad(model, x, y)
        if ni % accumulate == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()
''',
        after='''\
import torch


def input_grad(model, x, y):
    delta = torch.zeros_like(x, requires_grad=True)
    loss = torch.nn.functional.cross_entropy(model(x + delta), y)
    return torch.autograd.grad(loss, delta)[0]


def train(loader, accumulate):
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    for ni, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        g = input_grad(model, x, y)
        if ni % accumulate == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
''',
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311', 'APX314', 'APX325'),
    ),
    Example(
        # optimizers kept in a dict (PWGAN_Torch's ``self.optimizer_Dict['Generator']``): a clip
        # before ``optimizers["G"].step()`` gets its unscale_ as a named optimizer's does; the
        # step of a keyed optimizer was not looked for, and the file stayed on the shim (APX220)
        "clip-before-the-step-of-an-optimizer-kept-in-a-dict-gets-its-unscale",
        before='''\
import torch
from apex import amp


class Trainer:
    def __init__(self, generator, discriminator, use_amp):
        self.models = {"G": generator, "D": discriminator}
        self.optimizers = {
            "G": torch.optim.Adam(generator.parameters()),
            "D": torch.optim.Adam(discriminator.parameters()),
        }
        self.use_amp = use_amp
        if use_amp:
            models, optimizers = amp.initialize(
                [self.models["G"], self.models["D"]], [self.optimizers["G"], self.optimizers["D"]]
            )
            self.models["G"], self.models["D"] = models
            self.optimizers["G"], self.optimizers["D"] = optimizers

    def train_step(self, x, y):
        loss = torch.nn.functional.l1_loss(self.models["G"](x), y)
        self.optimizers["G"].zero_grad()
        if self.use_amp:
            with amp.scale_loss(loss, self.optimizers["G"]) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        torch.nn.utils.clip_grad_norm_(self.models["G"].parameters(), 10.0)
        self.optimizers["G"].step()
''',
        after='''\
import torch


class Trainer:
    def __init__(self, generator, discriminator, use_amp):
        self.models = {"G": generator, "D": discriminator}
        self.optimizers = {
            "G": torch.optim.Adam(generator.parameters()),
            "D": torch.optim.Adam(discriminator.parameters()),
        }
        self.use_amp = use_amp
        if use_amp:
            models, optimizers = [self.models["G"], self.models["D"]], [self.optimizers["G"], self.optimizers["D"]]
            self.models["G"], self.models["D"] = models
            self.optimizers["G"], self.optimizers["D"] = optimizers
        amp_enabled = bool(use_amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.l1_loss(self.models["G"](x), y)
        self.optimizers["G"].zero_grad()
        if self.use_amp:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.unscale_(self.optimizers["G"])
        torch.nn.utils.clip_grad_norm_(self.models["G"].parameters(), 10.0)
        self.scaler.step(self.optimizers["G"])
        self.scaler.update()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX325"),
    ),
]

NOOP_EXAMPLES: List[Example] = []

ClippingRule.EXAMPLES = EXAMPLES
ClippingRule.NOOP_EXAMPLES = NOOP_EXAMPLES
