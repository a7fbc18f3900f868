"""Files already on the shim are inputs of a native run: ``apexcompat.amp`` is apex.amp's API,
so before the rules run, a native migration reads the file's ``apexcompat.amp`` as
``apex.amp`` (only there: imports of ``amp`` and ``apexcompat.amp`` chains in code, found
with the tokenizer, so strings and comments keep their text).

The rules then migrate the file like any apex one.  When the file cannot go native, the
imports rule maps ``apex.amp`` back to ``apexcompat.amp``, which restores the text the file
had; the engine then drops the "now comes from apexcompat.amp" findings, which would say
nothing new about such a file.
"""

from __future__ import annotations

import io
import tokenize
from typing import List, Optional, Tuple

SHIM = b"apexcompat"


def _replacements(text: str) -> List[Tuple[int, int, int]]:
    """``(line, start column, end column)`` of each ``apexcompat`` NAME token that denotes
    the shim's amp: followed by ``.amp``, or in ``from apexcompat import amp``."""
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.NL]
    except (tokenize.TokenError, SyntaxError):
        return []
    found = []
    for i, tok in enumerate(tokens):
        if tok.type != tokenize.NAME or tok.string != "apexcompat":
            continue
        after = [t.string for t in tokens[i + 1 : i + 5]]
        chain = after[:2] == [".", "amp"]
        from_import = (
            i > 0
            and tokens[i - 1].string == "from"
            and after[:2] == ["import", "amp"]
            and (len(after) < 3 or after[2] in ("as", ";", "") or after[2].startswith(("#", "\n", "\r")))
        )
        if chain or from_import:
            found.append((tok.start[0], tok.start[1], tok.end[1]))
    return found


def as_apex(source: bytes) -> Optional[bytes]:
    """``source`` with the shim's amp spelt ``apex.amp``; None when it has none."""
    if SHIM not in source:
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        text = source.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    bom = text.startswith("\ufeff")
    body = text[1:] if bom else text
    spots = _replacements(body)
    if not spots:
        return None
    lines = body.splitlines(keepends=True)
    for line, start, end in reversed(spots):
        current = lines[line - 1]
        lines[line - 1] = current[:start] + "apex" + current[end:]
    return (("\ufeff" if bom else "") + "".join(lines)).encode(encoding)
