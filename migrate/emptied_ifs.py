"""The last step of a file's migration: an ``if`` the rules left doing nothing goes.

A rule that removes the last statement of a block leaves ``pass`` there, with its note
above it (``rules._edits.block_body``).  Where that block is an ``if``'s, the diff shows a
construct no one would commit::

    if args.fp16:
        # apex.amp.register_half_function(torch, "einsum") removed: native autocast ...
        pass

This step, run once on the text all rules left, tidies the ``if`` statements whose ``pass``
the rules wrote (see ``_user_passes``; a ``pass`` of the user's is never touched):

- ``if TEST: pass else: pass``, both branches saying the same (same comments, or none):
  the comments once, in the ``if``'s place;
- ``else: pass`` with no comment: the ``else`` goes;
- ``if TEST: pass`` (no ``else``/``elif``): the ``if`` goes, its comments stay in its
  place at its indentation; except where they hold a ``TODO(apexcompat)``: a TODO such as
  "inference without optimizers: wrap the forward pass in autocast" is for the runs the
  condition selects, and the ``if`` around it tells the user which ones.

An ``if`` goes only where its test cannot do anything but yield a truth value
(``_same_branches.pure_test``, as the initialize rule's own pruning asks): names,
attributes, subscripts, constants, comparisons, ``not``, ``and``/``or``, and the questions
``torch.cuda.is_available()``, ``isinstance``, ``hasattr``.  The comment block right above
a removed ``if`` goes with it where the user wrote it and it names apex, as with every
statement the rules remove (``_edits.kept_leading``).  A block left empty gets ``pass``
back, carrying the comments, so that an ``if`` around it is tidied in turn.  Everything
else keeps its bytes.
"""

from __future__ import annotations

import re
from typing import List, Optional, Sequence, Set, Tuple

import libcst as cst

from . import trusted_parse
from .findings import Finding
from .rules._edits import code_of, kept_leading, read_todos, todo_key
from .rules._same_branches import pure_test
from .rules._tree import walk_of

#: a line holding only ``pass`` (a comment aside): a file whose rules added none has nothing
#: to tidy (the word in a TODO's text, "pass device_ids=...", is no statement)
_PASS = re.compile(rb"^[ \t]*pass[ \t]*(?:#[^\r\n]*)?\r?$", re.MULTILINE)

#: what identifies an ``if`` whose body (``"if"``) or ``else`` (``"else"``) is only ``pass``
_Key = Tuple[str, str]


def tidy_emptied_ifs(original: cst.Module, source: bytes, new: bytes) -> Tuple[bytes, List[str]]:
    """``new`` (the rules' output for ``source``, parsed as ``original``) with the ``if``
    statements the rules emptied tidied (``new`` itself where there are none), and the
    TODO messages written once where both branches held them (``merged_sites``)."""
    if len(_PASS.findall(new)) <= len(_PASS.findall(source)):
        return new, []  # the rules wrote no ``pass`` (cheap: most files stop here)
    try:
        tree = trusted_parse.parse_module(new)
    except (cst.ParserSyntaxError, SyntaxError):
        return new, []  # the engine reports what does not compile
    read = source.decode(original.encoding, errors="replace")
    tidy = _Tidy(_user_passes(original), read)
    tidied = tree.visit(tidy)
    return (new, []) if tidied is tree else (tidied.bytes, tidy.merged)


def merged_sites(findings: List[Finding], merged: Sequence[str]) -> List[Finding]:
    """``findings`` less one open site per message in ``merged``: the two sites of an ``if``
    whose branches said the same TODO now share one comment, and a later run reports each
    comment once (``AmpRule.report_earlier_todos``); the later site goes, the comment
    standing where the ``if`` began."""
    kept = list(findings)
    for message in merged:
        key = todo_key(message)
        same = [f for f in kept if not f.fixed and todo_key(f.message) == key]
        if len(same) > 1:
            kept.remove(max(same, key=lambda f: (f.line, f.col)))
    return kept


def _user_passes(original: cst.Module) -> Set[_Key]:
    """The ``if`` statements of the file as read whose body or ``else`` is only ``pass``, by
    test: an ``if`` of the output with the same test and the same ``pass`` may be the user's
    (compared by test, as the rules move and re-indent statements), so it stays."""
    keys: Set[_Key] = set()
    for node in walk_of(original, cst.If):
        test = code_of(node.test).strip()
        if _only_pass(node.body):
            keys.add(("if", test))
        if isinstance(node.orelse, cst.Else) and _only_pass(node.orelse.body):
            keys.add(("else", test))
    return keys


def _only_pass(block: cst.BaseSuite) -> bool:
    statements = block.body
    return all(isinstance(s, (cst.SimpleStatementLine, cst.Pass)) for s in statements) and all(
        isinstance(small, cst.Pass) for s in statements for small in getattr(s, "body", [s])
    )


def _bare_pass_lines(block: cst.BaseSuite) -> Optional[List[cst.EmptyLine]]:
    """The comment and blank lines of an indented block that holds one ``pass`` and nothing
    else (its lines above it and below it); None for any other block, or where a comment
    sits on a line of code (``if x:  # note``, ``pass  # note``)."""
    if not isinstance(block, cst.IndentedBlock) or len(block.body) != 1 or block.header.comment is not None:
        return None
    line = block.body[0]
    if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1 or not isinstance(line.body[0], cst.Pass):
        return None
    if line.trailing_whitespace.comment is not None:
        return None
    return [*line.leading_lines, *block.footer]


def _same_comments(first: Sequence[cst.EmptyLine], second: Sequence[cst.EmptyLine]) -> bool:
    return [line.comment.value for line in first if line.comment] == [line.comment.value for line in second if line.comment]


class _Tidy(cst.CSTTransformer):
    """Tidies each block's statements once the blocks inside them are (bottom up)."""

    def __init__(self, user: Set[_Key], read: str) -> None:
        super().__init__()
        self.user = user
        self.read = read
        #: the TODO messages of the branch copies that went (``merged_sites``)
        self.merged: List[str] = []

    def _above(self, stmt: cst.If) -> List[cst.EmptyLine]:
        """The lines above ``stmt`` that stay when it goes: all but a comment block of the
        user's (its lines are in the file as read) right above it that names apex."""
        kept = kept_leading(stmt.leading_lines)
        gone = stmt.leading_lines[len(kept) :]
        if all(line.comment is None or line.comment.value in self.read for line in gone):
            return kept
        return list(stmt.leading_lines)

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.IndentedBlock:
        body, carried = self._tidied(updated_node.body)
        if body is None:
            return updated_node
        if not body:
            return updated_node.with_changes(body=[cst.SimpleStatementLine([cst.Pass()], leading_lines=carried)])
        return updated_node.with_changes(body=body, footer=[*carried, *updated_node.footer])

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        body, carried = self._tidied(updated_node.body)
        if body is None:
            return updated_node
        return updated_node.with_changes(body=body, footer=[*carried, *updated_node.footer])

    def _tidied(self, statements: Sequence[cst.BaseStatement]) -> Tuple[Optional[List[cst.BaseStatement]], List[cst.EmptyLine]]:
        """The statements with the emptied ``if`` statements tidied, and the lines left over
        after the last (they go to the block's footer); None where nothing changes."""
        body: List[cst.BaseStatement] = []
        carried: List[cst.EmptyLine] = []
        changed = False
        for stmt in statements:
            kept, lines = self._tidy_if(stmt) if isinstance(stmt, cst.If) else (stmt, None)
            if kept is not stmt or lines is not None:
                changed = True
            if lines is not None:
                carried.extend(lines)
            elif carried:
                kept = kept.with_changes(leading_lines=[*carried, *kept.leading_lines])
                carried = []
                body.append(kept)
            else:
                body.append(kept)
        return (body, carried) if changed else (None, [])

    def _tidy_if(self, stmt: cst.If) -> Tuple[cst.If, Optional[List[cst.EmptyLine]]]:
        """``stmt`` with an emptied ``else`` dropped, and the lines to keep in its place where
        the whole ``if`` goes (None where it stays)."""
        test = code_of(stmt.test).strip()
        ours = ("if", test) not in self.user
        body = _bare_pass_lines(stmt.body) if ours else None
        orelse = stmt.orelse
        if isinstance(orelse, cst.Else) and not orelse.leading_lines and ("else", test) not in self.user:
            other = _bare_pass_lines(orelse.body)
            if other is not None and body is not None and _same_comments(body, other) and pure_test(stmt.test):
                self.merged.extend(read_todos(other))
                return stmt, [*self._above(stmt), *body]
            if other is not None and not any(line.comment for line in other):
                stmt = stmt.with_changes(orelse=None)
        if stmt.orelse is not None or body is None or read_todos(body) or not pure_test(stmt.test):
            return stmt, None
        return stmt, [*self._above(stmt), *body]
