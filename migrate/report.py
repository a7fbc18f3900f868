"""Render what a run found: findings as text (``path:line:col: APXnnn [*] message``, ``[*]``
marking what the tool fixes itself), JSON or GitHub annotations, the files ``--check`` /
``--diff`` would change (``would rewrite path``), the one-line summary, and the unified diff
of ``--diff``.  One reporter for every output format."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Sequence

from .codes import (
    BLOCKING,
    DIRTY,
    DRIVER_CODES,
    INTERNAL_ERROR,
    PARSE_ERROR,
    READ_ONLY,
    UNDECODABLE,
    UNREADABLE,
    UNUSED_SUPPRESSION,
    VENDORED_APEX,
    WRITE_FAILED,
)
from .color import PLAIN, Palette
from .findings import Finding

FORMATS = ("text", "json", "github")


@dataclass
class RunStats:
    """Counts behind the summary line and the exit status."""

    checked: int = 0
    parsed: int = 0
    changed: int = 0
    #: ``write``: files were rewritten; ``check``/``diff``: they would be
    mode: str = "write"
    findings: List[Finding] = field(default_factory=list)
    #: ``check``/``diff``: the files that would change, as shown, in walk order
    changed_paths: List[str] = field(default_factory=list)
    #: findings silenced by suppression comments
    suppressed: int = 0

    def count(self, *codes: str) -> int:
        return sum(1 for f in self.findings if f.code in codes)

    @property
    def manual_sites(self) -> int:
        return sum(1 for f in self.findings if f.code not in DRIVER_CODES and f.needs_manual_work())

    @property
    def internal_errors(self) -> int:
        return self.count(INTERNAL_ERROR)

    @property
    def blocked(self) -> int:
        return sum(1 for f in self.findings if f.code in BLOCKING)

    def exit_status(self) -> int:
        """1 while work is left (changes pending, manual sites), whatever else happened, so
        a rule that failed on one file never hides the others' work from CI; else 2 after an
        internal error; else 0."""
        if self.manual_sites or self.blocked:
            return 1
        if self.mode != "write" and self.changed:
            return 1
        if self.internal_errors:
            return 2
        return 0


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def summary_line(stats: RunStats) -> str:
    """``12 files rewritten, 3 sites need manual work (see above), 1 file could not be parsed``."""
    verb = "rewritten" if stats.mode == "write" else "would be rewritten"
    parts = [f"{_plural(stats.changed, 'file', 'files')} {verb}"]
    manual = stats.manual_sites
    if manual:
        parts.append(f"{_plural(manual, 'site needs', 'sites need')} manual work (see above)")
    extras = [
        (stats.count(PARSE_ERROR, UNDECODABLE), "file could not be parsed", "files could not be parsed"),
        (stats.count(UNREADABLE), "file could not be read", "files could not be read"),
        (
            stats.count(DIRTY),
            "file not written (uncommitted changes; commit them or pass --allow-dirty)",
            "files not written (uncommitted changes; commit them or pass --allow-dirty)",
        ),
        (stats.count(READ_ONLY), "read-only file not written", "read-only files not written"),
        (stats.count(WRITE_FAILED), "file could not be written", "files could not be written"),
        (stats.count(VENDORED_APEX), "copy of apex left (see above)", "copies of apex left (see above)"),
        (stats.count(UNUSED_SUPPRESSION), "unused suppression", "unused suppressions"),
        (stats.suppressed, "finding suppressed", "findings suppressed"),
        (
            stats.internal_errors,
            "internal error (file left unchanged; please report it)",
            "internal errors (files left unchanged; please report them)",
        ),
    ]
    parts.extend(_plural(n, one, many) for n, one, many in extras if n)
    return ", ".join(parts) + f" ({_plural(stats.checked, 'file', 'files')} checked)"


def shown(findings: Iterable[Finding], quiet: bool = False) -> List[Finding]:
    """What the text and GitHub formats print: open sites and notes, plus rewrites whose
    behaviour changed (fixed warnings); ``quiet`` keeps only what needs action."""
    selected = []
    for f in findings:
        if quiet:
            keep = f.needs_manual_work() or f.code in BLOCKING or f.code == INTERNAL_ERROR
        else:
            keep = not f.fixed or f.severity == "warning"
        if keep:
            selected.append(f)
    return selected


def _location(f: Finding) -> str:
    return f"{f.path}:{f.line}:{f.col}" if f.line > 0 else f.path


def _fixed_mark(f: Finding) -> str:
    return "[*] " if f.fixed else ""


def _level(f: Finding) -> str:
    """``error`` (work left), ``warning`` (fixed, behaviour changed) or ``notice``."""
    if f.needs_manual_work() or f.code in BLOCKING or f.code == INTERNAL_ERROR:
        return "error"
    return "warning" if f.severity == "warning" else "notice"


_LEVEL_STYLE = {"error": ("bold", "red"), "warning": ("bold", "yellow"), "notice": ("bold", "cyan")}


def render_text(findings: Sequence[Finding], paint: Palette = PLAIN) -> str:
    """One line per finding: ``path:line:col: APXnnn [*] message``."""
    return "".join(
        f"{paint(_location(f), 'bold')}: {paint(f.code, *_LEVEL_STYLE[_level(f)])} "
        f"{paint(_fixed_mark(f), 'green')}{f.message}\n"
        for f in findings
    )


def changed_files(stats: RunStats, paint: Palette = PLAIN) -> str:
    """``would rewrite path``, one line per file ``--check`` / ``--diff`` would change."""
    return "".join(f"would rewrite {paint(path, 'bold')}\n" for path in stats.changed_paths)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(findings: Sequence[Finding]) -> str:
    """GitHub Actions workflow commands (``::error file=...,line=...,col=...::...``)."""
    lines = []
    for f in findings:
        level = _level(f)
        props = f"file={_escape_property(f.path)}"
        if f.line > 0:
            props += f",line={f.line},col={f.col}"
        lines.append(f"::{level} {props}::{_escape_data(f'{f.code} {_fixed_mark(f)}{f.message}')}\n")
    return "".join(lines)


def render_json(stats: RunStats) -> str:
    """Every finding (fixed ones included) and the summary, as one JSON document."""
    document: Dict[str, object] = {
        "findings": [dict(f.to_dict(), needs_manual_work=f.needs_manual_work()) for f in stats.findings],
        "summary": {
            "files_checked": stats.checked,
            "files_parsed": stats.parsed,
            "files_changed": stats.changed,
            "mode": stats.mode,
            "manual_sites": stats.manual_sites,
            "changed_files": list(stats.changed_paths),
            "suppressed": stats.suppressed,
            "parse_failures": stats.count(PARSE_ERROR, UNDECODABLE),
            "internal_errors": stats.internal_errors,
            "message": summary_line(stats),
            "exit_status": stats.exit_status(),
        },
    }
    return json.dumps(document, indent=2) + "\n"


def unified_diff(old: bytes, new: bytes, path: str) -> bytes:
    """A ``git apply``-able diff of one file (``a/``/``b/`` prefixes, bytes kept as they are,
    ``\\ No newline at end of file`` where needed)."""
    out = []
    name = path.encode("utf-8", "surrogateescape")
    lines = difflib.diff_bytes(
        difflib.unified_diff,
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        b"a/" + name,
        b"b/" + name,
        n=3,
    )
    for index, line in enumerate(lines):
        if index < 2:  # the ---/+++ header lines: difflib leaves their end to us
            out.append(line.rstrip(b"\n") + b"\n")
        elif line.endswith(b"\n") or line.endswith(b"\r"):
            out.append(line)
        else:
            out.append(line + b"\n\\ No newline at end of file\n")
    return b"".join(out)
