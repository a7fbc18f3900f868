"""The text of each top-level statement of a freshly parsed module, cut from the text it was
parsed from.

Printing a LibCST tree costs about as much as parsing it, and a file's run printed every
top-level statement at least once: to count the lines above a node a rule reports on, and
to give the text of a changed file (most of whose statements are the ones read).  A
statement the rules did not change is the very text it was parsed from, so that text is
cut from the file instead.

A top-level statement's text starts at the line of its first token (the stdlib ``ast``
says which: a statement's own line, or its first decorator's), less the lines LibCST gives
it before that token (its ``leading_lines``, and those of its first decorator), and ends
where the next one starts (the last one where the module's footer starts).  Where anything
does not line up (the statements of the two parsers, a decorator's ``@`` on another line,
the header or the footer) there are no slices, and the statements are printed as before.
"""

from __future__ import annotations

import ast
from typing import List, NamedTuple, Optional, Tuple

import libcst as cst

from . import stdlib_trees


class StatementSlice(NamedTuple):
    """A top-level statement as the file has it."""

    #: its text (from its leading blank and comment lines to the line before the next one)
    text: str
    #: the line (from 1) its text starts on
    line: int
    #: the first stdlib statement it holds
    first: ast.stmt


def statement_slices(module: cst.Module, text: str) -> Optional[List[StatementSlice]]:
    """Each statement of ``module.body`` as ``text`` (what ``module`` was parsed from) holds
    it, in order; None where that cannot be told for certain (a carriage return or a
    byte-order mark in the text, no final newline, a text the stdlib does not parse or whose
    statements do not line up with LibCST's)."""
    if not module.body or not module.has_trailing_newline or "\r" in text or text.startswith("\ufeff"):
        return None
    tree = stdlib_trees.parse(text)
    if tree is None:
        return None
    line_starts = [0]
    at = text.find("\n")
    while at >= 0:
        line_starts.append(at + 1)
        at = text.find("\n", at + 1)
    found = _start_lines(module, tree, text, line_starts)
    if found is None:
        return None
    starts, firsts = found
    if starts[0] != len(module.header) + 1:
        return None
    ends = starts[1:] + [len(line_starts) - len(module.footer)]
    if any(end <= start for start, end in zip(starts, ends)):
        return None
    return [
        StatementSlice(text[line_starts[start - 1] : line_starts[end - 1]], start, first)
        for start, end, first in zip(starts, ends, firsts)
    ]


def _start_lines(
    module: cst.Module, tree: ast.Module, text: str, line_starts: List[int]
) -> Optional[Tuple[List[int], List[ast.stmt]]]:
    """The line (from 1) on which the text of each statement of ``module.body`` starts, and
    the first stdlib statement of each."""
    statements = iter(tree.body)
    starts: List[int] = []
    firsts: List[ast.stmt] = []
    for line in module.body:
        # a line ``a; b`` is one LibCST statement and two stdlib ones
        count = len(line.body) if isinstance(line, cst.SimpleStatementLine) else 1
        first = next(statements, None)
        for _ in range(count - 1):
            next(statements, None)
        if first is None:
            return None
        lineno = first.lineno
        leading = len(line.leading_lines)
        decorators = getattr(line, "decorators", ())
        if decorators:
            decorator_list = getattr(first, "decorator_list", None)
            if not decorator_list:
                return None
            lineno = decorator_list[0].lineno
            leading += len(decorators[0].leading_lines)
            if lineno > len(line_starts) or not text.startswith("@", line_starts[lineno - 1]):
                return None  # ``@`` and the decorator's expression on different lines
        starts.append(lineno - leading)
        firsts.append(first)
    if next(statements, None) is not None:
        return None
    return starts, firsts
