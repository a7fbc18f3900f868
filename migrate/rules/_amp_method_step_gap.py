"""Why a loss scaled in a method for ``self.<optimizer>`` has no step the rules can follow,
when no method of the class steps that attribute (for the APX220 finding).

Three shapes a library's training class takes, each left to code the repository does not
fix the order of:

* another method of the class steps an optimizer it is handed (determined's
  ``step_optimizer(self, optimizer)``: ``step_fn = optimizer.step`` and later ``step_fn()``);
* the class derives from a parameter of the function defining it, a mixin factory
  (``def apex_trainer_mask(cls): class ApexTrainer(cls)``): the step is in the methods of a
  class that is not followed;
* the attribute is set from a constructor parameter (a loss object carrying the optimizer
  it scales for, ``ApexLoss(loss_id, loss, optimizer)``): whatever steps it holds it elsewhere.
"""

from __future__ import annotations

from typing import Any, List, Optional

import libcst as cst

from ._edits import code_of
from ._tree import walk


def method_step_gap(rule: Any, func: Any, opt: cst.BaseExpression) -> Optional[str]:
    """The words for the finding when ``func`` is a method of a class and ``opt`` is
    ``self.<attr>`` that no method of that class steps; None otherwise."""
    from ._amp_sites import class_of_method, enclosing_function, methods_of, self_name, step_calls

    cls = class_of_method(rule.parents, func)
    if cls is None or not isinstance(opt, cst.Attribute):
        return None
    me = self_name(func)
    if not (isinstance(opt.value, cst.Name) and opt.value.value == me):
        return None
    text, name = code_of(opt), cls.name.value
    if any(step_calls(m.body, f"{self_name(m)}.{opt.attr.value}") for m in methods_of(cls) if m.params.params):
        return None
    head = f"no method of {name} steps {text}"
    for method in methods_of(cls):
        handed = _stepped_parameter(method)
        if handed:
            return (
                f"{head}; {name}.{method.name.value}() steps the optimizer it is handed ({handed}), so which "
                "optimizer is stepped, and whether after this backward, is decided by the code calling both"
            )
    outer = enclosing_function(rule.parents, cls)
    for base in cls.bases:
        if isinstance(base.value, cst.Name) and outer is not None and base.value.value in _parameters(outer):
            return (
                f"{head}: it derives from {base.value.value}, a parameter of {outer.name.value}(), whose "
                "methods are not followed"
            )
    given = _constructor_parameter(methods_of(cls), opt.attr.value)
    if given:
        return (
            f"{head}, which its constructor is handed ({given}): what steps that optimizer, and whether "
            "after this backward, is decided by the code holding it"
        )
    return head


def _parameters(func: cst.FunctionDef) -> List[str]:
    params = func.params
    return [p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)]


def _stepped_parameter(method: cst.FunctionDef) -> str:
    """A parameter of ``method`` (not its instance) named or annotated as an optimizer whose
    ``step`` it reads, called at once or kept to call later; "" when none."""
    params = method.params
    names = [
        p.name.value
        for p in (*params.posonly_params, *params.params, *params.kwonly_params)[1:]
        if "optim" in p.name.value.lower()
        or (p.annotation is not None and "Optimizer" in code_of(p.annotation.annotation))
    ]
    for node in walk(method.body):
        if (
            isinstance(node, cst.Attribute)
            and node.attr.value == "step"
            and isinstance(node.value, cst.Name)
            and node.value.value in names
        ):
            return node.value.value
    return ""


def _constructor_parameter(methods: List[cst.FunctionDef], attr: str) -> str:
    """``self.<attr> = <parameter>`` in ``__init__``: the parameter's name, else ""."""
    init = next((m for m in methods if m.name.value == "__init__" and m.params.params), None)
    if init is None:
        return ""
    me, names = _parameters(init)[0], _parameters(init)[1:]
    for node in walk(init.body):
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value in names):
            continue
        for target in node.targets:
            t = target.target
            if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == me:
                if t.attr.value == attr:
                    return node.value.value
    return ""
