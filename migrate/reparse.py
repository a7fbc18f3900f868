"""The text and the parsed tree that follow a rule's edit, printing and parsing again only
the top-level statements the rule changed.

After each rule that changed a file the engine needs the new text and a fresh tree of it
(fresh: every node once, so the metadata of the next rule is sound).  A rule's output keeps
the very objects of the statements it did not touch (``rules._traverse``), so those keep
their text and their nodes; each run of changed statements is printed and parsed on its
own, with the module's indentation and newline, and put in their place.  Wherever that
could differ from parsing the whole text (a changed or removed first statement: a whole
parse gives the blank lines and comments leading the file's first statement to the
module's header; a text without a final newline or
with a carriage return; a changed header or footer; a statement that does not parse on
its own, or whose trailing comments would go to the end of the file), the whole text is
printed and parsed as before.
"""

from __future__ import annotations

import os
from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from .rules._tree import VERIFY_ENV, StatementTexts, module_bytes

_Statement = Union[cst.SimpleStatementLine, cst.BaseCompoundStatement]


def _same_frame(before: cst.Module, after: cst.Module) -> bool:
    """The same header, footer, first statement and printing settings (a whole parse gives
    the blank lines and comments leading the file's first statement to the header)."""
    return (
        bool(before.body)
        and bool(after.body)
        and before.body[0] is after.body[0]
        and _same_nodes(before.header, after.header)
        and _same_nodes(before.footer, after.footer)
        and before.encoding == after.encoding
        and before.default_indent == after.default_indent
        and before.default_newline == after.default_newline
        and before.has_trailing_newline
        and after.has_trailing_newline
    )


def _same_nodes(first: Sequence[cst.CSTNode], second: Sequence[cst.CSTNode]) -> bool:
    return len(first) == len(second) and all(a is b for a, b in zip(first, second))


def _parse_run(module: cst.Module, code: str) -> Optional[List[_Statement]]:
    """The statements of ``code`` (changed top-level statements, not the file's first),
    as a parse of the whole file would give them; None where that is not certain."""
    try:
        parsed = cst.parse_module(code, config=module.config_for_parsing)
    except (cst.ParserSyntaxError, SyntaxError, ValueError):
        return None
    if parsed.footer or not parsed.body or not parsed.has_trailing_newline:
        return None
    if parsed.default_indent != module.default_indent:
        # LibCST infers the indentation from the text, not the config: a block indented as
        # the run's own default would print with the file's (a 4-space function in a file
        # whose first block is indented by 8 came out re-indented by 8)
        return None
    body = list(parsed.body)
    if parsed.header:  # inside a file these lines lead its first statement
        first = body[0]
        body[0] = first.with_changes(leading_lines=(*parsed.header, *first.leading_lines))
    return body


def next_tree(
    before: cst.Module, text_before: bytes, after: cst.Module, texts: StatementTexts
) -> Tuple[bytes, cst.Module]:
    """The text of ``after`` (a rule's output for ``before``, parsed from ``text_before``)
    and a fresh tree of it; the tree is ``before`` when the text did not change."""
    spliced = None
    if b"\r" not in text_before and _same_frame(before, after):
        spliced = _splice(before, after, texts)
    if spliced is None:
        new = module_bytes(after)
        return new, (before if new == text_before else cst.parse_module(new))
    code, body = spliced
    new = code.encode(after.encoding)
    if new == text_before:
        return new, before
    tree = after.with_changes(body=body)
    if os.environ.get(VERIFY_ENV) and not tree.deep_equals(cst.parse_module(new)):
        raise AssertionError("a statement-wise parse differs from the parse of the whole text")
    return new, tree


def _splice(before: cst.Module, after: cst.Module, texts: StatementTexts) -> Optional[Tuple[str, List[_Statement]]]:
    kept = {id(statement) for statement in before.body}
    seen: set = set()
    parts = [before.code_for_node(line) for line in before.header]
    body: List[_Statement] = []
    run: List[_Statement] = []

    def flush() -> bool:
        if not run:
            return True
        # printed once: a rule's import edits may have printed the new statements already
        code = "".join(texts.text(after, statement) for statement in run)
        parsed = _parse_run(after, code)
        if parsed is None:
            return False
        parts.append(code)
        body.extend(parsed)
        if len(parsed) == 1:  # its text is all of ``code`` (a parse prints back what it read)
            texts.learn(after, parsed[0], code)
        run.clear()
        return True

    for statement in after.body:
        if id(statement) in kept and id(statement) not in seen:
            if not flush():
                return None
            parts.append(texts.text(before, statement))
            body.append(statement)
        else:
            run.append(statement)
        seen.add(id(statement))
    if not flush():
        return None
    parts.extend(before.code_for_node(line) for line in before.footer)
    return "".join(parts), body
