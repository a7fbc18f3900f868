"""The methods, by name, of a class family that may run a backward or an optimizer step when
called on ``self``: where a method computes its loss from what its callers hand it (APX253,
``rules/_amp_handed_outputs``), the autocast regions at the callers must stop at such a call
(``self.gen_update(...)``, ``super().gen_update(...)``), which may run a backward of another
file's class under autocast.

For the classes of a file whose methods scale a loss: every walked class they derive from or
that derives from them (a subclass's override runs for its instances), and the methods of
those that call ``backward``/``step``/``scale_loss`` of anything, then those calling one of
those names on ``self`` or through ``super()``, to a fixed point.  Calls through other
objects and functions are not followed.  Pure data.
"""

from __future__ import annotations

from typing import Dict, Set, Tuple

from .family_names import ancestors
from .repo_index import ModuleSummary

Def = Tuple[str, str]


def stepping_methods(path: str, by_path: Dict[str, ModuleSummary], definitions) -> Tuple[str, ...]:
    """The method names of the family of ``path``'s scaling classes that may reach a backward
    or a step, sorted."""
    from .repo_plan import derived_classes

    owners = sorted({s.owner for s in by_path[path].amp_sites if s.member == "scale_loss" and s.method})
    family: Set[Def] = set()
    for owner in owners:
        family |= ancestors((path, owner), definitions) | derived_classes((path, owner), by_path, definitions,
                                                                          by_name=True)
    calls: Dict[Tuple[str, str], Set[str]] = {}
    found: Set[str] = set()
    for where, cls in family:
        summary = definitions.summary(where)
        if summary is None:
            continue
        found |= {m for c, m in summary.stepping_methods if c == cls}
        for (c, m), called in summary.method_self_calls.items():
            if c == cls:
                calls.setdefault((c, m), set()).update(called)
        for (c, m), called in summary.method_super_calls.items():
            if c == cls:
                calls.setdefault((c, m), set()).update(called)
    grew = True
    while grew:
        grew = False
        for (_c, method), called in calls.items():
            if method not in found and called & found:
                found.add(method)
                grew = True
    return tuple(sorted(found))
