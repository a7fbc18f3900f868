"""Plain ``x.backward()`` calls that add gradients between a scaled backward and its step.

Adversarial fine-tuning (FGM, PGD) runs ``amp.scale_loss`` on the loss, then a plain
``loss_adv.backward()`` of a perturbed forward, then ``optimizer.step()``.  apex had
unscaled the first loss's gradients when ``scale_loss`` exited, so the plain backward added
its gradients at their true size.  A GradScaler unscales every gradient at the step: left
plain, the second loss's gradients would be divided by the loss scale (about 65536), silently.
Scaled through the same GradScaler (``scaler.scale(loss_adv).backward()``), every gradient
carries the scale when the step divides it out; with the scaler disabled ``scale`` is the
identity.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._amp_sites import ScaleLossSite, code_of, find_steps
from ._plain_alternative import alternative_if, only_disabled, readers_unscale
from ._plain_step_callers import loss_backward
from ._stepped_objects import steps_no_other_optimizer
from ._tree import inside, walk_of


def _backward_calls(body: cst.CSTNode) -> List[cst.Call]:
    return [
        node
        for node in walk_of(body, cst.Call)
        if type(node.func) is cst.Attribute and node.func.attr.value == "backward"
    ]


#: ``plain_backwards``' mark of a plain backward in the other branch that stays plain unproven
UNPROVEN = "unproven"


def plain_backwards(
    rule: Any, site: ScaleLossSite, others: List[cst.With], scaler: str, info: Any
) -> List[Tuple[cst.Call, Optional[Any], str]]:
    """The plain backward calls of the site's function that run after its scaled backward
    and before a step of an optimizer it scaled for, on the same path, or in the other branch
    of the ``if`` that scales (``_plain_alternative``), where nothing else in the function
    steps (an optimizer apex did not scale for would be handed scaled gradients; a step that
    provably updates no other optimizer's parameters, a scheduler's or a clipper's, does not
    count: ``_stepped_objects``); each with
    the statement a ``scaler.unscale_`` goes before (None: none is needed) and "".
    One in the other branch that stays plain though that branch may run with the GradScaler
    on comes as ``(call, UNPROVEN, why)``: another optimizer is stepped plainly, or a gradient
    reader after it cannot be unscaled once before the step.
    ``others``: every ``with amp.scale_loss`` of the file (their backwards are scaled already)."""
    func = site.func
    body = func.body if func is not None else rule.tree  # a script's loop at module level
    steps: List[cst.Call] = []
    for opt in site.optimizers:
        steps.extend(c for c in find_steps(rule, site, code_of(opt)) if inside(rule.parents, c, body))
    if not steps:
        return []
    stepped = {code_of(c.func.value) for c in steps}  # type: ignore[attr-defined]
    scaled_for = sorted(stepped | {code_of(o) for o in site.optimizers})
    plain_step = next(
        (
            node
            for node in walk_of(body, cst.Call)
            if type(node.func) is cst.Attribute
            and node.func.attr.value == "step"
            and code_of(node.func.value) not in stepped
            and not steps_no_other_optimizer(rule, node, func, scaled_for)
        ),
        None,
    )
    start, last_step = rule.line_of(site.with_stmt), max(rule.line_of(c) for c in steps)
    # steps that stay plain where nothing was scaled (the step under the scaling test, a
    # runner that may carry no GradScaler) step the other branch's gradients as they are
    through = [c for c in steps if c not in info.shared_steps and c not in info.mirrored_steps]
    if func in info.scaler_guards:
        through = []
    found: List[Tuple[cst.Call, Optional[Any], str]] = []
    # a call of another file's backward helper (``utils.backward(loss, opt)``) scales through the
    # GradScaler itself (``_amp_caller_steps``): no plain backward of a tensor
    helpers = {call for call, _found in info.caller_steps.values()}
    for call in _backward_calls(body):
        receiver = call.func.value  # type: ignore[attr-defined]
        if (
            call in helpers
            or not loss_backward(receiver)
            or any(inside(rule.parents, call, w) for w in others)
            or any(isinstance(n, (cst.FunctionDef, cst.Lambda)) for n in _ancestors_below(rule.parents, call, func))
        ):
            continue
        line = rule.line_of(call)
        alternative = alternative_if(rule.parents, call, site.with_stmt, func)
        if alternative is None:
            if start < line < last_step and plain_step is None:
                found.append((call, None, ""))
            continue
        head, when_false = alternative
        if _nearer_site(rule.parents, call, head, [w for w in others if w is not site.with_stmt], func):
            continue  # the if that holds another amp.scale_loss inside this one decides
        scaling = head.body if when_false else head.orelse  # a step there is not on this branch's path
        later = sorted(
            (c for c in through if rule.line_of(c) > line and not inside(rule.parents, c, scaling)), key=rule.line_of
        )
        if not later or only_disabled(rule, func, scaler, head.test, when_false):
            continue
        if plain_step is not None:
            why = (
                f"this function also calls {code_of(plain_step)}, a step of something else than the optimizers "
                "this loss is scaled for, which gradients scaled here could reach"
            )
            found.append((call, UNPROVEN, why))
            continue
        ok, before = readers_unscale(rule.parents, call, head, head.orelse if when_false else head.body, later[0])
        found.append(
            (call, before, "")
            if ok
            else (call, UNPROVEN, "a gradient use after it could not be given scaler.unscale_ once before the step")
        )
    return found


def _nearer_site(parents: Any, call: cst.Call, head: cst.If, withs: List[cst.With], func: Any) -> bool:
    """Whether another ``amp.scale_loss`` of ``func`` has ``call`` in the other branch of an
    ``if`` nested in ``head`` (RepVGG: the accumulation test around two scaling ifs)."""
    for with_stmt in withs:
        if func is not None and not inside(parents, with_stmt, func.body):
            continue
        other = alternative_if(parents, call, with_stmt, func)
        if other is not None and other[0] is not head and inside(parents, other[0], head):
            return True
    return False


def _ancestors_below(parents: Any, node: Any, top: Any) -> List[Any]:
    out, cur = [], parents.get(node)
    while cur is not None and cur is not top:
        out.append(cur)
        cur = parents.get(cur)
    return out
