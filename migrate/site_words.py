"""How a plan's finding names a place in another file: by the file and the top-level
definition holding it, never by its line.  A first run inserts TODO lines into files, so a
quoted line would move and a second run would word the same refusal differently."""

from __future__ import annotations

from typing import Optional

from .repo_index import MODULE_LEVEL, ModuleSummary


def in_definition(shown: str, owner: str, summary: Optional[ModuleSummary] = None) -> str:
    """``train.py (in main())``, ``model.py (in class Net)``; the file alone at its module
    level; ``(in owner)`` where ``summary`` does not say what the definition is."""
    if not owner or owner == MODULE_LEVEL:
        return shown
    if summary is None:
        return f"{shown} (in {owner})"
    if owner in summary.functions:
        return f"{shown} (in {owner}())"
    if owner in summary.classes:
        return f"{shown} (in class {owner})"
    return f"{shown} (in {owner})"
