"""Top-level definitions no file of the repository refers to.

A class or function of a file whose other definitions get the GradScaler from another file
may itself save the amp state (a second checkpoint class nobody builds).  When no walked
file names it, imports it, reads it as an attribute of its module or names it after a
``from module import *``, and its own file neither calls it nor uses it as a value, it can
take the GradScaler as a required parameter like its neighbours: no call in the repository
needs changing, and a construction elsewhere fails at once instead of at its first
checkpoint.  So can a training function that scales its losses in a file no other definition
of which gets the GradScaler (a public ``train(loader, model, optimizer, ...)`` nothing in the
repository calls): a call from outside that does not pass the scaler fails at once.

A read of ``X.name`` through an imported name (``module.name``) in another file counts as a
use this search does not follow; one off an object (``model.train()``) does not.  So does a
module object another file hands on as a value (``getattr(trainers, args.trainer)``, a
registry): any of its definitions may be built there.
"""

from __future__ import annotations

from typing import Any, Dict, Set, Tuple

from .carrier_plan import users_of, walked_files
from .repo_index import ModuleSummary

Def = Tuple[str, str]  # (file path, top-level definition name)


def unreferenced_definitions(candidates: Set[Def], by_path: Dict[str, ModuleSummary], definitions: Any) -> Set[Def]:
    """Those of ``candidates`` that nothing outside their own definition refers to."""
    if not candidates:
        return set()
    walked = walked_files(by_path, definitions, {name for _path, name in candidates})
    found = set()
    for path, name in sorted(candidates):
        own = by_path[path]
        if name in own.escaping or name in own.called_names or name in own.attribute_reads:
            continue
        users, why = users_of(walked, definitions, path, name)
        users = [(p, local) for p, local in users if not _re_export(dict(walked).get(p), local)]
        if users or why:
            continue
        if any(name in other.imported_attributes for other_path, other in walked if other_path != path):
            continue  # ``module.Name`` somewhere: a use this search does not follow
        if name in own.classes and any(_names(other, name) for other_path, other in walked if other_path != path):
            continue  # a class named in another file's code, through an import not followed (a star's)
        if any(module_handed_on(other_path, other, path, definitions) for other_path, other in walked):
            continue  # ``getattr(trainers, args.trainer)``: which definition it takes is not known
        found.add((path, name))
    return found


def module_handed_on(other_path: str, other: ModuleSummary, path: str, definitions: Any) -> str:
    """The name under which ``other`` (another file) imports the module of ``path`` as a
    module object and uses that object as a value (``getattr(trainers, args.trainer)``, handed
    to a registry): any definition of the module may be built from there, with arguments no
    new parameter reaches; "" where it does not."""
    if other_path == path:
        return ""
    for local, (module, attr) in sorted(other.imports.items()):
        target = f"{module}.{attr}" if attr else module
        if local in other.escaping and definitions.resolver.resolve(target, other_path) == path:
            return local
    return ""


def _names(summary: ModuleSummary, name: str) -> bool:
    """``summary`` imports ``name`` other than to re-export it, or its code calls or reads
    ``name`` (not as an attribute) where that is not an alias of another import
    (``from .restore import RunRestorer as KeyedRestorer`` names RunRestorer, not a
    ``KeyedRestorer`` class)."""
    if any(attr == name for _m, attr in summary.imports.values()):
        return not _re_export(summary, name)
    if name in summary.imports:
        return False  # the file's ``name`` is another definition imported under that name
    return name in summary.called_names or name in summary.identifiers


def _re_export(summary: Any, local: str) -> bool:
    """A package's ``__init__.py`` that imports ``local`` only to offer it under the package's
    name (``from .cuda import ApexScaler``), using it nowhere itself: a file importing it from
    the package is found as a user of the definition itself."""
    if summary is None or not summary.path.endswith("__init__.py"):
        return False
    return not (
        local in summary.called_names
        or local in summary.escaping
        or local in summary.attribute_reads
        or local in summary.identifiers
    )
