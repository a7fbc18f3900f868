"""Old training scripts that Python 3 refuses to parse, made parseable where the repair is certain.

Two shapes keep real apex scripts from parsing at all (and so from running under any torch
the migration targets):

- ``x.cuda(async=True)``: torch 0.3's name of the argument, renamed ``non_blocking`` in 0.4
  when ``async`` was about to become a keyword (it is one since Python 3.7).  Only a keyword
  argument of a ``.cuda`` / ``.to`` / ``.copy_`` / ``.type`` call is renamed: those are
  torch's methods that took it.
- indentation mixing tabs and spaces in a way Python 3 rejects (TabError) and Python 2 read
  with a tab advancing to the next multiple of 8 columns: the leading tabs of the lines that
  start a statement are expanded at 8 columns, which is the block structure Python 2 ran.

A file is repaired only when it does not parse as read and parses once repaired; the rules
then migrate the repaired text, the repair is part of the output, and each repaired line is
reported (APX012).  Anything else (Python 2 ``print`` statements, a genuine syntax error)
keeps the parse error report.  Strings and comments are never touched: the edits are found
with the tokenizer.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass, field, replace
from typing import Any, Dict, List, Optional, Tuple

from . import stdlib_trees
from .codes import LEGACY_SYNTAX
from .findings import Finding

#: torch methods whose ``async`` argument became ``non_blocking``
_ASYNC_METHODS = frozenset({"cuda", "to", "copy_", "type"})
_ASYNC_MESSAGE = (
    "`async=` renamed `non_blocking=` (torch's name for it since 0.4; `async` is a keyword since Python 3.7, "
    "so the file did not parse)"
)
_TABS_MESSAGE = (
    "indentation mixing tabs and spaces expanded at 8 columns a tab, as Python 2 read it "
    "(Python 3 refused the file: inconsistent use of tabs and spaces)"
)


@dataclass
class Repair:
    """A repaired text, what was repaired where, and how the repair moved columns."""

    #: the text as read
    original: bytes
    #: the text repaired (what the rules migrate)
    source: bytes = b""
    #: (line, column of the repaired text, message), one per repaired line
    sites: List[Tuple[int, int, str]] = field(default_factory=list)
    #: line -> [(column in the repaired text where an edit ends, characters it added)]
    shifts: Dict[int, List[Tuple[int, int]]] = field(default_factory=dict)

    def findings(self, path: str) -> List[Finding]:
        return [
            Finding(path, line, self.original_column(line, col) + 1, LEGACY_SYNTAX, message, True, "info")
            for line, col, message in self.sites
        ]

    def original_column(self, line: int, col: int) -> int:
        """The 0-based column in the text as read of ``col`` in the repaired text."""
        return col - sum(added for end, added in self.shifts.get(line, ()) if end <= col)

    def placed(self, finding: Finding) -> Finding:
        """``finding`` (positioned in the repaired text) positioned in the text as read."""
        if finding.line not in self.shifts or finding.col < 1:
            return finding
        return replace(finding, col=self.original_column(finding.line, finding.col - 1) + 1)

    def as_read(self, result: Any) -> None:
        """Turn the ``engine.MigrationResult`` of the repaired text into the file's: its old
        bytes are the file's, its findings placed in them with the repairs among them; a file
        the rules could not finish is left as it was read, repair and all."""
        failed = result.internal_error is not None or result.parse_error is not None
        result.findings = [self.placed(f) for f in result.findings] + ([] if failed else self.findings(result.path))
        if result.internal_error is not None:
            result.internal_error = self.placed(result.internal_error)
        result.new = self.original if failed else result.new
        result.old = self.original


def repaired(source: bytes) -> Optional[Repair]:
    """The repair of ``source`` where it does not parse and the repairs make it parse, else None."""
    if b"async" not in source and b"\t" not in source:
        return None  # nothing to repair: decided before parsing, which the index does later
    if stdlib_trees.parse(source) is not None:
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None
    lines = text.splitlines(keepends=True)
    repair = Repair(source)
    renamed = _rename_async(lines, repair)
    expanded = _expand_tabs(lines, repair)  # where what is left fails for its tabs
    new = "".join(lines)
    if not (renamed or expanded) or _parses(new) is not None:
        return None
    repair.source = new.encode(encoding)
    repair.sites.sort()
    return repair


def _parses(text: str) -> Optional[type]:
    """None where ``text`` parses, else the class of the error."""
    try:
        ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        return type(exc)
    return None


def _tokens(lines: List[str]) -> Optional[List[tokenize.TokenInfo]]:
    try:
        return list(tokenize.generate_tokens(io.StringIO("".join(lines)).readline))
    except (tokenize.TokenError, SyntaxError):
        return None


def _rename_async(lines: List[str], repair: Repair) -> bool:
    """Rename each ``async=`` keyword argument of a torch method call; whether any was."""
    tokens = _tokens(lines)
    if tokens is None:
        return False
    sites: List[Tuple[int, int]] = []
    opened: List[Optional[str]] = []  # per open bracket: the method a ``(`` calls, if any
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            method = None
            if tok.string == "(" and i >= 2 and tokens[i - 1].type == tokenize.NAME and tokens[i - 2].string == ".":
                method = tokens[i - 1].string
            opened.append(method)
        elif tok.type == tokenize.OP and tok.string in ")]}":
            if opened:
                opened.pop()
        elif (
            tok.type == tokenize.NAME
            and tok.string == "async"
            and opened
            and opened[-1] in _ASYNC_METHODS
            and tokens[i - 1].string in ("(", ",")
            and i + 1 < len(tokens)
            and tokens[i + 1].string == "="
        ):
            sites.append(tok.start)
    grown = len("non_blocking") - len("async")
    for line, col in reversed(sites):  # right to left: the columns of the earlier ones hold
        text = lines[line - 1]
        lines[line - 1] = text[:col] + "non_blocking" + text[col + len("async") :]
    for line, col in sites:
        earlier = sum(1 for other, at in sites if other == line and at < col)
        start = col + earlier * grown  # where it is in the repaired line
        repair.shifts.setdefault(line, []).append((start + len("non_blocking"), grown))
        if earlier == 0:
            repair.sites.append((line, start, _ASYNC_MESSAGE))
    return bool(sites)


def _tab_lines(lines: List[str]) -> set:
    return {n for n, text in enumerate(lines, 1) if "\t" in text[: len(text) - len(text.lstrip(" \t"))]}


def _expand_tabs(lines: List[str], repair: Repair) -> bool:
    """Expand at 8 columns the leading tabs of the lines that start a statement, where the
    text as it stands is rejected for its tabs; whether any line changed."""
    if _parses("".join(lines)) is not TabError:
        return False
    tokens = _tokens(lines)
    if tokens is None:
        return False
    starts = set()
    at_start = True
    for tok in tokens:
        if tok.type in (tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            at_start = True
            continue
        if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.ENCODING):
            continue
        if at_start:
            starts.add(tok.start[0])
            at_start = False
    repaired_lines = sorted(starts & _tab_lines(lines))
    for line in repaired_lines:
        text = lines[line - 1]
        body = text.lstrip(" \t")
        indent = text[: len(text) - len(body)]
        expanded = indent.expandtabs(8)
        lines[line - 1] = expanded + body
        repair.shifts.setdefault(line, []).append((len(expanded), len(expanded) - len(indent)))
    for first, count in _runs(repaired_lines):  # one finding per run of neighbouring statements
        repair.sites.append((first, 0, _TABS_MESSAGE + (f" ({count} statements from here)" if count > 1 else "")))
    return bool(repaired_lines)


def _runs(numbers: List[int]) -> List[Tuple[int, int]]:
    """(first, how many) for each run of consecutive ``numbers`` (sorted)."""
    runs: List[Tuple[int, int]] = []
    for n in numbers:
        if runs and runs[-1][0] + runs[-1][1] == n:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((n, 1))
    return runs
