"""What the carrier route needs to know about the rest of the repository.

A launcher may keep apex.amp on an object it hands around (``args.amp = amp``) and scale
through that attribute (``args.amp.scale_loss(...)``).  The per-file rule proves the route
inside the launcher's file; these facts say where the object could be read elsewhere: the
file's definitions that other files call (they would be handed objects without the new
attribute), and the imported names whose defining file reads an attribute of the stored
name (the object handed to them may be read there).  Pure data, from the index.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Dict, Iterable, Iterator, List, Optional, Set, Tuple

from .repo_index import MODULE_LEVEL, ModuleSummary

#: stands for every name a file takes with ``from m import *`` from a module whose module
#: level reads the stored attribute
STAR = "*"
#: attribute names the GradScaler may take on the carrier, in order of preference
CARRIER_ATTRIBUTES = ("scaler", "grad_scaler")


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
    #: top-level functions of this file that read the stored attribute through a parameter
    #: and that launchers of other files hand their carrier to (``sharing``)
    shared: Tuple[str, ...] = ()
    #: in a launcher: (local name, shown path of its file, position, name) of the parameter
    #: of another file's shared function that must be handed the carrier
    borrowed: Tuple[Tuple[str, str, int, str], ...] = ()
    #: the attribute every file of a sharing component keeps the GradScaler on ("": no sharing)
    attribute: str = ""
    #: (function of this file, why the launchers of other files that use it cannot share it)
    unshared: Tuple[Tuple[str, str], ...] = ()
    #: in a launcher: (local name, why that function of another file, which reads the stored
    #: attribute, cannot be handed this file's carrier)
    unlent: Tuple[Tuple[str, str], ...] = ()
    #: shown paths of the other files that read an attribute named as one apex.amp is stored
    #: on here (``model.amp``): an object of this file may carry it there
    read_elsewhere: Tuple[str, ...] = ()
    #: (name of a method of a top-level class of this file, positional count, keyword names,
    #: whether it unpacks, shown path) for each call given arguments through an attribute of
    #: that name in another file (``repo_index.ModuleSummary.attribute_calls``): the receiver
    #: is not followed, so it may be an object of this file
    method_calls_elsewhere: Tuple[Tuple[str, int, Tuple[str, ...], bool, str], ...] = ()
    #: (method name, shown path) for each top-level class of another file that defines a
    #: method of a name this file's classes define and reads an attribute named as one apex.amp
    #: is stored on here: a call by that name may reach it instead
    methods_reading_elsewhere: Tuple[Tuple[str, str], ...] = ()
    #: (method name, shown path): another file reads an attribute named as a method of this
    #: file's classes other than by calling it (``Thread(target=runner.fit)``): its calls
    #: there are not known
    method_values_elsewhere: Tuple[Tuple[str, str], ...] = ()
    #: the holder route (``holder_route``): ``Class.method() of path`` that scales through the
    #: stored attribute as a GradScaler-or-None holder, which ``attribute`` names now
    holder: str = ""
    #: why the one other file reading the stored attribute is no such holder ("" if unasked)
    holder_refusal: str = ""

    def alone(self) -> "CarrierFacts":
        """These facts without the sharing (a component whose plan was dropped)."""
        return replace(self, shared=(), borrowed=(), attribute="", holder="", holder_refusal="")


def carrier_facts(by_path: Dict[str, ModuleSummary], definitions: Any) -> Dict[str, CarrierFacts]:
    """The facts for every indexed file that stores apex.amp on an attribute
    (``definitions``: ``repo_plan._Definitions``, which also reads the files the index left
    out)."""
    facts: Dict[str, CarrierFacts] = {}
    walked: List[Tuple[str, ModuleSummary]] = []
    for path, summary in by_path.items():
        if not summary.amp_stores:
            continue
        if not walked:
            walked = walked_files(by_path, definitions)
        called: Set[Tuple[str, str]] = set()
        elsewhere: Set[str] = set()
        methods = set().union(*summary.class_members.values())
        method_calls: Set[Tuple[str, int, Tuple[str, ...], bool, str]] = set()
        reading: Set[Tuple[str, str]] = set()
        values: Set[Tuple[str, str]] = set()
        for other_path, other in walked:
            if other_path == path:
                continue
            for method in methods & set(other.attribute_calls):
                method_calls.update((method, *slots, other.shown) for slots in other.attribute_calls[method])
            values.update((method, other.shown) for method in methods & other.attribute_values)
            for cls, members in other.class_members.items():
                if summary.amp_stores & other.definition_attributes.get(cls, set()):
                    reading.update((method, other.shown) for method in methods & members)
            if other.object_attributes & summary.amp_stores:
                elsewhere.add(other.shown)
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
                if summary.amp_stores & _reads_through(definitions, found):
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
                if summary.amp_stores & _reads_through(definitions, (target, name)):
                    readers.add((name, star.shown))
        facts[path] = CarrierFacts(
            tuple(sorted(called)), tuple(sorted(readers)), read_elsewhere=tuple(sorted(elsewhere)),
            method_calls_elsewhere=tuple(sorted(method_calls)), methods_reading_elsewhere=tuple(sorted(reading)),
            method_values_elsewhere=tuple(sorted(values)),
        )
    return facts


def reached_definitions(definitions: Any, item: Tuple[str, str]) -> Iterator[Tuple[Tuple[str, str], ModuleSummary]]:
    """``item`` (path, top-level name) and every definition of the repository it calls, itself
    or deeper (its file's, and imported ones), each once with its file's summary."""
    seen: Set[Tuple[str, str]] = set()
    work = [item]
    while work:
        current = work.pop()
        if current in seen:
            continue
        seen.add(current)
        path, name = current
        summary = definitions.summary(path)
        if summary is None:
            continue
        yield current, summary
        work.extend((path, local) for local in summary.local_calls.get(name, ()))
        for call in summary.calls:
            if call.owner == name:
                callee = definitions.find(call.module, call.name, path, anywhere=True)
                if callee is not None:
                    work.append(callee)


def _reads_through(definitions: Any, item: Tuple[str, str]) -> Set[str]:
    """The attribute names the definition ``item`` reads, with those of every definition of
    the repository it calls (its file's, and imported ones), and of its file's module level."""
    found: Set[str] = set()
    for (_path, name), summary in reached_definitions(definitions, item):
        found |= summary.definition_attributes.get(name, set()) | summary.definition_attributes.get(MODULE_LEVEL, set())
    return found


def _reads(definitions: Any, path: str, attributes: Set[str]) -> bool:
    summary = definitions.summary(path)
    return summary is not None and bool(summary.loaded_attributes & attributes)


def share_carriers(
    by_path: Dict[str, ModuleSummary], definitions: Any, facts: Dict[str, CarrierFacts], planned: Set[str]
) -> List[Tuple[str, ...]]:
    """Join the launchers that hand their carrier to a function of another file that reads
    the stored attribute through a parameter (``train_model(args, ...)`` of a sibling
    script, which scales through ``args.amp``): ``facts`` gain the shared functions, the
    calls to check in each launcher and one attribute name for the GradScaler; the joined
    files are returned, one tuple per component (``planned``: files already in another
    component, which are left alone).  A function some other file uses without storing
    apex.amp on that attribute (or as a module's attribute) is not shared: ``unshared`` says
    why, and the per-file route refuses with it."""
    parent: Dict[str, str] = {}

    def root(p: str) -> str:
        while parent.setdefault(p, p) != p:
            p = parent[p]
        return p

    for path, summary in sorted(by_path.items()):
        if path not in facts:
            continue
        shared: List[str] = []
        unshared: Dict[str, str] = {}
        borrowers: List[Tuple[str, str, str, int, str]] = []  # (path, local, file, position, name)
        for attribute in sorted(summary.amp_stores):
            for function in sorted(summary.functions):
                carriers = {n for n, a in summary.name_attributes.get(function, ()) if a == attribute}
                positional = summary.parameters.get(function, ((), ()))[0]
                if len(carriers) != 1 or not carriers <= set(positional):
                    continue  # the per-file route says why (not read through one parameter)
                param = next(iter(carriers))
                users, why = users_of(walked_files(by_path, definitions, (function,)), definitions, path, function)
                if not users and not why:
                    continue
                for user_path, _local in users:
                    user = by_path.get(user_path)
                    if user is None or attribute not in user.amp_stores:
                        shown = user.shown if user is not None else definitions.summary(user_path).shown
                        why = (f"{function}() is also called from {shown}, which stores no apex.amp as "
                               f".{attribute} on what it hands it as {param}, so no GradScaler would be there")
                    elif user_path in planned or path in planned:
                        why = f"{function}() is also called from {user.shown}, a file of another GradScaler plan"
                    if why:
                        break
                if why:
                    unshared[function] = why
                    for user_path, local in users:
                        if user_path in facts:
                            unlent = facts[user_path].unlent + (
                                (local, f"{local}() of {summary.shown} reads .{attribute} but cannot be given the "
                                        f"GradScaler: {why}"),
                            )
                            facts[user_path] = replace(facts[user_path], unlent=tuple(sorted(set(unlent))))
                    continue
                shared.append(function)
                borrowers += [(p, local, summary.shown, positional.index(param), param) for p, local in users]
        if unshared:
            facts[path] = replace(facts[path], unshared=tuple(sorted(unshared.items())))
        if not shared:
            continue
        facts[path] = replace(facts[path], shared=tuple(shared))
        for user_path, local, shown, position, param in borrowers:
            borrowed = set(facts[user_path].borrowed) | {(local, shown, position, param)}
            facts[user_path] = replace(facts[user_path], borrowed=tuple(sorted(borrowed)))
            parent[root(user_path)] = root(path)
    groups: Dict[str, List[str]] = {}
    for path in parent:
        groups.setdefault(root(path), []).append(path)
    components = [tuple(sorted(g)) for g in groups.values()]
    for group in components:
        taken = set().union(*(by_path[p].loaded_attributes for p in group))
        attribute = next((a for a in CARRIER_ATTRIBUTES if a not in taken), CARRIER_ATTRIBUTES[0])
        for path in group:
            facts[path] = replace(facts[path], attribute=attribute)
    return sorted(components)


def walked_files(
    by_path: Dict[str, ModuleSummary],
    definitions: Any,
    words: Optional[Iterable[str]] = None,
    importing: Optional[Set[str]] = None,
) -> List[Tuple[str, ModuleSummary]]:
    """Every walked file, with apex or not (a second run sees the same callers); with
    ``words``, of the files the index left out only those naming one of them (a file that
    never writes a name can neither import, call nor read it); with ``importing`` (real
    paths), of those only the ones that may import from one of these files (their import
    statements are read first, and a whole summary only where one may)."""
    unindexed: Iterable[str] = definitions.unindexed
    if words is not None:
        unindexed = frozenset().union(*(definitions.naming(word) for word in words))
    if importing is not None:
        unindexed = [p for p in unindexed if not definitions.imports_none_of(p, importing)]
    return list(by_path.items()) + [
        (p, s) for p in sorted(unindexed) for s in [definitions.summary(p)] if s is not None
    ]


def users_of(walked: List[Tuple[str, ModuleSummary]], definitions: Any, path: str,
           function: str) -> Tuple[List[Tuple[str, str]], str]:
    """The other files that name ``function`` of ``path`` (imported by name, or named after
    ``from that import *``), each with its local name; or why they cannot be followed (a
    call through the module's attribute)."""
    users: List[Tuple[str, str]] = []
    for other_path, other in walked:
        if other_path == path:
            continue
        for local, (module, name) in sorted(other.imports.items()):
            if name and definitions.find(module, name, other_path, anywhere=True) == (path, function):
                users.append((other_path, local))
        for call in other.calls:
            if "." in call.text and definitions.find(call.module, call.name, other_path, anywhere=True) == (
                path, function
            ):
                return [], f"{function}() is called as {call.text} in {other.shown}, which this route does not follow"
        if any(definitions.resolver.resolve(m, other_path) == path for m in other.star_imports):
            named = (other.identifiers | other.called_names) - (other.functions | other.classes)
            if function in named:
                users.append((other_path, function))
    return users, ""
