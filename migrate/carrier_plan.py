"""What the carrier route needs to know about the rest of the repository.

A launcher may keep apex.amp on an object it hands around (``args.amp = amp``) and scale
through that attribute (``args.amp.scale_loss(...)``).  The per-file rule proves the route
inside the launcher's file; these facts say where the object could be read elsewhere: the
file's definitions that other files call (they would be handed objects without the new
attribute), and the imported names whose defining file reads an attribute of the stored
name (the object handed to them may be read there).  Pure data, from the index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Set, Tuple

from .repo_index import MODULE_LEVEL, ModuleSummary

#: stands for every name a file takes with ``from m import *`` from a module whose module
#: level reads the stored attribute
STAR = "*"


@dataclass(frozen=True)
class CarrierFacts:
    """The repository around one file that stores apex.amp on an attribute."""

    #: (top-level definition of this file, shown path of another file that calls it or names
    #: it after ``from this import *``)
    called_elsewhere: Tuple[Tuple[str, str], ...] = ()
    #: (local name imported here, shown path of its file): a function or class that reads an
    #: attribute named as one apex.amp is stored on here (itself, or what it calls), or a
    #: module (``import m``, ``from m import *``) whose file reads one
    readers: Tuple[Tuple[str, str], ...] = ()


def carrier_facts(by_path: Dict[str, ModuleSummary], definitions: Any) -> Dict[str, CarrierFacts]:
    """The facts for every indexed file that stores apex.amp on an attribute
    (``definitions``: ``repo_plan._Definitions``, which also reads the files the index left
    out)."""
    facts: Dict[str, CarrierFacts] = {}
    walked: List[Tuple[str, ModuleSummary]] = []
    for path, summary in by_path.items():
        if not summary.amp_stores:
            continue
        if not walked:  # every walked file, with apex or not: a second run sees the same callers
            walked = list(by_path.items()) + [
                (p, s) for p in sorted(definitions.unindexed) for s in [definitions.summary(p)] if s is not None
            ]
        called: Set[Tuple[str, str]] = set()
        for other_path, other in walked:
            if other_path == path:
                continue
            for call in other.calls:
                callee = definitions.find(call.module, call.name, other_path, anywhere=True)
                if callee is not None and callee[0] == path:
                    called.add((callee[1], other.shown))
            if any(definitions.resolver.resolve(m, other_path) == path for m in other.star_imports):
                # ``from this import *``: each name of this file that file names and does not
                # define itself (its own ``def main`` is the one its ``main()`` calls)
                own = other.functions | other.classes
                named = other.identifiers | other.called_names
                for name in (summary.functions | summary.classes) & named - own:
                    called.add((name, other.shown))
        readers: Set[Tuple[str, str]] = set()
        for local, (module, name) in summary.imports.items():
            found = definitions.find(module, name, path, anywhere=True) if name else None
            if found is not None:  # a function or class: what it and everything it calls reads
                if summary.amp_stores & _reads_through(definitions, found, set()):
                    readers.add((local, definitions.summary(found[0]).shown))
                continue
            target = definitions.resolver.resolve(f"{module}.{name}", path) if name else None
            target = target or definitions.resolver.resolve(module, path)
            if target is not None and _reads(definitions, target, summary.amp_stores):
                readers.add((local, definitions.summary(target).shown))
        for module in summary.star_imports:
            target = definitions.resolver.resolve(module, path)
            star = definitions.summary(target) if target is not None else None
            if star is None:
                continue
            if summary.amp_stores & star.definition_attributes.get(MODULE_LEVEL, set()):
                readers.add((STAR, star.shown))  # its module level reads it: any name may
            for name in star.functions | star.classes:
                if summary.amp_stores & _reads_through(definitions, (target, name), set()):
                    readers.add((name, star.shown))
        facts[path] = CarrierFacts(tuple(sorted(called)), tuple(sorted(readers)))
    return facts


def _reads_through(definitions: Any, item: Tuple[str, str], seen: Set[Tuple[str, str]]) -> Set[str]:
    """The attribute names the definition ``item`` reads, with those of every definition of
    the repository it calls (its file's, and imported ones), and of its file's module level."""
    if item in seen:
        return set()
    seen.add(item)
    path, name = item
    summary = definitions.summary(path)
    if summary is None:
        return set()
    found = set(summary.definition_attributes.get(name, ())) | summary.definition_attributes.get(MODULE_LEVEL, set())
    for local in summary.local_calls.get(name, ()):
        found |= _reads_through(definitions, (path, local), seen)
    for call in summary.calls:
        if call.owner == name:
            callee = definitions.find(call.module, call.name, path, anywhere=True)
            if callee is not None:
                found |= _reads_through(definitions, callee, seen)
    return found


def _reads(definitions: Any, path: str, attributes: Set[str]) -> bool:
    summary = definitions.summary(path)
    return summary is not None and bool(summary.loaded_attributes & attributes)
