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

A changed compound statement (a function, a class, a loop) whose parts other than its body
are the objects it had goes one level further (``_nested``): only the runs of changed
statements inside its block are parsed again, each printed inside one ``if 1:`` per
enclosing block, indented as those blocks are, so the parser reads every line at the
column it has in the file; the same refusals apply where comments could attach elsewhere.
"""

from __future__ import annotations

import dataclasses
import os
from typing import List, Optional, Sequence, Tuple, Union

import libcst as cst

from . import trusted_parse
from .rules._printing import printed
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
        parsed = trusted_parse.parse_module(code, config=module.config_for_parsing)
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
        return new, (before if new == text_before else trusted_parse.parse_module(new))
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
    parts = [printed(before, line) for line in before.header]
    body: List[_Statement] = []
    run: List[_Statement] = []

    index_of = {id(statement): index for index, statement in enumerate(before.body)}
    last_kept = -1  # the index in ``before.body`` of the last statement kept so far

    def flush(upto: int) -> bool:
        if not run:
            return True
        # printed once: a rule's import edits may have printed the new statements already
        pieces = [texts.text(after, statement) for statement in run]
        replaced = before.body[last_kept + 1 : upto] if upto > last_kept else ()
        parsed = _one_by_one(after, replaced, run, pieces) if len(run) == len(replaced) else None
        if parsed is not None:
            for statement, piece in zip(parsed, pieces):  # a parse prints back what it read
                texts.learn(after, statement, piece)
        elif len(run) > 1 or len(replaced) != 1:  # (one statement for one: tried already)
            code = "".join(pieces)
            parsed = _parse_run(after, code)
            if parsed is not None and len(parsed) == 1:
                texts.learn(after, parsed[0], code)
        if parsed is None:
            return False
        parts.extend(pieces)
        body.extend(parsed)
        run.clear()
        return True

    for statement in after.body:
        if id(statement) in kept and id(statement) not in seen:
            if not flush(index_of[id(statement)]):
                return None
            parts.append(texts.text(before, statement))
            body.append(statement)
            last_kept = max(last_kept, index_of[id(statement)])
        else:
            run.append(statement)
        seen.add(id(statement))
    if not flush(len(before.body)):
        return None
    parts.extend(printed(before, line) for line in before.footer)
    return "".join(parts), body


def _one_by_one(
    module: cst.Module, replaced: Sequence[cst.CSTNode], run: Sequence[_Statement], pieces: Sequence[str]
) -> Optional[List[_Statement]]:
    """The changed top-level statements ``run`` (their texts ``pieces``), which took the
    places of ``replaced`` one for one, each parsed again on its own (only the changed
    statements of its block, where ``_nested`` can); None where one of them cannot be.  A
    rule that edits two neighbouring functions then parses neither whole, nor both at once."""
    found: List[_Statement] = []
    for old, new, piece in zip(replaced, run, pieces):
        one = _nested(module, old, new, [])
        if one is None:
            parsed = _parse_run(module, piece)
            if parsed is None or len(parsed) != 1:
                return None
            one = parsed[0]
        found.append(one)
    return found


def _same_but_body(old: cst.CSTNode, new: cst.CSTNode) -> bool:
    """Every field of ``new`` but its ``body`` is the very object ``old`` has there."""
    return type(old) is type(new) and all(
        getattr(old, f.name) is getattr(new, f.name) for f in dataclasses.fields(new) if f.name != "body"
    )


def _nested(
    module: cst.Module, old: cst.CSTNode, new: cst.CSTNode, blocks: List[cst.IndentedBlock]
) -> Optional[_Statement]:
    """``new`` (a rule's output for the statement ``old``, inside ``blocks``) as a parse of
    the whole file gives it, parsing again only the statements of its block that changed
    (a rule edits a line or two of a long function or class); None where that is not
    certain (then the whole statement is parsed again)."""
    if not isinstance(new, cst.BaseCompoundStatement) or not _same_but_body(old, new):
        return None
    old_block, new_block = old.body, new.body  # type: ignore[attr-defined]
    if not isinstance(new_block, cst.IndentedBlock) or not _same_but_body(old_block, new_block):
        return None
    inner = _splice_block(module, old_block.body, new_block.body, [*blocks, new_block])
    if inner is None:
        return None
    return new.with_changes(body=new_block.with_changes(body=inner))  # type: ignore[return-value]


def _splice_block(
    module: cst.Module, old: Sequence[_Statement], new: Sequence[_Statement], blocks: List[cst.IndentedBlock]
) -> Optional[List[_Statement]]:
    """The statements ``new`` of the innermost of ``blocks``, the kept ones as they are and
    each run of changed ones parsed again inside copies of the blocks' headers."""
    index_of = {id(statement): index for index, statement in enumerate(old)}
    found: List[_Statement] = []
    run: List[_Statement] = []
    last_kept = -1
    previous: Optional[_Statement] = None

    def flush(upto: int, following: Optional[_Statement]) -> bool:
        if not run:
            return True
        if isinstance(previous, cst.BaseCompoundStatement) and _has_comments(run[0]):
            return False  # a whole parse may give those comments to the block before
        if isinstance(run[-1], cst.BaseCompoundStatement) and (
            _has_comments(following)
            if following is not None
            else any(line.comment is not None for line in blocks[-1].footer)
        ):
            return False  # ... or to the block that ends the run
        replaced = old[last_kept + 1 : upto] if upto > last_kept else ()
        one = _nested(module, replaced[0], run[0], blocks) if len(run) == 1 and len(replaced) == 1 else None
        parsed = [one] if one is not None else _parse_in_blocks(module, run, blocks)
        if parsed is None:
            return False
        found.extend(parsed)
        run.clear()
        return True

    seen: set = set()
    for statement in new:
        index = index_of.get(id(statement))
        if index is not None and id(statement) not in seen and index > last_kept:
            if not flush(index, statement):
                return None
            found.append(statement)
            last_kept = index
            previous = statement
        else:
            run.append(statement)
        seen.add(id(statement))
    if not flush(len(old), None):
        return None
    return found


def _has_comments(statement: cst.CSTNode) -> bool:
    return any(line.comment is not None for line in getattr(statement, "leading_lines", ()))


_WRAPPER_TEST = cst.Integer("1")


def _parse_in_blocks(
    module: cst.Module, run: Sequence[_Statement], blocks: List[cst.IndentedBlock]
) -> Optional[List[_Statement]]:
    """``run`` parsed again at its depth: printed inside one ``if 1:`` per block of
    ``blocks`` (each indented as that block is), so the parser reads every line at the
    column it has in the file; None unless the parse has exactly that shape."""
    inner: Sequence[cst.BaseStatement] = run
    for block in reversed(blocks):
        inner = [cst.If(test=_WRAPPER_TEST, body=cst.IndentedBlock(body=inner, indent=block.indent))]
    wrapped = module.with_changes(body=inner, header=(), footer=())
    code = printed(wrapped, wrapped)
    try:
        parsed = trusted_parse.parse_module(code, config=module.config_for_parsing)
    except (cst.ParserSyntaxError, SyntaxError, ValueError):
        return None
    if parsed.header or parsed.footer or parsed.default_indent != module.default_indent:
        return None
    statements: Sequence[cst.CSTNode] = parsed.body
    for block in blocks:
        if len(statements) != 1:
            return None
        wrapper = statements[0]
        if not isinstance(wrapper, cst.If) or wrapper.orelse is not None or wrapper.leading_lines:
            return None
        got = wrapper.body
        if not isinstance(got, cst.IndentedBlock) or got.footer or got.indent != block.indent:
            return None
        statements = got.body
    if len(statements) != len(run):
        return None
    return list(statements)  # type: ignore[arg-type]
