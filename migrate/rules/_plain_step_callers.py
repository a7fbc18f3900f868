"""A step in another method than the scaled backward, reached after a plain backward.

``backward_step`` scales the loss through ``amp.scale_loss``; ``optim_step`` runs
``self.optimizer.step()``, and the native rewrite steps it through the GradScaler.  That is
right only where the gradients it steps were scaled: a method that runs a plain
``loss.backward()`` and then ``self.optim_step()`` would have its unscaled gradients divided by
the loss scale (about 65536) at ``scaler.step``, silently; apex stepped them as they were.

For such a step this module checks every path of the file into it: the stepping method
itself and each method of the class calling it on ``self`` must run no plain backward before
the step (or the call), and each caller must reach a scaled backward first (a call, on
``self``, of a method that reaches the scaled backward, or an ``amp.scale_loss`` block of its
own), unless the stepping method does so itself.  A plain backward, or a call of the stepping
method, under a branch that runs only with the GradScaler's switch off (``else`` of the ``if``
the training initialize is under, or ``if not <that test>:``) steps through a disabled
scaler, which steps as apex did (a stepping method with a plain backward of its own is then
right only where every call of it in the class is so switched off).
"""

from __future__ import annotations

from typing import Any, FrozenSet, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ._amp_narrowed_step import conditions
from ._edits import code_of
from ._tree import enclosing_function, inside, walk, walk_of

CONSEQUENCE = "which would step through the GradScaler: its unscaled gradients would be divided by the loss scale"


def plain_step_path(rule: Any, site: Any, step: cst.Call, withs: List[Any], switch: FrozenSet[str]) -> Optional[str]:
    """The words of the refusal where a path into ``step`` (a step of ``site``'s optimizer in
    another method of its class) runs a plain backward, or none of the file's scaled backwards,
    before it; None when every path in the file is scaled.  ``withs``: every ``amp.scale_loss``
    block of the file; ``switch``: the conditions of the training initialize's ``if``s."""
    from ._amp_sites import _methods_reaching, _self_calls, class_of_method, methods_of

    func = enclosing_function(rule.parents, step)
    cls = class_of_method(rule.parents, site.func)
    if cls is None or func is None or func is site.func or class_of_method(rule.parents, func) is not cls:
        return None
    scaling = _methods_reaching(cls, {s.func.name.value for s in [site] if s.func is not None})
    name = func.name.value
    callers = [(m, c) for m in methods_of(cls) if m is not func for c, called in _self_calls(m) if called == name]
    # a call under a branch that runs only with the GradScaler off steps through a disabled one
    live = [(m, c) for m, c in callers if not _switched_off(rule, m, c, switch)]
    plain = _plain_before(rule, func, step, withs, switch)
    if plain is not None and (live or not callers) and plains_to_scale(rule, site, step, withs) is None:
        return f"{name}() runs a plain backward, {code_of(plain)}, and then {code_of(step)}, {CONSEQUENCE}"
    itself = _reaches_scaled(rule, func, step, scaling - {name}, withs)
    for method, call in live:
        caller = method.name.value
        plain = _plain_before(rule, method, call, withs, switch)
        if plain is not None:
            return f"{caller}() runs a plain backward, {code_of(plain)}, and then {name}(), {CONSEQUENCE}"
        if not itself and not _reaches_scaled(rule, method, call, scaling - {name, caller}, withs):
            return (
                f"{caller}() calls {name}() with no scaled backward before it in {caller}(), so the tool cannot "
                f"tell that the gradients {name}() steps were scaled: {name}() steps through the GradScaler, "
                "which would divide unscaled gradients by the loss scale"
            )
    for scope, outside in calls_on_other_objects(rule, [cls], name):
        plain = _plain_before(rule, scope, outside, withs, switch)
        if plain is not None:
            caller = f"{scope.name.value}()" if scope is not None else "the module's top level"
            return f"{caller} runs a plain backward, {code_of(plain)}, and then {code_of(outside.func)}(), {CONSEQUENCE}"
    return None


def plains_to_scale(rule: Any, site: Any, step: cst.Call, withs: List[Any]) -> Optional[List[cst.Call]]:
    """The plain backwards of the stepping method of ``step`` that run after a scaled backward
    of a method it calls on ``self`` and before the step (the 2020 Hugging Face Trainer's
    ``fusion_reg_loss.backward()`` at the accumulation boundary, ``_training_step()`` having
    scaled the loss): apex had unscaled the scaled loss's gradients when its block exited, so
    these added theirs at their true size; scaled through the same GradScaler, every gradient
    carries the scale when its step divides it out (``_plain_backward``'s rewrite, across two
    methods).  None when some plain backward there is not such one, or when the method steps
    something else than the optimizer the loss is scaled for (scaled gradients could reach
    another optimizer's parameters).  Read on the file as written and again by the step rule
    after the initialize is gone, so nothing here depends on the initialize's switch (a plain
    backward in a branch that runs with it off must meet the same test; scaled, it is the same
    there)."""
    from ._amp_sites import _methods_reaching, class_of_method
    from ._stepped_objects import steps_no_other_optimizer

    func = enclosing_function(rule.parents, step)
    cls = class_of_method(rule.parents, site.func)
    if func is None or cls is None or class_of_method(rule.parents, func) is not cls:
        return None
    scaling = _methods_reaching(cls, {site.func.name.value}) - {func.name.value}
    stepped = code_of(step.func.value)  # type: ignore[attr-defined]
    scaled_for = sorted({stepped} | {code_of(o) for o in site.optimizers})
    for node in walk_of(func.body, cst.Call):
        if (
            isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "step"
            and code_of(node.func.value) not in scaled_for
            and not steps_no_other_optimizer(rule, node, func, scaled_for)
        ):
            return None
    me = func.params.params[0].name.value if func.params.params else ""
    found: List[cst.Call] = []
    for node in walk_of(func.body, cst.Call):
        if not (isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward"):
            continue
        receiver = node.func.value
        if not loss_backward(receiver) or code_of(receiver) == me or any(inside(rule.parents, node, w) for w in withs):
            continue
        if enclosing_function(rule.parents, node) is not func:
            return None  # a nested function's backward: where it runs is not followed
        if not _before(rule, node, step) or rule.line_of(node) > rule.line_of(step):
            return None
        if not _reaches_scaled(rule, func, node, scaling, withs):
            return None
        found.append(node)
    return found or None


def calls_on_other_objects(
    rule: Any, classes: Sequence[Any], name: str
) -> List[Tuple[Optional[cst.FunctionDef], cst.Call]]:
    """The file's calls ``<x>.<name>(...)`` other than the calls on ``self`` in methods of
    ``classes`` (a function or the top level driving an instance: which object ``x`` is is
    not followed), each with its function (None at the top level)."""
    from ._amp_sites import class_of_method

    found: List[Tuple[Optional[cst.FunctionDef], cst.Call]] = []
    for call in walk_of(rule.tree, cst.Call):
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == name):
            continue
        scope = enclosing_function(rule.parents, call)
        params = scope.params.params if scope is not None else ()
        if scope is not None and params and class_of_method(rule.parents, scope) in classes:
            if code_of(func.value) == params[0].name.value:
                continue  # a call on self: the classes' own callers are followed where they are
        found.append((scope, call))
    return found


def _before(rule: Any, node: Any, call: Any) -> bool:
    """``node`` runs before ``call`` on some path of one call of their function: earlier, or in
    a loop holding both, and not in another branch of an if/try than it."""
    from ._amp_sites import _loops_around, exclusive

    if exclusive(rule.parents, node, call):
        return False
    if rule.line_of(node) < rule.line_of(call):
        return True
    return bool(set(_loops_around(rule, node)) & set(_loops_around(rule, call)))


def loss_backward(receiver: Any) -> bool:
    """Whether ``<receiver>.backward()`` backs a loss as it is: not ``<scaler>.scale(x)``'s
    (scaled already, the file's own GradScaler or the one written for apex) nor
    ``torch.autograd.backward(...)``.  A call is a loss like a name is
    (``criterion(model(x), y).backward()``)."""
    scaled = (
        isinstance(receiver, cst.Call)
        and isinstance(receiver.func, cst.Attribute)
        and receiver.func.attr.value == "scale"
    )
    return not scaled and not code_of(receiver).startswith("torch.")


def _plain_before(rule: Any, func: Any, call: Any, withs: List[Any], switch: FrozenSet[str]) -> Optional[cst.Call]:
    """The first plain ``x.backward()`` of ``func`` (None: the module's top level; outside every
    ``amp.scale_loss`` block and nested function, not ``<scaler>.scale(x).backward()``,
    ``torch.autograd.backward`` nor a method of ``self``) that may run before ``call`` with the
    GradScaler on."""
    me = func.params.params[0].name.value if func is not None and func.params.params else ""
    for node in walk(func.body if func is not None else rule.tree):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "backward"):
            continue
        receiver = node.func.value
        if not loss_backward(receiver) or code_of(receiver) == me:
            continue  # (``self.backward(loss)``: a method of the class, followed as a self call)
        if any(inside(rule.parents, node, w) for w in withs) or enclosing_function(rule.parents, node) is not func:
            continue
        if _before(rule, node, call) and not _switched_off(rule, func, node, switch):
            return node
    return None


def _reaches_scaled(rule: Any, func: Any, call: Any, scaling: Set[str], withs: List[Any]) -> bool:
    """``func`` runs a scaled backward before ``call``: a call on self of a method in
    ``scaling``, or an ``amp.scale_loss`` block of its own, on the path to ``call``."""
    from ._amp_sites import _self_calls

    if any(name in scaling and _before(rule, other, call) for other, name in _self_calls(func)):
        return True
    return any(inside(rule.parents, w, func.body) and _before(rule, w, call) for w in withs)


def _switched_off(rule: Any, func: Any, node: Any, switch: FrozenSet[str]) -> bool:
    """``node`` sits in a branch that runs only with the GradScaler's switch off: the ``else``
    of an ``if`` whose every condition is one of the switch's, or the body of ``if not x`` for
    such an ``x``."""
    if not switch:
        return False
    cur = node
    while cur is not None and cur is not func:
        parent = rule.parents.get(cur)
        owner = rule.parents.get(parent) if isinstance(parent, cst.Else) else parent
        if isinstance(owner, cst.If):
            in_else = isinstance(parent, cst.Else) or (owner.orelse is cur)
            test = owner.test
            if not in_else and isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                test, in_else = test.expression, True
            if in_else and set(conditions(test)) <= switch:
                return True
        cur = parent
    return False
