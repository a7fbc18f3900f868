"""A scale_loss whose optimizer is held by an optimizer wrapper that the function steps
instead: ``amp.scale_loss(loss, self.optimizer.optimizer)``, then
``self.optimizer.step(where=w)``, where ``self.optimizer`` is an instance of a wrapper class
the cross-file plan proved (``migrate.optimizer_wrappers``: its ``step`` steps
``self.optimizer`` once, its ``param_groups`` are that optimizer's).

The class of ``self.<holder>`` is read from the class of the method: every assignment of
``self.<holder>`` in its methods must be ``None``, a constructor call of the wrapper, a
parameter annotated with it (``def set_optimizer(self, optimizer: Wrapper)``) or annotated
itself (``self.optimizer: Wrapper = ...``), or the class body annotates it.  Then the
scaler unscales and steps the wrapper: ``scaler.step(self.optimizer, where=w)``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ._edits import code_of
from ._tree import walk


def wrapper_holder(
    rule: Any, func: Any, opt: cst.BaseExpression, wrappers: Dict[str, str]
) -> Tuple[Optional[str], str]:
    """For ``opt`` = ``self.<holder>.<attr>`` in the method ``func``: (``self.<holder>``, the
    wrapper class) when ``self.<holder>`` is provably an instance of a wrapper keeping its
    optimizer in ``attr``; else (None, why not, for the finding; "" when ``opt`` is not of
    that shape)."""
    from ._amp_sites import class_of_method, methods_of, self_name

    cls = class_of_method(rule.parents, func)
    if cls is None or not isinstance(opt, cst.Attribute):
        return None, ""
    holder = opt.value
    me = self_name(func)
    if not (isinstance(holder, cst.Attribute) and isinstance(holder.value, cst.Name) and holder.value.value == me):
        return None, ""
    name = holder.attr.value
    classes, why = _holder_classes(cls, name, methods_of(cls), self_name)
    if why:
        return None, why
    if len(classes) != 1:
        return None, f"the class of {code_of(holder)} is not known (no annotation, constructor or annotated setter)"
    (wrapper,) = classes
    if wrapper not in wrappers:
        return None, (
            f"{wrapper} is not a proven optimizer wrapper (its step() must call self.<optimizer>.step() once on "
            "every path and set no attribute of its own, and its param_groups property return that optimizer's, "
            "with no subclass overriding either)"
        )
    if wrappers[wrapper] != opt.attr.value:
        return None, f"{wrapper} wraps self.{wrappers[wrapper]}, not {opt.attr.value}"
    return code_of(holder), wrapper


def _holder_classes(cls: cst.ClassDef, name: str, methods: List[Any], self_name: Any) -> Tuple[set, str]:
    """The classes the assignments of ``self.<name>`` in ``cls`` establish, or why one of
    them establishes none."""
    found = set()
    body = cls.body.body if isinstance(cls.body, cst.IndentedBlock) else []
    for stmt in body:
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []:
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.target.value == name:
                found |= _annotated(small.annotation.annotation)
    for method in methods:
        me = self_name(method)
        annotations = {
            p.name.value: _annotated(p.annotation.annotation)
            for p in (*method.params.params, *method.params.kwonly_params)
            if p.annotation is not None
        }
        for node in walk(method.body):
            if isinstance(node, cst.AnnAssign) and _is_self_attr(node.target, me, name):
                found |= _annotated(node.annotation.annotation)
                continue
            if isinstance(node, cst.AugAssign) and _is_self_attr(node.target, me, name):
                return set(), f"{me}.{name} is reassigned by {code_of(node).strip()}"
            if not isinstance(node, cst.Assign):
                continue
            targets = [t.target for t in node.targets]
            if any(_is_self_attr(e, me, name) for t in targets for e in _unpacked(t)) and not any(
                _is_self_attr(t, me, name) for t in targets
            ):
                return set(), f"{me}.{name} is assigned by unpacking in {method.name.value}()"
            if not any(_is_self_attr(t, me, name) for t in targets):
                continue
            value = node.value
            if isinstance(value, cst.Name) and value.value == "None":
                continue
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                found.add(value.func.value)
            elif isinstance(value, cst.Name) and annotations.get(value.value):
                found |= annotations[value.value]
            else:
                return set(), f"{me}.{name} = {code_of(value)} in {method.name.value}(): its class is not known"
    return found, ""


def _is_self_attr(node: Any, me: str, name: str) -> bool:
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == me
        and node.attr.value == name
    )


def _unpacked(target: Any) -> List[Any]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return [x for e in target.elements for x in _unpacked(e.value)]
    return [target]


def _annotated(annotation: Any) -> set:
    """The class an annotation names: ``W``, ``"W"``, ``Optional[W]``."""
    if isinstance(annotation, cst.Name):
        return {annotation.value}
    if isinstance(annotation, cst.SimpleString):
        text = annotation.evaluated_value
        return {text} if isinstance(text, str) and text.isidentifier() else set()
    if (
        isinstance(annotation, cst.Subscript)
        and code_of(annotation.value) in ("Optional", "typing.Optional")
        and len(annotation.slice) == 1
        and isinstance(annotation.slice[0].slice, cst.Index)
    ):
        return _annotated(annotation.slice[0].slice.value)
    return set()
