"""An amp.initialize in a method that passes again what ``__init__`` already initialized.

``__init__`` runs ``self.model, self.optimizer = amp.initialize(self.model, self.optimizer,
...)`` under ``if self.opt_level is not None:``, and a restore method, under a test that
includes that one, calls ``amp.initialize(self.model, self.optimizer, ...)`` again before
``amp.load_state_dict``.  apex refuses an optimizer it has already processed
(``RuntimeError: A given optimizer should only be passed through amp.initialize once``), so
wherever the second initialize runs, the first one ran and the original raised there.  No
path apex trained through reaches it: the GradScaler ``__init__`` creates serves every
method, and the second initialize only goes.  This module proves that or says nothing.
"""

from __future__ import annotations

from typing import Any, List, Optional, Set

import libcst as cst

from ._amp_setup_loop import option_args
from ._edits import code_of
from ._tree import inside, walk

#: what apex says when an optimizer comes through amp.initialize a second time
APEX_REFUSAL = "A given optimizer should only be passed through amp.initialize once"


def raised_reinitializes(rule: Any, inits: List[Any]) -> List[Any]:
    """The initializes after ``inits[0]`` when each provably raised under apex: ``inits[0]``
    in ``__init__`` of a class, each other in another method of that class, passing the
    same ``self.`` models and optimizers with the same options, under tests that include
    every test around the first; else ``[]``."""
    from ._amp_sites import class_of_method, self_name

    first, again = inits[0], inits[1:]
    init = first.func
    cls = class_of_method(rule.parents, init) if init is not None else None
    if cls is None or init.name.value != "__init__" or not first.has_optimizers or not again:
        return []
    me = self_name(init)
    passed = [code_of(e) for e in first.models + first.optimizers]
    if not _rebinds_what_it_passes(first, passed) or not _reached_whenever_guarded(rule, first):
        return []
    tested = _self_attributes(first.guards, me)
    if tested is None:
        return []
    held = {text[len(me) + 1 :] for text in passed if text.startswith(f"{me}.")}
    if len(held) != len(passed) or not _set_only_before(rule, cls, init, first, tested | held, again):
        return []
    for site in again:
        method = site.func
        if (
            method is None
            or method is init
            or class_of_method(rule.parents, method) is not cls
            or self_name(method) != me
            or [code_of(e) for e in site.models + site.optimizers] != passed
            or _options(site) != _options(first)
            or _called_in(init, me, method.name.value)
            or not all(_implied(guard, site.guards) for guard in first.guards)
        ):
            return []
    return list(again)


def _options(site: Any) -> List[str]:
    return [code_of(a).strip().rstrip(",").strip() for a in option_args(site.call)]


def _rebinds_what_it_passes(site: Any, passed: List[str]) -> bool:
    """``a, b = amp.initialize(a, b, ...)``: the attributes hold what apex processed."""
    from ._amp_autocast import flat_texts

    holder = site.stmt.body[0]
    return isinstance(holder, cst.Assign) and flat_texts(holder.targets[0].target) == passed


def _reached_whenever_guarded(rule: Any, site: Any) -> bool:
    """The initialize runs whenever its tests hold: its outermost ``if`` is a statement of
    ``__init__``'s own body and nothing before it in ``__init__`` returns."""
    body = site.func.body
    if not isinstance(body, cst.IndentedBlock) or site.anchor not in body.body:
        return False
    line = rule.line_of(site.stmt)
    return not any(isinstance(n, cst.Return) and rule.line_of(n) < line for n in walk(site.func))


def _self_attributes(tests: List[cst.BaseExpression], me: str) -> Optional[Set[str]]:
    """The ``me.<attr>`` names the tests read, when they read nothing else (but constants)."""
    found: Set[str] = set()
    for test in tests:
        for node in walk(test):
            if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == me:
                found.add(node.attr.value)
        names = [n for n in walk(test) if isinstance(n, cst.Name)]
        attrs = {id(n) for a in walk(test) if isinstance(a, cst.Attribute) for n in (a.value, a.attr)}
        if any(id(n) not in attrs and n.value not in ("None", "True", "False") for n in names):
            return None
    return found


def _set_only_before(rule: Any, cls: cst.ClassDef, init: Any, first: Any, attrs: Set[str], again: List[Any]) -> bool:
    """No method of ``cls`` assigns ``self.<attr>`` for ``attrs`` except ``__init__`` before
    ``first`` and the initializes themselves."""
    from ._amp_sites import enclosing_function, self_name

    allowed = {id(site.stmt.body[0]) for site in [first] + again}
    first_line = rule.line_of(first.stmt)
    for node in walk(rule.tree):
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and not inside(rule.parents, node, cls):
            if any(_assigns_attr(node, attrs)):
                return False  # ``fitter.opt = ...`` from outside the class
    for node in walk(cls):
        targets: List[Any] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        for target in targets:
            for part in walk(target):
                if not (isinstance(part, cst.Attribute) and isinstance(part.value, cst.Name)):
                    continue
                func = enclosing_function(rule.parents, node)
                if func is None or part.value.value != self_name(func) or part.attr.value not in attrs:
                    continue
                if id(node) in allowed or (func is init and rule.line_of(node) < first_line):
                    continue
                return False
    return True


def _assigns_attr(node: Any, attrs: Set[str]) -> List[bool]:
    """For each ``<x>.<attr>`` target of the assignment ``node``: whether ``attr`` is one of ``attrs``."""
    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
    return [
        part.attr.value in attrs for target in targets for part in walk(target) if isinstance(part, cst.Attribute)
    ]


def _called_in(init: Any, me: str, name: str) -> bool:
    """``__init__`` names ``self.<name>`` (calls the method before its initialize, or hands it on)."""
    return any(
        isinstance(n, cst.Attribute) and code_of(n.value) == me and n.attr.value == name for n in walk(init)
    )


def _implied(guard: cst.BaseExpression, tests: List[cst.BaseExpression]) -> bool:
    """``guard`` is one of ``tests`` or one operand of an ``and`` chain among them."""
    wanted = code_of(guard).strip()
    return any(wanted in _conjuncts(test) for test in tests)


def _conjuncts(test: cst.BaseExpression) -> List[str]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [code_of(test).strip()]
