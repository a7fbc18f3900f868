"""apex.amp (or None) handed to a same-file function as an argument.

``train(model, optimizer, amp)`` where the launcher binds ``amp`` to apex.amp on one branch
and to None on the other, and ``train`` scales, clips and saves through its parameter
``amp``: the parameter is read as apex.amp itself, so the usual rules rewrite its uses, and
every call hands the GradScaler in the same slot (disabled where apex was never
initialized), which the parameter then carries on every path (APX230).  Bound only when the
function is called in this file and nowhere used another way, every call passes apex.amp at
that slot, the function never rebinds the parameter, initializes it (the GradScaler would
then be made there, not handed in: ``initializing_refusals`` says why the file keeps the
shim) or reads it from a nested scope, and no other walked file refers to the function (the
plan's ``used_elsewhere``: such a file would still hand it apex.amp or None, so this file
keeps the shim with that reason).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ._per_tree import remembered
from ._edits import code_of
from ._tree import module_code, walk

AMP = "apex.amp"

#: the finding of a call whose apex.amp argument became the GradScaler
FINDING = "APX230"


def _slot(call: cst.Call, index: int, name: str) -> Optional[cst.Arg]:
    """The argument of ``call`` bound to parameter ``name`` at position ``index``."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: index + 1]):
        return None
    return positional[index] if index < len(positional) else None


def _reads_only(parents: Any, func: cst.FunctionDef, name: str) -> bool:
    """``name`` is only read in ``func``'s body, never rebound, never used by a nested
    definition (whose scope a rebinding there would change)."""
    for node in walk(func.body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            if any(isinstance(n, cst.Name) and n.value == name for n in walk(node)):
                return False
        if not (isinstance(node, cst.Name) and node.value == name):
            continue
        parent = parents.get(node)
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName, cst.NamedExpr)):
            return False
        if isinstance(parent, (cst.Global, cst.Nonlocal, cst.NameItem, cst.Del)):
            return False
        if isinstance(parent, (cst.Tuple, cst.List, cst.Element)):
            return False  # an unpacking target (or a tuple holding it: left to the shim)
    return True


def amp_parameters(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, Tuple[str, List[cst.Arg]]]:
    """Module-level functions that take apex.amp as a parameter: function -> (the
    parameter's name, the arguments that pass it, one per call in this file; none for a
    function the plan says launchers of other files give apex.amp, ``planned_parameters``);
    a function another walked file refers to is left out (``outside_refusals`` says why)."""
    elsewhere = _used_elsewhere(rule)
    found = {func: found for func, found in _given(rule, module).items() if func.name.value not in elsewhere}
    found.update((func, (name, [])) for func, name in planned_parameters(rule, module).items())
    return found


def _planned(rule: Any) -> Dict[str, str]:
    """Function -> parameter, that the cross-file plan reads as apex.amp in this file
    (``FilePlan.amp_value_parameters``)."""
    plan = rule.repo_plan()
    return dict(plan.amp_value_parameters) if plan is not None else {}


def planned_parameters(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, str]:
    """Module-level functions the cross-file plan says every call of which, all in
    launchers of other files, gives apex.amp (or None) for a parameter (``amp_value_plan``):
    function -> that parameter, where the body only reads it (``_reads_only``) and does not
    initialize it; one that does is left to the fallback that ``planned_refusals`` reports."""
    wanted = _planned(rule)
    found: Dict[cst.FunctionDef, str] = {}
    for func in module.body:
        if isinstance(func, cst.FunctionDef) and wanted.get(func.name.value):
            name = wanted[func.name.value]
            if _reads_only(rule.parents, func, name) and _initialize_of(func, name) is None:
                found[func] = name
    return found


def planned_refusals(rule: Any, module: cst.Module) -> Dict[cst.CSTNode, str]:
    """The function of ``amp_value_plan`` whose parameter is rebound, initialized or read
    from a nested scope after all (the plan reads uses, not scopes) -> why it cannot carry
    the GradScaler, at its definition."""
    wanted = _planned(rule)
    planned = planned_parameters(rule, module)
    refusals: Dict[cst.CSTNode, str] = {}
    for func in module.body:
        if isinstance(func, cst.FunctionDef) and func.name.value in wanted and func not in planned:
            name = wanted[func.name.value]
            refusals[func.name] = (
                f"apex.amp (or None) is given to {func.name.value}() as its parameter {name} by the launcher, "
                f"and {func.name.value}() rebinds, initializes or reads {name} from a nested scope, so that "
                "parameter cannot carry the GradScaler"
            )
    return refusals


def outside_refusals(rule: Any, module: cst.Module) -> Dict[cst.CSTNode, str]:
    """The apex.amp arguments of this file's calls of a function that would take it as a
    parameter but that another walked file refers to (the plan's ``used_elsewhere``) ->
    why the parameter cannot carry the GradScaler."""
    elsewhere = _used_elsewhere(rule)
    refusals: Dict[cst.CSTNode, str] = {}
    for func, (param, args) in _given(rule, module).items():
        name = func.name.value
        if name in elsewhere:
            why = (
                f"apex.amp (or None) is given to {name}() as its parameter {param}, and {name} is also used "
                f"from {elsewhere[name]}, which would still hand it apex.amp or None, so that parameter "
                "cannot carry the GradScaler"
            )
            refusals.update((a.value, why) for a in args)
    return refusals


def _used_elsewhere(rule: Any) -> Dict[str, str]:
    plan = rule.repo_plan()
    return dict(plan.used_elsewhere) if plan is not None else {}


def _given(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, Tuple[str, List[cst.Arg]]]:
    """Module-level functions every call of which in this file hands apex.amp to one
    parameter that the body only reads, and never initializes."""
    parents = rule.parents
    found: Dict[cst.FunctionDef, Tuple[str, List[cst.Arg]]] = {}
    for func, slots in _handed(rule, module).items():
        for name, args in slots:
            if _reads_only(parents, func, name) and _initialize_of(func, name) is None:
                found[func] = (name, args)
                break
    return found


def initializing_refusals(rule: Any, module: cst.Module) -> Dict[cst.CSTNode, str]:
    """The apex.amp arguments of this file's calls of a function that calls ``initialize``
    on the parameter they fill -> why no GradScaler follows them: the route above makes the
    caller's GradScaler fill that slot, but here the GradScaler would be created inside the
    function, from a module (or None) handed in as a value."""
    refusals: Dict[cst.CSTNode, str] = {}
    given = _given(rule, module)
    for func, slots in _handed(rule, module).items():
        if func in given:
            continue
        found = next(((p, a, _initialize_of(func, p)) for p, a in slots if _initialize_of(func, p) is not None), None)
        if found is None:
            continue
        param, args, init = found  # no line in the reason: the TODOs written above would move it
        name = func.name.value
        why = (
            f"apex.amp (or None) is given to {name}() as its parameter {param}, on which {name}() calls "
            f"{code_of(init.func)}: the GradScaler would be created in {name}() from a module handed in as a "
            "value, which no route follows"
        )
        refusals.update((a.value, why) for a in args)
    return refusals


def _initialize_of(func: cst.FunctionDef, name: str) -> Optional[cst.Call]:
    """The first ``name.initialize(...)`` / ``name.init(...)`` call in ``func``'s body."""
    for node in walk(func.body):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value == name
            and node.func.attr.value in ("initialize", "init")
        ):
            return node
    return None


_last_handed: List[Any] = []


def _handed(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, List[Tuple[str, List[cst.Arg]]]]:
    """Module-level functions every call of which in this file hands apex.amp to a
    parameter: function -> (each such parameter, the arguments filling it), in order
    (asked several times by each apex.amp rule: kept for the tree, ``_per_tree``)."""
    return remembered(_last_handed, (module, rule.parents, rule.repo_plan()), lambda: _find_handed(rule, module))


def _find_handed(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, List[Tuple[str, List[cst.Arg]]]]:
    found: Dict[cst.FunctionDef, List[Tuple[str, List[cst.Arg]]]] = {}
    if "apex" not in module_code(module):
        return found
    for func in module.body:
        if not isinstance(func, cst.FunctionDef) or func.decorators:
            continue
        callers = _plain_calls(rule, module, func)
        if not callers:
            continue
        for index, param in enumerate(func.params.params):
            name = param.name.value
            if param.default is not None and not (isinstance(param.default, cst.Name) and param.default.value == "None"):
                continue  # ``amp=None``: every call fills it below, so the default is never used
            args = [_slot(call, index, name) for call in callers]
            if all(
                a is not None and isinstance(a.value, cst.Name) and AMP in rule.qualified_names(a.value) for a in args
            ):
                found.setdefault(func, []).append((name, [a for a in args if a is not None]))
    return found


def parameters_given_amp(rule: Any, module: cst.Module) -> Dict[cst.FunctionDef, str]:
    """function -> its parameter read as apex.amp: the ones ``amp_parameters`` finds, and
    after the initialize rule ran (the calls then pass the GradScaler) the ones it recorded."""
    given = {func: name for func, (name, _) in _given(rule, module).items()}  # refused ones too: their sites
    wanted = _planned(rule)
    given.update((f, wanted[f.name.value]) for f in module.body if isinstance(f, cst.FunctionDef) and f.name.value in wanted)
    kept = rule.file_state().get("scaler_parameters", {})
    for func in module.body:
        if isinstance(func, cst.FunctionDef) and func.name.value in kept:
            given[func] = kept[func.name.value]
    return given


def _plain_calls(rule: Any, module: cst.Module, func: cst.FunctionDef) -> Optional[List[cst.Call]]:
    """Every call of ``func`` in this file, or None when it is also used another way."""
    from ._amp_sites import _callers  # the threading route's own notion of "only called"

    calls = _callers(rule, func)
    if calls and any(not (isinstance(c.func, cst.Name) and c.func.value == func.name.value) for c in calls):
        return None  # a partial's calls: their slots are shifted by what it bound
    return calls
