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

import os
import re
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from .glue_calls import GlueEdit, fresh_name, glue_edit
from .glue_loss_ids import glue_loss_ids
from .repo_index import MODULE_LEVEL, ModuleSummary
from .site_words import in_definition

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
    #: with one GradScaler per loss id: (helper, parameter) given as each helper's
    #: ``loss_id``, a number below N at every call of the launcher
    loss_ids: Tuple[Def, ...] = ()

    @property
    def changes(self) -> bool:
        return True

    @property
    def inserts(self) -> Tuple[Tuple[int, int], ...]:
        return (self.edit.unpack,)


@dataclass(frozen=True)
class GlueRefusal:
    """Why a launcher without apex.amp that calls the factory and the helpers cannot hand
    the GradScaler on: said at the factory's initialize and at each helper's sites."""

    reason: str
    #: where: ``train.py (train)``; the helpers it calls
    where: str
    helpers: Tuple[Def, ...]


def glue_route(
    path: str,
    factory: str,
    by_path: Dict[str, ModuleSummary],
    callers: Dict[Def, List[Tuple[Def, int]]],
    others: Sequence[Tuple[str, str, bytes]],
    definitions,
    scaler_names: Sequence[str],
    apex_free: Dict[str, bytes],
    losses: int = 1,
) -> Union[None, GlueRefusal, GlueRoute]:
    """The glue route of the factory ``factory`` of ``path``; None when the shape is not
    there (no helper is called from the function that calls the factory), else the route
    or why it cannot be proven.  The launcher is a walked file the index left out, or an
    indexed one without apex.amp (``apex_free``: it names apex in a comment).  With
    ``losses`` > 1 (``num_losses``) the list of GradScalers is handed on (``glue_loss_ids``)."""
    why = _glue_route(path, factory, by_path, callers, others, definitions, scaler_names, apex_free, losses)
    if not isinstance(why, tuple):
        return why
    reason, where, helpers = why
    return GlueRefusal(reason, where, helpers)


def _glue_route(path, factory, by_path, callers, others, definitions, scaler_names, apex_free, losses):
    """``glue_route``, a refusal as (reason, where, helpers)."""
    unindexed = {p: (shown, source) for p, shown, source in others}
    unindexed.update({p: (by_path[p].shown, source) for p, source in apex_free.items()})
    # calls from files without apex.amp are followed here, through their text
    callers = {d: [c for c in calls if c[0][0] not in apex_free] for d, calls in callers.items()}
    using = sorted((p, owner) for p, s in by_path.items() if p != path for owner in s.owners_needing_scaler())
    importers = {p: entry for p, entry in unindexed.items() if _imports_module_of(entry[1], path)}
    factory_calls = _calls_in(importers, (path, factory), by_path, definitions, direct=True)
    # the factory's calls from a function that also calls a definition using amp
    launchers = {p: unindexed[p] for p in {c[0] for c in factory_calls}}
    near = [f[:2] for item in using for f in _calls_in(launchers, item, by_path, definitions)]
    joined = [c for c in factory_calls if c[:2] in near]
    if not joined:
        return None
    # a candidate: every call of the helpers counts now, wherever it is
    calls_of = {item: _calls_in(unindexed, item, by_path, definitions) for item in using}
    launcher, function, factory_line, factory_texts = joined[0]
    shown, source = unindexed[launcher]
    summary = definitions.summary(launcher)
    where = f"{shown} ({function})"
    helpers = tuple(i for i in using if any(f[:2] == (launcher, function) for f in calls_of[i]))
    why = _unproven(path, factory, joined, factory_calls, using, helpers, calls_of, callers, by_path, unindexed,
                    summary, definitions, others)
    if why:
        return why, where, helpers
    helper_texts = {t: item[1] for item in helpers for _p, _o, _line, texts in calls_of[item] for t in texts}
    hpath = helpers[0][0]
    used = by_path[hpath].identifiers
    keyword = next((n for n in scaler_names if n not in used), "apexcompat_" + scaler_names[-1])
    name = keyword if fresh_name(source, (keyword,)) else fresh_name(source, scaler_names)
    if name is None:
        return f"{shown} already uses every name the GradScaler could take there", where, helpers
    edit = glue_edit(source, shown, function, factory_line, factory_texts, helper_texts, name, keyword)
    if isinstance(edit, str):
        return edit, where, helpers
    if losses <= 1:
        return GlueRoute(launcher, shown, function, helpers, edit, factory)
    ids = glue_loss_ids(source, helper_texts, helpers, by_path, losses)
    if isinstance(ids, str):
        return (f"amp.initialize keeps {losses} loss scalers there (num_losses={losses}), one per loss id, and "
                f"{ids}"), where, helpers
    return GlueRoute(launcher, shown, function, helpers, replace(edit, first="[0]"), factory, ids)


def _unproven(path, factory, joined, factory_calls, using, helpers, calls_of, callers, by_path, unindexed, summary,
              definitions, others) -> str:
    """Why the helpers' calls and the factory's call in the launcher are not the proven
    shape ("" when they are)."""
    from .repo_plan import _callers_elsewhere, handed_away

    launcher, function = joined[0][:2]
    shown = unindexed[launcher][0]
    where = f"{shown} ({function})"
    if len(joined) != 1:
        return f"{factory}() is called from {len(joined)} functions that also call the helpers scaling the losses"
    if summary is None or function == MODULE_LEVEL or function not in summary.functions:
        return f"{factory}() is called in {shown} outside a top-level function"
    if sum(1 for c in factory_calls if c[0] == launcher) != 1:
        return f"{shown} calls {factory}() more than once"
    if summary.star_imports:
        return f"{shown} imports names with `*`: the calls it makes cannot all be known"
    for item in using:
        hpath, name = item
        own = by_path[hpath]
        if item not in helpers:
            return f"{name} of {own.shown} uses amp too, and {where}, which would hand the GradScaler on, does not call it"
        if name not in own.functions:
            return f"{name} of {own.shown}, called from {where}, is not a top-level function"
        if callers.get(item) or any(name in called for called in own.local_calls.values()):
            return f"{name} of {own.shown} is also called from files with apex.amp, which {where} does not reach"
        if handed_away(own, name, own, name) or any(
            attr == name and handed_away(other, local, own, name)
            for other in list(by_path.values()) + [summary]
            for local, (_module, attr) in other.imports.items()
        ):
            return f"{name} of {own.shown} is used other than by calls"
        valued = [o for o in _callers_elsewhere(name, hpath, others, definitions) if not o[2]]
        if valued:
            return f"{name} of {own.shown} is subclassed, passed on or stored in {valued[0][1]}, a file without apex.amp"
        for other_path, other_function, line, _texts in calls_of[item]:
            if (other_path, other_function) != (launcher, function):
                where = in_definition(unindexed[other_path][0], other_function, definitions.summary(other_path))
                return f"{name} of {own.shown} is also called from {where}, where no GradScaler exists"
    if len({h[0] for h in helpers}) != 1:
        return f"the helpers {where} calls are in several files"
    return ""


def _imports_module_of(source: bytes, path: str) -> bool:
    """Whether ``source`` holds an import statement that may bind a name of the module at
    ``path`` itself: one naming that module (``from .build import make``, ``from . import
    build``, ``import nets.build``), or, for a package's ``__init__.py``, a relative one of
    the package (``from . import make``).  Only the factory's callers are looked for among
    these (a factory is often a script's ``main``, a name most files of a large tree call;
    on DeepLearningExamples every relative import matched, 479 files); a launcher that
    imports the factory only through a package re-exporting it is not seen by the route."""
    stem = os.path.splitext(os.path.basename(path))[0]
    package = stem == "__init__"
    if package:
        stem = os.path.basename(os.path.dirname(path))
    elif stem.encode() not in source:
        return False  # the search below costs a scan of every walked file per factory
    word = rb"\b" + re.escape(stem).encode() + rb"\b"
    pattern = (
        rb"^[ \t]*(?:from[ \t]+[\w.]*" + word  # from the module itself, absolute or relative
        + (rb"|from[ \t]+\.+[ \t]+import\b" if package else b"")  # the package, relative
        + rb"|from[ \t]+[\w.]+[ \t]+import[ \t]*\([^)]*" + word  # the module among parenthesized names
        + rb"|(?:from[ \t]+[\w.]+[ \t]+)?import[ \t](?:[^\n]|\\\n)*" + word + rb")"  # one logical line
    )
    return re.search(pattern, source, re.M) is not None


def _calls_in(
    unindexed: Dict[str, Tuple[str, bytes]], item: Def, by_path, definitions, direct: bool = False
) -> List[Tuple[str, str, int, Set[str]]]:
    """(file, calling definition, line, call texts) of each call of ``item`` in the files the
    index left out, one per calling definition and line; ``direct``: only the calls naming
    it through its own module (``_imports_module_of``), so that the files a call names
    otherwise are not read to follow re-exports."""
    found: Dict[Tuple[str, str, int], Set[str]] = {}
    needle = item[1].encode()
    for other_path, (_shown, source) in sorted(unindexed.items()):
        if needle not in source:
            continue
        summary = definitions.summary(other_path)
        if summary is None:
            continue
        for call in summary.calls:
            if direct and definitions.resolver.resolve(call.module, other_path) != item[0]:
                continue
            if definitions.find(call.module, call.name, other_path) == item:
                found.setdefault((other_path, call.owner, call.line), set()).add(call.text)
    return [(p, o, line, texts) for (p, o, line), texts in sorted(found.items())]


def glue_helpers(routes: Dict[str, Optional[GlueRoute]]) -> Set[Def]:
    return {h for route in routes.values() if route is not None for h in route.helpers}
