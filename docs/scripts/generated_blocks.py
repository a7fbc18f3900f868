"""Generated blocks in the Markdown pages: content that comes from a real run, committed into
the page so that it reads completely on GitHub, between two marker lines::

    <!-- generated: NAME (python docs/scripts/generate.py); do not edit -->
    ...
    <!-- end generated: NAME -->

``docs/scripts/generate.py`` rewrites the lines between the markers; ``tests/docs`` fails when
they differ from a fresh run.  Code blocks inside are output, never executed by the docs tests.
"""

from __future__ import annotations

import re
from typing import Dict, List, NamedTuple

COMMAND = "python docs/scripts/generate.py"
BEGIN = re.compile(r"^<!-- generated: (?P<name>[\w.-]+) \(.*\); do not edit -->$", re.M)
END = "<!-- end generated: {name} -->"


class Block(NamedTuple):
    name: str
    start: int  # offset of the first content character (after the begin line)
    end: int  # offset of the end marker line
    content: str


def begin_line(name: str) -> str:
    return f"<!-- generated: {name} ({COMMAND}); do not edit -->"


def find_blocks(text: str) -> Dict[str, Block]:
    """Every generated block of a page by name; a missing end marker or a repeated name is an error."""
    blocks: Dict[str, Block] = {}
    for match in BEGIN.finditer(text):
        name = match.group("name")
        end_marker = "\n" + END.format(name=name)
        start = match.end() + 1
        end = text.find(end_marker, match.end())
        if end < 0:
            raise ValueError(f"generated block {name!r}: no {END.format(name=name)!r} line")
        if name in blocks:
            raise ValueError(f"generated block {name!r} appears twice")
        blocks[name] = Block(name, start, end + 1, text[start:end + 1])
    return blocks


def replace_blocks(text: str, contents: Dict[str, str]) -> str:
    """``text`` with the content of each named block replaced (names not in the page are ignored)."""
    pieces: List[str] = []
    position = 0
    for block in sorted(find_blocks(text).values(), key=lambda b: b.start):
        if block.name in contents:
            new = contents[block.name]
            pieces += [text[position:block.start], new if new.endswith("\n") else new + "\n"]
            position = block.end
    return "".join(pieces) + text[position:]


def inside_generated(text: str) -> List[range]:
    """Line-number ranges (1-based) covered by generated blocks, markers included."""
    ranges = []
    for block in find_blocks(text).values():
        first = text.count("\n", 0, block.start)  # the begin marker's line
        last = text.count("\n", 0, block.end) + 1  # the end marker's line
        ranges.append(range(first, last + 1))
    return ranges


def fenced(body: str, lang: str) -> str:
    """``body`` as a fenced code block, with a fence longer than any backtick run inside."""
    longest = max((len(run) for run in re.findall(r"`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body.rstrip(chr(10))}\n{fence}\n"
