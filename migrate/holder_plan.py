"""The holder route across files: which launcher's ``obj.amp = amp`` a class of a file
without apex reads as "apex.amp or None" (``holder_route`` proves that file's shape).

Planned only where nothing else could put apex.amp on an object that class reads: the
launcher is the one walked file that stores apex.amp on an attribute of that name, the holder
file is the one other file that reads the attribute, and no other route edits the holder file
(it is no optimizer wrapper handed the GradScaler, no caller of a model factory).  The
launcher and the holder file form one component: the edit is made only when the launcher
comes out native (``pipeline``).  Pure data.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, Set, Tuple

from .family_names import family_attribute_names
from .holder_route import HolderEdit, holder_route
from .repo_index import ModuleSummary


def add_holder_routes(plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions,
                      unindexed: Dict[str, Tuple[str, bytes]], apex_free: Dict[str, bytes]):
    """``plan`` with a component per launcher whose stored apex.amp a holder class reads."""
    from .repo_plan import FilePlan

    files: Dict[str, Tuple[str, bytes]] = {p: (shown, src) for p, (shown, src) in unindexed.items()}
    files.update({p: (by_path[p].shown, src) for p, src in apex_free.items() if p in by_path})
    by_shown = {shown: p for p, (shown, _src) in files.items()}
    stored_by: Dict[str, Set[str]] = {}
    for path, summary in by_path.items():
        for attribute in summary.amp_stores:
            stored_by.setdefault(attribute, set()).add(path)
    wrapped = {f for fp in plan.files.values() for _l, _a, f, _c in fp.scaler_steppable}
    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    routes: Dict[str, Tuple[int, HolderEdit, str]] = {}
    for path in sorted(launchers):
        current = plan.files.get(path)
        facts = current.carrier if current is not None else None
        summary = by_path[path]
        if facts is None or current.component is not None or len(summary.amp_stores) != 1:
            continue
        attribute = next(iter(summary.amp_stores))
        if len(facts.read_elsewhere) != 1 or stored_by.get(attribute) != {path}:
            continue
        holder_path = by_shown.get(facts.read_elsewhere[0])
        if holder_path is None or holder_path in plan.caller_edits or holder_path in plan.holder_edits:
            continue
        shown, source = files[holder_path]
        if shown in wrapped or holder_path in wrapped:
            continue
        taken = tuple(summary.identifiers | summary.object_attributes)
        edit = holder_route(holder_path, shown, source, attribute, taken)
        if isinstance(edit, HolderEdit):  # a base or subclass of another file may use the name on self
            family = family_attribute_names([(holder_path, edit.cls)], by_path, definitions, skip=holder_path)
            if edit.new_attribute in family:
                edit = holder_route(holder_path, shown, source, attribute, taken + tuple(sorted(family)))
        if isinstance(edit, str):
            if edit:
                plan.files[path] = replace(current, carrier=replace(facts, holder_refusal=edit))
            continue
        inits = [site.dynamic for site in summary.training_inits]
        plan.files[path] = replace(
            current, component=number, dynamic_scaler=bool(inits) and all(inits),
            carrier=replace(facts, holder=f"{edit.cls}.{edit.method}() of {shown}", attribute=edit.new_attribute),
        )
        routes[holder_path] = (number, edit, summary.shown)
        number += 1
    plan.holder_edits.update(routes)
    return plan
