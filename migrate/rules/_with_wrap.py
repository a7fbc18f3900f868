"""Consecutive statements put under a new ``with`` block (``with torch.autocast(...):``),
their continuation lines moved right with them.

LibCST keeps most of a statement's indentation relative to its block, but not all of it: the
line after a backslash continuation and a line inside brackets indented less than its block
(a comment or an argument) hold their whitespace as written.  Left alone, those lines would
stay where they were while the rest of the statement moves one level in."""

import re
from typing import Any, List, Sequence

import libcst as cst

from ._edits import statement

#: a backslash continuation's line break, the next line's indentation following it
_BACKSLASH_BREAK = re.compile(r"\\(\r\n|\n|\r)")


class _ShiftAbsoluteLines(cst.CSTTransformer):
    """Prefixes ``indent`` to each line whose indentation LibCST stores as written."""

    def __init__(self, indent: str) -> None:
        super().__init__()
        self.indent = indent

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        return False  # a line break inside an f-string's braces belongs to the string's text

    def leave_SimpleWhitespace(
        self, original_node: cst.SimpleWhitespace, updated_node: cst.SimpleWhitespace
    ) -> cst.SimpleWhitespace:
        if "\\" not in updated_node.value:
            return updated_node
        value = _BACKSLASH_BREAK.sub(lambda m: m.group(0) + self.indent, updated_node.value)
        return updated_node.with_changes(value=value)

    def leave_ParenthesizedWhitespace(
        self, original_node: cst.ParenthesizedWhitespace, updated_node: cst.ParenthesizedWhitespace
    ) -> cst.ParenthesizedWhitespace:
        if updated_node.indent:
            return updated_node
        last = updated_node.last_line
        return updated_node.with_changes(last_line=last.with_changes(value=self.indent + last.value))

    def leave_EmptyLine(self, original_node: cst.EmptyLine, updated_node: cst.EmptyLine) -> cst.EmptyLine:
        if updated_node.indent or updated_node.comment is None:
            return updated_node  # blank lines stay blank
        whitespace = updated_node.whitespace
        return updated_node.with_changes(whitespace=whitespace.with_changes(value=self.indent + whitespace.value))


def shifted_right(stmt: Any, indent: str) -> Any:
    """``stmt`` as it reads one block deeper, ``indent`` further in."""
    return stmt.visit(_ShiftAbsoluteLines(indent))


def wrapped_in_with(head: str, statements: Sequence[Any], indent: str) -> List[Any]:
    """``statements`` (consecutive, of one block) as the body of the ``with`` statement
    ``head`` (``"with ctx:\\n    pass\\n"``), which takes over the first one's leading lines;
    ``indent`` is the module's indentation unit (the body's)."""
    with_node: Any = statement(head)
    first, rest = statements[0], list(statements[1:])
    inner = [shifted_right(s, indent) for s in [first.with_changes(leading_lines=[]), *rest]]
    return [with_node.with_changes(body=with_node.body.with_changes(body=inner), leading_lines=first.leading_lines)]
