"""Positions of findings in the file as it was read.

Rules run one after another, each on the text the previous one left, so a rule reports
positions in an intermediate text: after the DDP rule dropped an import line, every later
line is one off.  ``LineMap`` maps lines of an edited text back to the text before the edit
(lines in unchanged stretches exactly, lines inside an edited stretch to the corresponding
line of what stood there), and ``to_original`` chains the maps of all edits of a run.
"""

from __future__ import annotations

import difflib
from dataclasses import replace
from typing import Dict, List, Sequence, Tuple

from .findings import Finding


class LineMap:
    """Line numbers (1-based) of ``new`` -> line numbers of ``old``."""

    def __init__(self, old: bytes, new: bytes) -> None:
        old_lines, new_lines = old.splitlines(), new.splitlines()
        self._old_count = len(old_lines)
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
        #: (new start, new end, old start, old end, unchanged), 0-based half-open ranges
        self._blocks: List[Tuple[int, int, int, int, bool]] = [
            (j1, j2, i1, i2, tag == "equal") for tag, i1, i2, j1, j2 in matcher.get_opcodes() if j2 > j1
        ]

    def to_old(self, line: int) -> Tuple[int, bool]:
        """The line of ``old`` that ``line`` of ``new`` stands for, and whether the line
        itself is unchanged (then the column is still right)."""
        index = line - 1
        for new_start, new_end, old_start, old_end, unchanged in self._blocks:
            if new_start <= index < new_end:
                if unchanged:
                    return old_start + (index - new_start) + 1, True
                if old_end == old_start:  # inserted: the line it was inserted before
                    return min(old_start + 1, max(self._old_count, 1)), False
                return old_start + min(index - new_start, old_end - old_start - 1) + 1, False
        return line, False  # past the end (a final line without newline)


def to_original(findings: Sequence[Finding], versions: Sequence[int], texts: Sequence[bytes]) -> List[Finding]:
    """``findings[i]`` was reported on ``texts[versions[i]]``; return them with positions in
    ``texts[0]``."""
    maps: Dict[int, LineMap] = {}  # made for the edits a finding is moved across only

    def map_of(k: int) -> LineMap:
        found = maps.get(k)
        if found is None:
            found = maps[k] = LineMap(texts[k - 1], texts[k])
        return found

    moved: List[Finding] = []
    for finding, version in zip(findings, versions):
        line, col, exact = finding.line, finding.col, True
        if line > 0:
            for k in range(version, 0, -1):
                line, same = map_of(k).to_old(line)
                exact = exact and same
        if not exact:
            col = 1
        moved.append(finding if (line, col) == (finding.line, finding.col) else replace(finding, line=line, col=col))
    return moved
