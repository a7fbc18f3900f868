"""The cross-file route of apex.amp (or None) handed to a function of another file that
scales its losses through the parameter it fills (``amp_value_plan``).

``train_one_epoch(model, loader, optimizer, amp)`` in a launcher that binds ``amp`` to
apex.amp on one branch and to None on the other, where ``train_one_epoch`` (another file,
found through the launcher's imports) runs ``with amp.scale_loss(loss, optimizer)`` under
``if amp is not None``: the same-file route of ``rules/_amp_param`` across files.  The
launcher hands the GradScaler (disabled where apex was never initialized) in that slot
(:attr:`FilePlan.amp_value_calls`), and the function's file, apex-free as it may be, is
migrated by the rules with that parameter read as apex.amp
(:attr:`FilePlan.amp_value_parameters`).  Both files form one component: migrated
completely or not at all.

Planned only when provable: every call of the function in the repository is a call of a
launcher that gives apex.amp at that slot, no other walked file refers to it, and its body
uses the parameter only to scale losses, test it, save/load its state or read
``master_params`` (``repo_index.SCALING_USES``: never rebound, initialized or passed on).
The rules check the rest on the tree (``_amp_param._reads_only``: no nested scope reads the
parameter); a file that then falls back drops the whole component.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Dict, List, Optional, Set, Tuple

from . import stdlib_trees
from .optional_scaler import module_stem
from .repo_index import SCALING_USES, ModuleSummary

Def = Tuple[str, str]
#: (launcher path, call text, the function's definition, its parameter)
Link = Tuple[str, str, Def, str]


def add_amp_value_routes(
    plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions, unindexed, sources=None
):
    """``plan`` with the route above added for every function it is proven for; with the
    launchers' ``sources``, the parameters of those functions given the models the launchers
    initialized are named too (:attr:`FilePlan.amp_value_models`: their calls are the forward
    passes autocast goes around)."""
    from .repo_plan import FilePlan

    links = _links(by_path, launchers, definitions, unindexed)
    if not links:
        return plan
    taken = {p for p, f in plan.files.items() if f.component is not None}
    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    for (callee_path, name), (param, calls) in sorted(links.items()):
        if callee_path in taken or callee_path in by_path and by_path[callee_path].amp_sites:
            continue  # a file of another route, or one with apex.amp of its own: not joined
        callers = sorted({c for c, _t in calls})
        owned = {plan.files[c].component for c in callers if c in plan.files and plan.files[c].component is not None}
        if len(owned) > 1:
            continue
        component = owned.pop() if owned else number
        number += component == number
        callee = plan.files.get(callee_path, FilePlan())
        models = {(name, m) for c in callers for m in _model_parameters(c, (callee_path, name), sources, by_path, definitions)}
        plan.files[callee_path] = replace(
            callee,
            component=component,
            amp_value_parameters=tuple(sorted(set(callee.amp_value_parameters) | {(name, param)})),
            amp_value_models=tuple(sorted(set(callee.amp_value_models) | models)),
        )
        taken.add(callee_path)
        for caller in callers:
            mine = plan.files.get(caller, FilePlan())
            texts = {t for c, t in calls if c == caller}
            plan.files[caller] = replace(
                mine, component=component, amp_value_calls=tuple(sorted(set(mine.amp_value_calls) | texts))
            )
    return plan


def _links(by_path, launchers: Set[str], definitions, unindexed) -> Dict[Def, Tuple[str, List[Tuple[str, str]]]]:
    """function of another file -> (its parameter, the (launcher, call text) giving it
    apex.amp there), for the functions every call of which is such a call."""
    found: Dict[Def, Tuple[str, List[Tuple[str, str]]]] = {}
    refused: Set[Def] = set()
    for path in sorted(launchers):
        user = by_path[path]
        for arg in user.amp_arguments:
            if arg.receiver or not arg.module:
                continue
            callee = definitions.find(arg.module, arg.name, path, anywhere=True)
            if callee is None or callee[0] == path or callee in refused:
                continue
            param = _scaling_parameter(callee, arg.keyword, arg.position, definitions)
            known = found.get(callee)
            if param is None or (known is not None and known[0] != param):
                refused.add(callee)
                found.pop(callee, None)
                continue
            found.setdefault(callee, (param, []))[1].append((path, arg.text))
    for callee, (param, calls) in list(found.items()):
        if not _every_call_gives_amp(callee, param, sorted({c for c, _t in calls}), by_path, definitions, unindexed):
            del found[callee]
    return found


def _scaling_parameter(callee: Def, keyword: str, position: int, definitions) -> Optional[str]:
    """The parameter of the top-level function ``callee`` that an argument given by
    ``keyword`` or at ``position`` fills, when the body scales losses through it and uses
    it in no other way than ``SCALING_USES``; else None."""
    target = definitions.summary(callee[0])
    if target is None or callee[1] not in target.functions or callee[1] not in target.parameters:
        return None
    positional, kwonly = target.parameters[callee[1]]
    param = keyword if keyword in positional + kwonly else ""
    if not keyword and 0 <= position < len(positional):
        param = positional[position]
    uses = target.parameter_uses.get(callee[1], {}).get(param) if param else None
    if not uses or "scale_loss" not in uses or not uses <= SCALING_USES:
        return None
    return param


def _every_call_gives_amp(callee: Def, param: str, callers: List[str], by_path, definitions, unindexed) -> bool:
    """Whether each call of ``callee`` in ``callers`` gives apex.amp for ``param``, none of
    them uses it otherwise (passed on, stored), its own file does not call it, and no other
    walked file refers to it."""
    path, name = callee
    target = definitions.summary(path)
    if target is None or any(c.name == name for c in target.plain_calls) or name in target.escaping:
        return False
    for caller in callers:
        user = by_path[caller]
        calls = [c for c in user.calls if definitions.find(c.module, c.name, caller, anywhere=True) == callee]
        given = {
            a.line
            for a in user.amp_arguments
            if not a.receiver
            and definitions.find(a.module, a.name, caller, anywhere=True) == callee
            and _scaling_parameter(callee, a.keyword, a.position, definitions) == param
        }
        if not calls or any(c.line not in given for c in calls):
            return False
        if any(local in user.escaping for local, (_m, n) in user.imports.items() if n == name):
            return False
    return not _referred_elsewhere(callee, set(callers), by_path, definitions, unindexed)


def _referred_elsewhere(callee: Def, callers: Set[str], by_path, definitions, unindexed) -> bool:
    """Whether a walked file other than ``callers`` and the function's own imports the
    function, or star-imports or imports its module (``train.run(...)`` may call it)."""
    path, name = callee
    candidates = {p for p, s in by_path.items() if name in s.identifiers} | set(definitions.naming(name))
    stem = module_stem(path)
    candidates |= {p for p, (_shown, source) in unindexed.items() if b"import *" in source and stem.encode() in source}
    for other in sorted(candidates - callers - {path}):
        summary = definitions.summary(other)
        if summary is None:
            return True  # unreadable: it may refer to it
        for local, (module, imported) in summary.imports.items():
            if imported and definitions.find(module, imported, other, anywhere=True) == callee:
                return True
            dotted = f"{module}.{imported}" if imported else module
            if definitions.resolver.resolve(dotted, other) == path:
                return True  # ``import train`` / ``from pkg import train``, then ``train.run``
        if any(definitions.resolver.resolve(m, other) == path for m in summary.star_imports):
            return True
    return False


def _model_parameters(launcher: str, callee: Def, sources, by_path, definitions) -> Set[str]:
    """The parameters of ``callee`` that every call of it in ``launcher`` gives, by name, a
    model the launcher's ``amp.initialize`` takes (``model, opt = amp.initialize(model,
    opt)`` then ``train(model, ...)``); empty without the launcher's source."""
    source = (sources or {}).get(launcher)
    tree = stdlib_trees.parse(source) if source is not None else None
    target = definitions.summary(callee[0])
    if tree is None or target is None or callee[1] not in target.parameters:
        return set()
    names = {
        local
        for local, (module, name) in by_path[launcher].imports.items()
        if name and definitions.find(module, name, launcher, anywhere=True) == callee
    }
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    models = {
        n.args[0].id
        for n in calls
        if isinstance(n.func, ast.Attribute) and n.func.attr == "initialize" and n.args and isinstance(n.args[0], ast.Name)
    }
    positional, kwonly = target.parameters[callee[1]]
    found: Optional[Set[str]] = None
    for call in calls:
        if not (isinstance(call.func, ast.Name) and call.func.id in names):
            continue
        if any(isinstance(a, ast.Starred) for a in call.args):
            return set()
        given = {positional[i] for i, a in enumerate(call.args[: len(positional)]) if _is_one_of(a, models)}
        given |= {k.arg for k in call.keywords if k.arg in positional + kwonly and _is_one_of(k.value, models)}
        found = given if found is None else found & given
    return found or set()


def _is_one_of(node: ast.AST, names: Set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names
