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

from typing import Any, List

import libcst as cst

from ._amp_sites import ScaleLossSite, code_of, find_steps
from ._tree import inside, walk


def _is_scheduler(receiver: str) -> bool:
    return "sched" in receiver.lower()


def _backward_calls(body: cst.CSTNode) -> List[cst.Call]:
    return [
        node
        for node in walk(body)
        if isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "backward"
    ]


def _alternative_of(parents: Any, node: Any, site: ScaleLossSite, func: Any) -> bool:
    """Whether ``node`` lies in the other branch of an ``if`` whose one branch holds the
    site's ``with`` (``if fp16: scale_loss ... else: loss.backward()``)."""
    cur = site.with_stmt
    while cur is not None and cur is not func:
        parent = parents.get(cur)
        if isinstance(parent, (cst.If, cst.Else)):
            branch_if = parent if isinstance(parent, cst.If) else parents.get(parent)
            if isinstance(branch_if, cst.If):
                in_body = inside(parents, site.with_stmt, branch_if.body)
                other = branch_if.orelse if in_body else branch_if.body
                if other is not None and inside(parents, node, other):
                    return True
        cur = parent
    return False


def plain_backwards(rule: Any, site: ScaleLossSite, others: List[cst.With]) -> List[cst.Call]:
    """The plain backward calls of the site's function that run after its scaled backward
    and before a step of an optimizer it scaled for, on the same path, where nothing else in
    the function steps (an optimizer apex did not scale for would be handed scaled gradients).
    ``others``: every ``with amp.scale_loss`` of the file (their backwards are scaled already)."""
    func = site.func
    body = func.body if func is not None else rule.tree  # a script's loop at module level
    steps: List[cst.Call] = []
    for opt in site.optimizers:
        steps.extend(c for c in find_steps(rule, site, code_of(opt)) if inside(rule.parents, c, body))
    if not steps:
        return []
    stepped = {code_of(c.func.value) for c in steps}  # type: ignore[attr-defined]
    for node in walk(body):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "step"
            and code_of(node.func.value) not in stepped
            and not _is_scheduler(code_of(node.func.value))
        ):
            return []
    start, last_step = rule.line_of(site.with_stmt), max(rule.line_of(c) for c in steps)
    found = []
    for call in _backward_calls(body):
        receiver = call.func.value  # type: ignore[attr-defined]
        if (
            isinstance(receiver, cst.Call)  # scaler.scale(x).backward(), torch.autograd.backward
            or code_of(receiver).startswith("torch.")
            or not start < rule.line_of(call) < last_step
            or any(inside(rule.parents, call, w) for w in others)
            or _alternative_of(rule.parents, call, site, func)
            or any(isinstance(n, (cst.FunctionDef, cst.Lambda)) for n in _ancestors_below(rule.parents, call, func))
        ):
            continue
        found.append(call)
    return found


def _ancestors_below(parents: Any, node: Any, top: Any) -> List[Any]:
    out, cur = [], parents.get(node)
    while cur is not None and cur is not top:
        out.append(cur)
        cur = parents.get(cur)
    return out
