"""What running one script of the repository may execute.

Starting from every top-level definition of the script and its module-level code, the walk
follows what each reached definition calls (in its own file and, through its imports, in
others), what importing each reached file runs outside its ``__main__`` guard, and every
definition a reached file hands on as a value.  A module name several files of the repository
answer to (which one an import finds depends on ``sys.path``) is followed into each of them.
The caller's checks decide what may not be reached; a file that cannot be read or
star-imports a module of the repository stops the walk (it cannot be followed)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, List, Optional, Set, Tuple

from .repo_index import MODULE_LEVEL, ModuleSummary

Def = Tuple[str, str]  # (file path, top-level definition name)
#: (path, summary) -> why that file may not be reached, else None
FileCheck = Callable[[str, ModuleSummary], Optional[str]]
#: (path, summary, definition) -> why that definition may not be reached, else None
ItemCheck = Callable[[str, ModuleSummary, str], Optional[str]]


def what_a_run_reaches(
    start: str, definitions: Any, file_check: FileCheck, item_check: ItemCheck, follow_stars: bool = False,
    seeds: Optional[Iterable[Def]] = None,
) -> Optional[str]:
    """None when no file and no definition a run of ``start`` may reach fails its check;
    otherwise the first reason found.  ``follow_stars``: a star import of a repository
    module reaches every definition of it, instead of stopping the walk.  ``seeds``: the
    definitions one run's module-level code of ``start`` names (``exclusive_runs``), walked
    instead of that code and every definition of ``start``."""
    resolver = definitions.resolver
    seen: Set[Def] = set()
    files: Set[str] = set()
    work: List[Def] = []

    def each_definition(module: str, name: str, importer: str) -> None:
        """Queue ``module.name`` in every file an ambiguous ``module`` may denote (one that
        binds no such name fails the import there: nothing runs)."""
        for target in resolver.candidates(module, importer):
            found = definitions.find_at(target, name, anywhere=True)
            if found is not None:
                work.append(found)

    def ambiguous(module: str, importer: str) -> bool:
        return len(resolver.candidates(module, importer)) > 1

    def reach_file(path: str) -> Optional[str]:
        """Queue what importing ``path`` runs and hands on; why not, when it cannot be followed."""
        if path in files:
            return None
        files.add(path)
        summary = definitions.summary(path)
        if summary is None:
            return f"{path} cannot be read"
        why = file_check(path, summary)
        if why is not None:
            return why
        for module in sorted(summary.star_imports):
            target = resolver.resolve(module, path)
            if target is not None and not follow_stars:
                return f"{summary.shown} star-imports {module}"
            named = definitions.summary(target) if target is not None else None
            if target is not None and named is None:
                return f"{summary.shown} star-imports {module}, which cannot be read"
            if named is not None:
                work.extend((target, name) for name in named.functions | named.classes)
                why = reach_file(target)
                if why is not None:
                    return why
        own = summary.functions | summary.classes
        if seeds is None or path != start:
            work.append((path, MODULE_LEVEL))
        work.extend((path, name) for name in summary.module_calls | (summary.escaping & own))
        for local, (module, attr) in summary.imports.items():
            # importing runs the module (and a submodule imported by name)
            for dotted in (module, f"{module}.{attr}") if attr else (module,):
                for target in resolver.candidates(dotted, path):
                    why = reach_file(target)
                    if why is not None:
                        return why
            if not attr or local not in summary.escaping:
                continue  # an imported name is followed where it is called
            # a value of a repository module handed on was built by that module's own code,
            # reached above (a function bound to another name is one of its escaping names)
            if ambiguous(module, path):
                each_definition(module, attr, path)
                continue
            item = definitions.find(module, attr, path, anywhere=True)
            if item is not None:
                work.append(item)
        # a function of a repository module read as ``module.function`` (handed on as a value:
        # ``runner.override_backward(default_backward.amp_backward)``) may run
        for local, attribute in {pair for pairs in summary.name_attributes.values() for pair in pairs}:
            if local not in summary.imports:
                continue
            module, attr = summary.imports[local]
            for target in resolver.candidates(f"{module}.{attr}" if attr else module, path):
                read = definitions.summary(target)
                if read is not None and attribute in read.functions | read.classes:
                    work.append((target, attribute))
        return None

    started = definitions.summary(start)
    if started is None:
        return f"{start} cannot be read"
    if seeds is None:
        work.extend((start, name) for name in {MODULE_LEVEL} | started.functions | started.classes)
    else:
        work.extend(seeds)
    why = reach_file(start)
    if why is not None:
        return why
    while work:
        item = work.pop()
        if item in seen:
            continue
        seen.add(item)
        path, name = item
        why = reach_file(path)
        if why is not None:
            return why
        summary = definitions.summary(path)
        if summary is None:
            return f"{path} cannot be read"
        why = item_check(path, summary, name)
        if why is not None:
            return why
        own = summary.functions | summary.classes
        work.extend((path, callee) for callee in summary.local_calls.get(name, set()) & own)
        for call in summary.calls:
            if call.owner != name or (call.guarded and path != start):
                continue
            if ambiguous(call.module, path):
                each_definition(call.module, call.name, path)
                continue
            callee = definitions.find(call.module, call.name, path, anywhere=True)
            if callee is not None:
                work.append(callee)
                continue
            # a value of a repository module (``nms = amp.float_function(_C.nms)``, an instance,
            # a submodule's function) was made by code reached with its module
            for dotted in (call.module, f"{call.module}.{call.name}"):
                for target in resolver.candidates(dotted, path):
                    why = reach_file(target)
                    if why is not None:
                        return why
    return None
