"""Which expression of one statement sits where another statement has a hole.

``if fp16: clip(amp.master_params(opt), n) else: clip(model.parameters(), n)``: the two
branches are the same statement but for one expression (``rules/clipping``'s merge).  Written
on one line each, their texts show it; wrapped differently (``clip(\\n    amp.master_params(
opt), n)`` against a one-line ``clip(model.parameters(), n)``) they do not, though they are the
same code.  This compares their syntax trees instead, so layout, comments and parentheses do
not count.  Pure: stdlib ``ast`` only.
"""

from __future__ import annotations

import ast
from typing import Any, List, Optional

#: the name that stands for the hole in the pattern statement
HOLE = "__apexcompat_hole__"


def filled_hole(pattern: str, text: str) -> Optional[str]:
    """The source of the expression of ``text`` at the place of the name ``HOLE`` in
    ``pattern``, when the two statements are otherwise the same code (spacing, line breaks,
    comments and redundant parentheses aside); None when they differ elsewhere, either does not
    parse, or the hole is not used exactly once."""
    try:
        mine, theirs = ast.parse(pattern), ast.parse(text)
    except SyntaxError:
        return None
    found: List[ast.expr] = []
    if not _matches(mine, theirs, found) or len(found) != 1:
        return None
    return ast.get_source_segment(text, found[0])


def _matches(mine: Any, theirs: Any, found: List[ast.expr]) -> bool:
    """Whether ``theirs`` is ``mine`` with an expression in place of each ``HOLE`` name
    (collected into ``found``)."""
    if isinstance(mine, ast.Name) and mine.id == HOLE:
        if not isinstance(theirs, ast.expr):
            return False
        found.append(theirs)
        return True
    if type(mine) is not type(theirs):
        return False
    if isinstance(mine, ast.AST):
        return all(_matches(getattr(mine, f, None), getattr(theirs, f, None), found) for f in mine._fields)
    if isinstance(mine, list):
        return len(mine) == len(theirs) and all(_matches(a, b, found) for a, b in zip(mine, theirs))
    return bool(mine == theirs)
