"""Attribute names a class family of other files already uses, which a GradScaler (or its
switch) kept on ``self`` must not take.

The initialize rule keeps the GradScaler on ``self`` when the methods of the class whose
``__init__`` initializes amp scale the losses (``self.scaler = GradScaler(...)``), and picks
the name from what its own file names.  A base class in another file that sets or reads
``self.scaler`` (its own counter, a torch.cuda.amp GradScaler it makes) would then share the
attribute with ours: one overwrites the other on the same instance, silently.  So would a
subclass in another file.  For each class of a file whose methods use apex.amp, this reads
the attribute names of every file holding a walked class it derives from or a walked class
deriving from it, and keeps those among the names the rule may pick.  Bases from outside
the walked files are not read.  Pure data.
"""

from __future__ import annotations

from typing import Callable, Dict, Iterable, Optional, Set, Tuple

from .repo_index import ModuleSummary

Def = Tuple[str, str]

#: the names the initialize rule keeps a GradScaler, a list of them or its switch under, in
#: order of preference, each group's last name where the others are taken
SCALER_NAMES = ("scaler", "grad_scaler", "amp_scaler")
SCALERS_NAMES = ("scalers", "grad_scalers", "amp_scalers")
SWITCH_NAMES = ("use_amp", "amp_enabled", "use_mixed_precision")
FALLBACKS = ("amp_grad_scaler", "amp_grad_scalers", "amp_switch")
KEPT_NAMES = frozenset(SCALER_NAMES + SCALERS_NAMES + SWITCH_NAMES + FALLBACKS)


def family_attributes(by_path: Dict[str, ModuleSummary], definitions) -> Dict[str, Tuple[str, ...]]:
    """File path -> the names of ``KEPT_NAMES`` read or set as attributes in another file
    of the family of one of its classes using apex.amp in a method (only files with some)."""
    found: Dict[str, Tuple[str, ...]] = {}
    for path, summary in by_path.items():
        owners = [(path, o) for o in sorted({s.owner for s in summary.amp_sites if s.method})]
        taken = family_attribute_names(owners, by_path, definitions, skip=path) & KEPT_NAMES
        if taken:
            found[path] = tuple(sorted(taken))
    return found


def family_attribute_names(items: Iterable[Def], by_path: Dict[str, ModuleSummary], definitions,
                           skip: str = "") -> Set[str]:
    """Every attribute name read or set in a file (but ``skip``) holding one of ``items``, a
    walked class one of them derives from, or a walked class deriving from one of them."""
    from .repo_plan import derived_classes

    family: Set[Def] = set()
    for item in items:
        family |= ancestors(item, definitions) | derived_classes(item, by_path, definitions, by_name=True)
    taken: Set[str] = set()
    for path in sorted({p for p, _c in family} - {skip}):
        read = definitions.summary(path)
        taken |= read.attribute_names if read is not None else set()
    return taken


def ancestors(item: Def, definitions) -> Set[Def]:
    """``item`` and every class of the walked files it derives from, directly or not."""
    return ancestors_or_why(item, definitions)[0]


def ancestors_or_why(
    item: Def, definitions, unknown_base: Optional[Callable[[str, str, ModuleSummary], str]] = None
) -> Tuple[Set[Def], str]:
    """``ancestors``, and where ``unknown_base(name, base_text, summary)`` says why a base that
    is no class of the walked files stops the proof, that reason ("" where none did)."""
    from .repo_plan import _base_def

    found, work = {item}, [item]
    while work:
        path, name = work.pop()
        summary = definitions.summary(path)
        for text in summary.class_bases.get(name, ()) if summary is not None else ():
            base = _base_def(text, path, summary, definitions)
            if base is None:
                why = unknown_base(name, text, summary) if unknown_base is not None else ""
                if why:
                    return found, why
            elif base not in found:
                found.add(base)
                work.append(base)
    return found, ""


def free_name(choices: Tuple[str, ...], used: Set[str]) -> str:
    """The first of ``choices`` not in ``used``, else the last one numbered until free."""
    found = next((n for n in choices if n not in used), None)
    number = 2
    while found is None:
        found = f"{choices[-1]}_{number}" if f"{choices[-1]}_{number}" not in used else None
        number += 1
    return found
