"""The cross-file plan's base-class route: a base class of another file whose methods only
save or load the amp state (pytorch-template's ``BaseTrainer._save_checkpoint`` saving
``amp.state_dict()``), while its subclasses take the GradScaler through their constructor.

The constructor route keeps the GradScaler on ``self`` as the first statement of each such
subclass's ``__init__`` (before ``super().__init__`` runs the base's code), so the base's
methods read it there (``self.scaler.state_dict()``), as the plan's ``carried`` methods do.
That is proven only when every instance that runs those methods was built through such a
constructor: the base is built nowhere (no call of it in any walked file, used in other
files only as a base class), and every class of the walked files deriving from it, directly
or not, is an entry of the plan that gets the GradScaler (``check_heirs``).  The base's file
then joins its subclasses' component: native together or not at all.  Pure data.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple

from .repo_index import ModuleSummary
from .site_words import in_definition

Def = Tuple[str, str]

#: what the base's methods may do with apex.amp for the GradScaler to do instead
STATE_MEMBERS = frozenset({"state_dict", "load_state_dict"})


def lendable_base(
    base: Def,
    by_path: Dict[str, ModuleSummary],
    called: Callable[[Def], bool],
    outside_callers: Callable[[str, str], list],
    definitions,
) -> Optional[str]:
    """None when the base class ``base`` may read the GradScaler its subclasses keep on
    ``self``; else why not (``called``: whether a call of the repository reaches it;
    ``outside_callers``: the files the index left out that refer to it)."""
    path, name = base
    summary = by_path[path]
    sites = summary.amp_sites
    if summary.amp_values or any(s.owner != name for s in sites):
        return f"{summary.shown} uses amp outside the methods of {name}"
    odd = next((s for s in sites if s.member not in STATE_MEMBERS or not s.method or s.receiver != "self"), None)
    if odd is not None:
        return f"{name}.{odd.method or name}() uses amp.{odd.member}, not only to save or load its state on self"
    if called(base) or name in summary.escaping:
        return f"{name} is itself built or passed on, not only derived from"
    return used_only_as_base(base, by_path, outside_callers, definitions)


def used_only_as_base(
    item: Def, by_path: Dict[str, ModuleSummary], outside_callers: Callable[[str, str], list], definitions
) -> Optional[str]:
    """None when the other files use the class ``item`` only as a base class (each indexed
    file importing it names it only as a class's base: it calls it nowhere and stores, passes
    or returns it nowhere, and none of the files the index left out refers to it); else why
    not."""
    path, name = item
    for other_path, other in by_path.items():
        for local, (module, attr) in other.imports.items():
            if attr and definitions.find(module, attr, other_path, anywhere=True) == item:
                bases = {b for bs in other.class_bases.values() for b in bs}
                if local in other.called_names or local not in bases or local in other.valued:
                    return f"{name} is used in {other.shown} other than as a base class"
    outside = outside_callers(name, path)
    if outside:
        _path, shown, line, owner = outside[0]
        return f"{name} is also used in {in_definition(shown, owner) if line else shown}, where no GradScaler exists"
    return None


def check_heirs(
    lent: Dict[Def, Set[Def]],
    family: Callable[[Def], Set[Def]],
    entries: Set[Def],
    refused: Set[Def],
    by_path: Dict[str, ModuleSummary],
) -> Dict[Def, str]:
    """The subclasses to refuse, with why: those of a base whose family holds a class that
    does not get the GradScaler through its constructor (not an entry, or refused)."""
    refusals: Dict[Def, str] = {}
    for base, heirs in sorted(lent.items()):
        shown = f"{base[1]} in {by_path[base[0]].shown}"
        blocked = next((h for h in sorted(family(base) - {base}) if h not in entries or h in refused), None)
        if blocked is None:
            continue
        where = (by_path[blocked[0]].shown if blocked[0] in by_path else blocked[0])
        for heir in sorted(heirs - refused):
            refusals[heir] = (
                f"{heir[1]} derives from {shown}, whose methods save or load the amp state: they could read the "
                f"GradScaler its subclasses keep on self, but {blocked[1]} in {where} derives from it too and "
                "does not get the GradScaler"
            )
    return refusals


def carried_methods(cls: Def, summary: ModuleSummary, scaler: str) -> List[Tuple[str, str, str]]:
    """The methods of the class ``cls`` that use amp, each reading the GradScaler as
    ``self.<scaler>`` (the plan's ``carried``; the attach route's too)."""
    methods = {s.method for s in summary.amp_sites if s.owner == cls[1]}
    return [(cls[1], m, f"self.{scaler}") for m in sorted(methods)]
