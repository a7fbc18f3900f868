"""The plan's fact for the per-file route of ``rules/_amp_param``: which top-level functions
of a file, handed apex.amp (or None) by a call in that same file, other walked files refer to.

That route makes the function's apex.amp parameter carry a GradScaler; a call from another
file (``from train import run_epoch``, ``import train; train.run_epoch(...)``, a star
import) would still hand it apex.amp or None, so such a function keeps the shim.  Read from
the import summaries the index already holds; a walked file without apex is summarised only
when its text names both the function's module and the function (or holds a star import).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Dict, Set, Tuple

from .repo_index import ModuleSummary


def add_outside_users(plan, by_path: Dict[str, ModuleSummary], unindexed: Dict[str, Tuple[str, bytes]], definitions):
    """``plan`` with ``FilePlan.used_elsewhere`` set for the files whose functions given
    apex.amp in the file are referred to from other walked files."""
    from .repo_plan import FilePlan

    for path, summary in sorted(by_path.items()):
        names = summary.amp_local_calls & summary.functions
        if not names:
            continue
        found = _users(path, names, by_path, unindexed, definitions)
        if found:
            plan.files[path] = replace(plan.files.get(path, FilePlan()), used_elsewhere=tuple(sorted(found.items())))
    return plan


def _stem(path: str) -> str:
    """The last part of the module name ``path`` is imported by."""
    base, _ = os.path.splitext(os.path.basename(path))
    return os.path.basename(os.path.dirname(path)) if base == "__init__" else base


def _users(path: str, names: Set[str], by_path, unindexed, definitions) -> Dict[str, str]:
    """function of ``path`` -> ``shown:line`` of the first other walked file referring to it."""
    stem = _stem(path)
    needle = stem.encode()
    others = [(p, s) for p, s in sorted(by_path.items()) if p != path]
    for other_path, (_shown, source) in sorted(unindexed.items()):
        if other_path == path or needle not in source:
            continue
        if b"import *" in source or any(n.encode() in source for n in names):
            summary = definitions.summary(other_path)
            if summary is not None:
                others.append((other_path, summary))
    found: Dict[str, str] = {}
    for other_path, other in others:
        for text, line in other.import_lines.items():
            if stem not in text.split("."):
                continue
            for name in sorted(names - set(found)):
                at = _refers(text, line, other_path, other, path, name, definitions)
                if at is not None:
                    found[name] = f"{other.shown}:{at}"
    return found


def _refers(text: str, line: int, importer: str, summary: ModuleSummary, path: str, name: str, definitions):
    """The line where the import ``text`` of ``importer`` lets it use ``name`` of ``path``
    (its first call there, else the import), or None when it does not."""
    resolve = definitions.resolver.resolve
    module, _, last = text.rpartition(".")
    if last == "*":
        return line if not name.startswith("_") and resolve(module, importer) == path else None
    if module and last == name and definitions.find(module, last, importer) == (path, name):
        return _first_call(summary, lambda c: (c.module, c.name) == (module, name), line)
    if name in summary.loaded_attributes and resolve(text, importer) == path:
        return _first_call(summary, lambda c: c.name == name and resolve(c.module, importer) == path, line)
    return None


def _first_call(summary: ModuleSummary, matches, default: int) -> int:
    return next((c.line for c in summary.calls if matches(c)), default)


