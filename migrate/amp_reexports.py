"""Module-level apex.amp names that other files of the repository take from their module.

``utils.py`` binds ``amp`` (``if has_apex: from apex import amp``) and uses it nowhere
itself; ``distiller.py`` reads it through ``from .utils import *`` (TextBrewer), ``from
.utils import amp`` or ``utils.amp``.  Removing the "unused" import would leave those files
a name that no longer exists, and their apex.amp calls are not sites the rules of their own
file see.  So the import stays, on the shim (``imports`` rule, APX270), and the files that
take it keep apex.amp's semantics through it.

A file counts as taking ``name`` from ``path`` when it imports it from there by name, reads
it as an attribute of a name bound to that module, or star-imports that module and uses the
name without binding it itself (whether the star import is proven to bind it or not: keeping
the import is the safe answer either way) and has no apex.amp sites of its own (it imports
apex.amp itself, and the rules migrate those).  Pure data from the index.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .carrier_plan import walked_files
from .repo_index import ModuleSummary
from .submodule_calls import module_locals


def amp_reexports(by_path: Dict[str, ModuleSummary], definitions: Any) -> Dict[str, Tuple[Tuple[str, str], ...]]:
    """Real path of an indexed file -> (its module-level apex.amp name, the shown paths of
    the files that take that name from it), for the names some other file takes."""
    homes = {path: summary.module_amp_names for path, summary in by_path.items() if summary.module_amp_names}
    if not homes:
        return {}
    found: Dict[str, Dict[str, List[str]]] = {}
    for other_path, other in walked_files(by_path, definitions, set().union(*homes.values()), importing=set(homes)):
        taken = _taken_names(other_path, other, definitions)
        for path, names in homes.items():
            if other_path == path:
                continue
            for name in sorted(names):
                if taken(path, name):
                    found.setdefault(path, {}).setdefault(name, []).append(other.shown)
    return {
        path: tuple((name, ", ".join(sorted(users))) for name, users in sorted(by_name.items()))
        for path, by_name in found.items()
    }


def _taken_names(other_path: str, other: ModuleSummary, definitions: Any) -> Callable[[str, str], bool]:
    """A test ``taken(path, name)``: whether ``other`` (the file ``other_path``) takes the
    module-level ``name`` of the file ``path``.  ``other``'s imports are resolved here, once,
    whatever the number of files asked about (asked per file and name, they were resolved
    again for each home of a name: quadratic in the files importing apex.amp)."""
    resolve = definitions.resolver.resolve
    by_name: Dict[Optional[str], Set[str]] = {}  # file -> the names imported from it by name
    for module, attr in other.imports.values():
        if attr:
            by_name.setdefault(resolve(module, other_path), set()).add(attr)
    for local, dotted in module_locals(other, definitions, other_path).items():
        by_name.setdefault(resolve(dotted, other_path), set()).update(other.attribute_reads.get(local, ()))
    by_name.pop(None, None)
    # a file with apex.amp sites of its own imports apex.amp itself
    starred = set() if other.amp_sites else {resolve(module, other_path) for module in other.star_imports}
    own = other.functions | other.classes | set(other.imports) | other.bound_names | other.module_amp_names
    used = other.identifiers | other.called_names | set(other.attribute_reads)

    def taken(path: str, name: str) -> bool:
        return name in by_name.get(path, ()) or (path in starred and name not in own and name in used)

    return taken
