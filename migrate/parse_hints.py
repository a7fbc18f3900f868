"""What a file that does not parse under Python 3 most likely needs, for the APX001 message.

CPython says only "invalid syntax" for ``x.cuda(async=True)``: ``async`` became a keyword in
Python 3.7, and torch renamed the argument ``non_blocking``.  Old training scripts (CMC's
train_CMC.py) still carry it, and so does Python 2 code; the hint names the fix, the file
stays unchanged.
"""

from __future__ import annotations

import re

_ASYNC_ARGUMENT = re.compile(r"[(,]\s*async\s*=")
_PY2_PRINT = re.compile(r"^\s*print\s+[^\s(=]")


def parse_hint(source: bytes, line: int) -> str:
    """A sentence to add to the parse error reported at ``line`` (1-based), or ""."""
    lines = source.decode("utf-8", errors="replace").splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    if _ASYNC_ARGUMENT.search(text):
        return (
            "`async` is a keyword since Python 3.7 and torch calls this argument non_blocking: write "
            "`non_blocking=True` (same meaning) and run the tool again"
        )
    if _PY2_PRINT.match(text):
        return "this line is Python 2 syntax: port the file to Python 3 (e.g. with 2to3) and run the tool again"
    return ""
