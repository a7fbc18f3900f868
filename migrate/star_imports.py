"""Star imports of the repository's own modules, resolved where Python's answer is certain.

``from train.tools.fitter import *`` binds, in the importing module, every name of the
imported module's ``__all__`` when that is a static list or tuple of strings, else every
public name its top level binds (its defs, classes, imports, assignments, and what its own
star imports bind).  A later binding replaces an earlier one, so a name a file uses comes
from the *last* star import that may bind it, and only when no statement of the file binds
it itself.

The plan (``repo_plan``) reads a star-imported name as if the file imported it by name
(``from train.tools.fitter import Fitter``) only when that is proven: the file binds the
name nowhere else, the last star import that binds it is known, and every star import after
it is known not to bind it.  A module outside the repository, a dynamic ``__all__`` or a
cycle of star imports makes the answer unknown; then ``why_not`` says so, for the reasons.
Pure data from the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, List, Optional, Tuple

from .repo_index import MODULE_LEVEL, ModuleResolver, ModuleSummary

#: what a star import does with a name: binds it (the module it comes from), does not, or
#: an unknown answer (why)
BINDS, NOT_BOUND, UNKNOWN = "binds", "not bound", "unknown"
Answer = Tuple[str, str]  # (BINDS, module) | (NOT_BOUND, "") | (UNKNOWN, why)


class StarImports:
    """Answers for the files of one run (``raw`` gives a file's summary as the index read it)."""

    def __init__(self, raw: Callable[[str], Optional[ModuleSummary]], resolver: ModuleResolver) -> None:
        self.raw = raw
        self.resolver = resolver
        self._binder: Dict[Tuple[str, str, int], Answer] = {}
        self._pending: set = set()

    def binder(self, path: str, name: str, after: int = 0) -> Answer:
        """Which star import of the file ``path``, among those after line ``after``, binds
        ``name`` last: its module (as written), none, or unknown."""
        key = (path, name, after)
        if key in self._binder:
            return self._binder[key]
        if key in self._pending:
            return (UNKNOWN, "its star imports import each other")
        self._pending.add(key)
        try:
            answer = self._last_binder(path, name, after)
        finally:
            self._pending.discard(key)
        self._binder[key] = answer
        return answer

    def _last_binder(self, path: str, name: str, after: int) -> Answer:
        summary = self.raw(path)
        if summary is None:
            return (UNKNOWN, f"{path} cannot be read")
        stars = sorted(
            (summary.import_lines.get(f"{m}.*", 0), m) for m in summary.star_imports
        )
        for line, module in reversed(stars):
            if line <= after:
                break
            kind, detail = self.exports(module, path, name)
            if kind != NOT_BOUND:
                return (kind, module if kind == BINDS else detail)
        return (NOT_BOUND, "")

    def exports(self, module: str, importer: str, name: str) -> Answer:
        """Whether ``from module import *`` in ``importer`` binds ``name``."""
        target = self.resolver.resolve(module, importer)
        summary = self.raw(target) if target is not None else None
        if summary is None:
            return (UNKNOWN, f"`from {module} import *` imports a module outside the repository")
        if summary.all_dynamic:
            return (UNKNOWN, f"the __all__ of {summary.shown} (star-imported) is not a static list of names")
        if summary.all_names is not None:
            return (BINDS, module) if name in summary.all_names else (NOT_BOUND, "")
        if name.startswith("_"):
            return (NOT_BOUND, "")
        if name in summary.functions | summary.classes | set(summary.imports) | summary.module_bound:
            return (BINDS, module)
        kind, detail = self.binder(target, name)
        return (BINDS, module) if kind == BINDS else (kind, detail)

    def source(self, path: str, name: str) -> Answer:
        """Where ``name``, used in ``path``, comes from through its star imports: (BINDS, the
        module to import it from by name) only when no statement of the file binds it
        itself and the last star import binding it is known."""
        summary = self.raw(path)
        if summary is None or not summary.star_imports:
            return (NOT_BOUND, "")
        if name in summary.functions | summary.classes | set(summary.imports) | summary.bound_names:
            return (NOT_BOUND, "")  # the file's own binding (shadowing the star import or not)
        return self.binder(path, name)

    def why_not(self, path: str, name: str) -> Optional[str]:
        """Why ``name`` of ``path`` is not read through its star imports, when one may bind it."""
        summary = self.raw(path)
        if summary is None or not summary.star_imports:
            return None
        if name in summary.bound_names:
            return f"{summary.shown} also binds the name {name} itself"
        kind, detail = self.binder(path, name)
        return detail if kind == UNKNOWN else None

    def resolved(self, summary: ModuleSummary) -> ModuleSummary:
        """``summary`` with each name it uses that a star import binds, as proven, read as
        an import by name: in ``imports``, its calls in ``calls``."""
        if not summary.star_imports:
            return summary
        found: Dict[str, Tuple[str, str]] = {}
        for name in sorted(summary.identifiers | summary.called_names):
            kind, module = self.source(summary.path, name)
            if kind == BINDS:
                found[name] = (module, name)
        if not found:
            return summary
        calls: List = [
            replace(c, module=found[c.name][0]) for c in summary.plain_calls if c.name in found and not _early(c, summary)
        ]
        local_calls = {owner: called - set(found) for owner, called in summary.local_calls.items()}
        return replace(
            summary,
            imports={**summary.imports, **found},
            calls=summary.calls + calls,
            local_calls=local_calls,
            module_calls=summary.module_calls - set(found),
        )


def _early(call, summary: ModuleSummary) -> bool:
    """A module-level call before every star import ran (a NameError, or another binding)."""
    if call.owner != MODULE_LEVEL:
        return False
    lines = [summary.import_lines.get(f"{m}.*", 0) for m in summary.star_imports]
    return call.line < max(lines, default=0)
