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

    links, refusals = _links(by_path, launchers, definitions, unindexed)
    for (launcher, text), why in sorted(refusals.items()):
        mine = plan.files.get(launcher, FilePlan())
        plan.files[launcher] = replace(mine, amp_value_refusals=mine.amp_value_refusals + ((text, why),))
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


def _links(
    by_path, launchers: Set[str], definitions, unindexed
) -> Tuple[Dict[Def, Tuple[str, List[Tuple[str, str]]]], Dict[Tuple[str, str], str]]:
    """function of another file -> (its parameter, the (launcher, call text) giving it
    apex.amp there), for the functions every call of which is such a call; and (launcher,
    call text) -> why not, for the calls of a function that scales through the parameter
    they fill but is not proven so."""
    found: Dict[Def, Tuple[str, List[Tuple[str, str]]]] = {}
    why: Dict[Def, str] = {}
    texts: Dict[Def, Set[Tuple[str, str]]] = {}
    for path in sorted(launchers):
        user = by_path[path]
        for arg in user.amp_arguments:
            if arg.receiver or not arg.module:
                continue
            callee = definitions.find(arg.module, arg.name, path, anywhere=True)
            if callee is None or callee[0] == path:
                continue
            texts.setdefault(callee, set()).add((path, arg.text))
            if callee in why:
                continue
            param, refusal = _scaling_parameter(callee, arg.keyword, arg.position, definitions)
            known = found.get(callee)
            if param and known is not None and known[0] != param:
                refusal = f"apex.amp is given to {callee[1]}() for two parameters, {known[0]} and {param}"
            if refusal or not param:
                found.pop(callee, None)
                if refusal:
                    why[callee] = refusal
                continue
            found.setdefault(callee, (param, []))[1].append((path, arg.text))
    for callee, (param, calls) in list(found.items()):
        refusal = _every_call_gives_amp(callee, param, sorted({c for c, _t in calls}), by_path, definitions, unindexed)
        if refusal:
            del found[callee]
            why[callee] = refusal
    refusals = {call: reason for callee, reason in why.items() for call in texts.get(callee, ())}
    return found, refusals


def _scaling_parameter(callee: Def, keyword: str, position: int, definitions) -> Tuple[str, str]:
    """The parameter of the top-level function ``callee`` that an argument given by
    ``keyword`` or at ``position`` fills, when the body scales losses through it, and ""
    with why not when it also uses it another way than ``SCALING_USES`` (("", "") when it
    scales nothing through it, or is no function: none of this route's business)."""
    target = definitions.summary(callee[0])
    if target is None or callee[1] not in target.functions or callee[1] not in target.parameters:
        return "", ""
    positional, kwonly = target.parameters[callee[1]]
    param = keyword if keyword in positional + kwonly else ""
    if not keyword and 0 <= position < len(positional):
        param = positional[position]
    uses = target.parameter_uses.get(callee[1], {}).get(param) if param else None
    if not uses or "scale_loss" not in uses:
        return "", ""
    if not uses <= SCALING_USES:
        return "", (
            f"{callee[1]}() of {target.shown} scales losses through its parameter {param} but also uses it "
            "another way (passes it on, keeps or rebinds it, or reads another member), which no GradScaler "
            "stands for"
        )
    return param, ""


def _every_call_gives_amp(callee: Def, param: str, callers: List[str], by_path, definitions, unindexed) -> str:
    """Why not every call of ``callee`` is proven to give apex.amp for ``param`` ("" when
    each is): a call in its own file or in a launcher without apex.amp in that slot, a use
    as a value, another walked file that refers to it."""
    path, name = callee
    target = definitions.summary(path)
    head = f"{name}() of {target.shown if target is not None else path} scales losses through its parameter {param}"
    if target is None or any(c.name == name for c in target.plain_calls) or name in target.escaping:
        return f"{head}, and is also called or used as a value in its own file, which hands it no GradScaler"
    for caller in callers:
        user = by_path[caller]
        calls = [c for c in user.calls if definitions.find(c.module, c.name, caller, anywhere=True) == callee]
        given = {
            a.line
            for a in user.amp_arguments
            if not a.receiver
            and definitions.find(a.module, a.name, caller, anywhere=True) == callee
            and _scaling_parameter(callee, a.keyword, a.position, definitions)[0] == param
        }
        if not calls or any(c.line not in given for c in calls):
            return f"{head}, and {user.shown} also calls it without apex.amp in that slot"
        if any(local in user.escaping for local, (_m, n) in user.imports.items() if n == name):
            return f"{head}, and {user.shown} also uses it as a value"
    other = _referred_elsewhere(callee, set(callers), by_path, definitions, unindexed)
    if other:
        return f"{head}, and {other} also refers to it, which would still hand it apex.amp or None"
    return ""


def _referred_elsewhere(callee: Def, callers: Set[str], by_path, definitions, unindexed) -> str:
    """A walked file other than ``callers`` and the function's own (as shown) that imports
    the function, or star-imports or imports its module (``train.run(...)`` may call it);
    "" when there is none."""
    path, name = callee
    candidates = set(by_path) | set(definitions.naming(name))
    stem = module_stem(path)
    candidates |= {p for p, (_shown, source) in unindexed.items() if b"import *" in source and stem.encode() in source}
    for other in sorted(candidates - callers - {path}):
        summary = definitions.summary(other)
        shown = summary.shown if summary is not None else unindexed.get(other, (other, b""))[0]
        if summary is None:
            return shown  # unreadable: it may refer to it
        for local, (module, imported) in summary.imports.items():
            if imported and definitions.find(module, imported, other, anywhere=True) == callee:
                return shown
            dotted = f"{module}.{imported}" if imported else module
            if definitions.resolver.resolve(dotted, other) == path:
                return shown  # ``import train`` / ``from pkg import train``, then ``train.run``
        if any(definitions.resolver.resolve(m, other) == path for m in summary.star_imports):
            return shown
    return ""


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
