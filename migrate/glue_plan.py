"""The plan's glue route: a model factory whose only caller is a file without apex.amp that
also calls the helper scaling the loss (``glue_calls`` makes that file's edits).

``repo_plan._factory_routes`` asks :func:`glue_route` about a factory no file with apex.amp
calls.  The route is proven when, besides the factory's own file (which scales nothing),
every definition of the indexed files that uses amp is a top-level function of one file
(the helpers) whose every call in the repository is in one top-level function of one file
without apex.amp, which calls the factory once, as a statement of its own body, before
them; no file hands a helper or that function on as a value; the launcher imports no names
with ``*``.  The helpers then take the GradScaler as a required keyword parameter (each of
their calls passes it), the factory returns it, the launcher binds and hands it on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from .glue_calls import GlueEdit, fresh_name, glue_edit
from .repo_index import MODULE_LEVEL, ModuleSummary

Def = Tuple[str, str]


@dataclass(frozen=True)
class GlueRoute:
    """A factory's GradScaler handed through a file without apex.amp to the helpers."""

    #: the launcher's real path and its path as shown, the function joining the calls
    path: str
    shown: str
    function: str
    #: the helpers that take the GradScaler (file path, function name)
    helpers: Tuple[Def, ...]
    #: the launcher's edits, and the factory they come from (for the finding)
    edit: GlueEdit
    factory: str

    @property
    def changes(self) -> bool:
        return True

    @property
    def inserts(self) -> Tuple[Tuple[int, int], ...]:
        return (self.edit.unpack,)


def glue_route(
    path: str,
    factory: str,
    by_path: Dict[str, ModuleSummary],
    callers: Dict[Def, List[Tuple[Def, int]]],
    others: Sequence[Tuple[str, str, bytes]],
    definitions,
    scaler_names: Sequence[str],
) -> Union[None, str, GlueRoute]:
    """The glue route of the factory ``factory`` of ``path``; None when the shape is not
    there (no helper is called from the function that calls the factory), else the route
    or why it cannot be proven."""
    from .repo_plan import handed_away

    unindexed = {p: (shown, source) for p, shown, source in others}
    using = sorted((p, owner) for p, s in by_path.items() if p != path for owner in s.owners_needing_scaler())
    calls_of = {item: _calls_in(unindexed, item, by_path, definitions) for item in using}
    # the factory's calls from a function that also calls a definition using amp
    joined = [
        c for c in _calls_in(unindexed, (path, factory), by_path, definitions)
        if any((f[0], f[1]) == (c[0], c[1]) for found in calls_of.values() for f in found)
    ]
    if not joined:
        return None
    launcher, function, factory_line, factory_texts = joined[0]
    shown, source = unindexed[launcher]
    summary = definitions.summary(launcher)
    if len(joined) != 1:
        return f"{factory}() is called from {len(joined)} functions that also call the helpers scaling the losses"
    if summary is None or function == MODULE_LEVEL or function not in summary.functions:
        return f"{factory}() is called in {shown} outside a top-level function"
    if sum(1 for c in _calls_in(unindexed, (path, factory), by_path, definitions) if c[0] == launcher) != 1:
        return f"{shown} calls {factory}() more than once"
    helpers: List[Def] = []
    helper_texts: Dict[str, str] = {}
    for item in using:
        found = calls_of[item]
        if not any(f[0] == launcher and f[1] == function for f in found):
            continue
        helpers.append(item)
        for _p, _o, _line, texts in found:
            helper_texts.update({t: item[1] for t in texts})
    where = f"{shown} ({function})"
    for item in using:
        hpath, name = item
        own = by_path[hpath]
        if item not in helpers:
            return (f"{name} of {own.shown} uses amp too, and is not called from {where}, which hands the GradScaler "
                    "on to the helpers it calls")
        if name not in own.functions or name == MODULE_LEVEL:
            return f"{name} of {own.shown}, called from {where}, is not a top-level function"
        if callers.get(item) or any(name in called for called in own.local_calls.values()):
            return f"{name} of {own.shown} is also called from files with apex.amp, which {where} does not reach"
        if handed_away(own, name, own, name) or any(
            attr == name and handed_away(other, local, own, name)
            for other in by_path.values()
            for local, (_module, attr) in other.imports.items()
        ):
            return f"{name} of {own.shown} is used other than by calls"
        for other_path, _function, line, _texts in _calls_in(unindexed, item, by_path, definitions):
            if (other_path, _function) != (launcher, function):
                return f"{name} of {own.shown} is also called from {unindexed[other_path][0]}:{line}, which has no GradScaler"
        for local, (module, attr) in summary.imports.items():
            if attr == name and definitions.find(module, attr, launcher) == item and handed_away(
                summary, local, own, name
            ):
                return f"{name} of {own.shown} is used other than by calls in {shown}"
    if summary.star_imports:
        return f"{shown} imports names with `*`: the calls it makes cannot all be known"
    files = {h[0] for h in helpers}
    if len(files) != 1:
        return f"the helpers {where} calls are in several files"
    hpath = files.pop()
    used = by_path[hpath].identifiers
    keyword = next((n for n in scaler_names if n not in used), "apexcompat_" + scaler_names[-1])
    name = keyword if fresh_name(source, (keyword,)) else fresh_name(source, scaler_names)
    if name is None:
        return f"{shown} already uses every name the GradScaler could take there ({', '.join(scaler_names)})"
    edit = glue_edit(source, shown, function, factory_line, factory_texts, helper_texts, name, keyword)
    if isinstance(edit, str):
        return edit
    return GlueRoute(launcher, shown, function, tuple(sorted(helpers)), edit, factory)


def _calls_in(
    unindexed: Dict[str, Tuple[str, bytes]], item: Def, by_path, definitions
) -> List[Tuple[str, str, int, Set[str]]]:
    """(file, calling definition, line, call texts) of each call of ``item`` in the files the
    index left out, one per calling definition and line."""
    found: Dict[Tuple[str, str, int], Set[str]] = {}
    needle = item[1].encode()
    for other_path, (_shown, source) in sorted(unindexed.items()):
        if needle not in source:
            continue
        summary = definitions.summary(other_path)
        if summary is None:
            continue
        for call in summary.calls:
            if definitions.find(call.module, call.name, other_path) == item:
                found.setdefault((other_path, call.owner, call.line), set()).add(call.text)
    return [(p, o, line, texts) for (p, o, line), texts in sorted(found.items())]


def glue_helpers(routes: Dict[str, Optional[GlueRoute]]) -> Set[Def]:
    return {h for route in routes.values() if route is not None for h in route.helpers}
