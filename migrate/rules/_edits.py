"""Statement-level edits for rules: replace a statement by several, insert statements before
or after one, and small builders for the code the amp rules emit.

Edits are keyed by the *original* statement node (found while analysing the module in
``visit_Module``) and applied when LibCST leaves the enclosing block, so a rule can plan its
whole rewrite first and nested edits still compose."""

from __future__ import annotations

import ast
import re
import textwrap
from functools import partial
from typing import Any, Callable, Dict, List, Optional, Sequence

import libcst as cst

from ._printing import printed
from ._tree import active_statement_texts
from .base import TODO_PREFIX

#: a list of statements, or a function of the updated statement that returns them
Replacement = Any

_EMPTY_MODULE = cst.Module(body=[])
_printed_alone = partial(printed, _EMPTY_MODULE)


def code_of(node: Any) -> str:
    """The source text of ``node`` (whitespace inside it kept); during a file's run printed
    once per node (the rules compare the texts of the same nodes again and again: three
    calls in five were for a node printed before)."""
    texts = active_statement_texts()
    if texts is None:
        return _printed_alone(node)
    return texts.fact("code", node, _printed_alone)


def same_expression(a: str, b: str) -> bool:
    """Whether two expression texts are the same expression, spacing, parentheses and string
    quotes aside (``level != 'O0'`` and ``(level != "O0")``); texts that do not parse (or are
    empty) are compared as written, stripped."""
    a, b = a.strip(), b.strip()
    if not a or not b:
        return a == b
    try:
        return ast.dump(ast.parse(a, mode="eval")) == ast.dump(ast.parse(b, mode="eval"))
    except SyntaxError:
        return a == b


def statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def expression(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


#: ``growth_interval`` of a GradScaler whose scale must stay where it starts (apex's static
#: loss scale): no run reaches it
NO_GROWTH = "10**9"

#: continuation lines of a TODO comment that is too long for one line
TODO_CONTINUATION = "#   "
TODO_WIDTH = 88


def todo_lines(text: str) -> List[cst.EmptyLine]:
    """``# TODO(apexcompat): text`` as comment lines of at most about 100 characters."""
    chunks = textwrap.wrap(text, TODO_WIDTH - len(TODO_PREFIX), break_long_words=False, break_on_hyphens=False)
    first, rest = (
        chunks[0],
        textwrap.wrap(
            " ".join(chunks[1:]), TODO_WIDTH - len(TODO_CONTINUATION), break_long_words=False, break_on_hyphens=False
        ),
    )
    return [cst.EmptyLine(comment=cst.Comment(TODO_PREFIX + first))] + [
        cst.EmptyLine(comment=cst.Comment(TODO_CONTINUATION + chunk)) for chunk in rest
    ]


def read_todos(lines: Sequence[cst.EmptyLine]) -> List[str]:
    """The TODO messages in ``lines`` (continuation lines joined back)."""
    found: List[str] = []
    current: Optional[List[str]] = None
    for line in lines:
        text = line.comment.value if line.comment is not None else None
        if text is not None and text.startswith(TODO_PREFIX):
            current = [text[len(TODO_PREFIX) :]]
            found.append("")
        elif text is not None and current is not None and text.startswith(TODO_CONTINUATION):
            current.append(text[len(TODO_CONTINUATION) :])
        else:
            current = None
        if current is not None:
            found[-1] = " ".join(current)
    return found


#: a line number a TODO names (``utils/ckpt.py:89``, ``at line 45``): a first run's edits
#: move the lines it points at, so a second run words the same TODO with other numbers
_LINE_NUMBER = re.compile(r"(\.py:|\bline )\d+")


def todo_key(message: str) -> str:
    """``message`` without the line numbers it names: two TODOs with the same key say the
    same thing about a file whose lines moved in between."""
    return _LINE_NUMBER.sub(r"\1#", message)


def comment_line(text: str) -> cst.EmptyLine:
    return cst.EmptyLine(comment=cst.Comment("# " + text))


#: the clause a dropped module-scaler plan (APX252) adds to a file's reason for keeping the shim
_STAND_IN = "; nor can a module-level GradScaler stand in"
_SHIM_TAIL = "; this file keeps apex.amp semantics"


def _without_stand_in(message: str) -> str:
    """``message`` without the module-scaler clause: whether that plan is tried depends on
    which other files of the repository still use apex.amp, which an earlier run changed, so
    two TODOs that differ only there say the same thing."""
    start = message.find(_STAND_IN)
    if start < 0:
        return message
    depth, end = 0, len(message)
    for index in range(start + len(_STAND_IN), len(message)):
        char = message[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth < 0:
                end = index
                break
        elif depth == 0 and message.startswith(_SHIM_TAIL, index):
            end = index
            break
    return message[:start] + message[end:]


#: the clause naming the other files that read the attribute apex.amp is stored on
#: (``_amp_sites``: "scaled through args.amp (read off an object in a.py, b.py)")
_READ_OFF = re.compile(r" \(read off an object in [^()]*\)")


def _without_readers(message: str) -> str:
    """``message`` without the files that read the stored attribute elsewhere: a file that
    stores apex.amp on its own ``args.amp`` and reads it back is one of them until an earlier
    run rewrote it to native, so two TODOs that differ only there say the same thing."""
    return _READ_OFF.sub("", message)


def _same_todo_key(message: str) -> str:
    return todo_key(_without_readers(_without_stand_in(message)))


def with_leading(stmt: Any, lines: Sequence[cst.EmptyLine], *, first: bool = False) -> Any:
    """``stmt`` with ``lines`` added to its leading lines (after the existing ones unless
    ``first``); a TODO already there is not added again."""
    existing = list(stmt.leading_lines)
    present = {_same_todo_key(todo) for todo in read_todos(existing)}
    new: List[cst.EmptyLine] = []
    for group in _todo_groups(lines):
        todo = read_todos(group)
        if not (todo and _same_todo_key(todo[0]) in present):
            new.extend(group)
    if not new:
        return stmt
    return stmt.with_changes(leading_lines=new + existing if first else existing + new)


def _todo_groups(lines: Sequence[cst.EmptyLine]) -> List[List[cst.EmptyLine]]:
    """Split comment lines into groups: a TODO with its continuation lines, or one line."""
    groups: List[List[cst.EmptyLine]] = []
    for line in lines:
        text = line.comment.value if line.comment is not None else ""
        if groups and text.startswith(TODO_CONTINUATION) and read_todos(groups[-1]):
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


def without_todos(lines: Sequence[cst.EmptyLine], drop: Callable[[str], bool]) -> List[cst.EmptyLine]:
    """``lines`` without the TODO comments (continuation lines included) whose message
    ``drop`` accepts."""
    kept: List[cst.EmptyLine] = []
    for group in _todo_groups(lines):
        todo = read_todos(group)
        if not (todo and drop(todo[0])):
            kept.extend(group)
    return kept


def move_leading(source: Any, target: Any) -> Any:
    """``target`` carrying ``source``'s leading lines (comments, blank lines) in front of its own."""
    return target.with_changes(leading_lines=list(source.leading_lines) + list(target.leading_lines))


def trailing_comment(stmt: Any) -> Optional[cst.Comment]:
    """The end-of-line comment of a simple statement line, if any."""
    if isinstance(stmt, cst.SimpleStatementLine):
        return stmt.trailing_whitespace.comment
    return None


def with_trailing_comments(stmt: Any, comments: Sequence[cst.Comment]) -> Any:
    """``stmt`` (a simple statement line) keeping the end-of-line comments of the statements
    it replaces: the last one at the end of its line, earlier ones on lines of their own
    above it (one line holds one comment)."""
    if not comments or not isinstance(stmt, cst.SimpleStatementLine):
        return stmt
    *above, last = comments
    return stmt.with_changes(
        leading_lines=list(stmt.leading_lines) + [cst.EmptyLine(comment=c) for c in above],
        trailing_whitespace=cst.TrailingWhitespace(whitespace=cst.SimpleWhitespace("  "), comment=last),
    )


def kept_leading(lines: Any) -> List[cst.EmptyLine]:
    """The leading lines of a removed statement that stay: all but the comment block right
    above it when that block names apex."""
    kept = list(lines)
    start = len(kept)
    while start > 0 and kept[start - 1].comment is not None:
        start -= 1
    if any("apex" in line.comment.value.lower() for line in kept[start:]):
        del kept[start:]
    return kept


def prepend_lines(stmt: Any, lines: List[cst.EmptyLine]) -> Any:
    """``stmt`` with ``lines`` above its own leading lines, without doubling a blank line."""
    lines = list(lines)
    existing = list(stmt.leading_lines)
    if existing and existing[0].comment is None:
        while lines and lines[-1].comment is None:
            lines.pop()
    if not lines:
        return stmt
    return stmt.with_changes(leading_lines=lines + existing)


class StatementEdits:
    """Planned edits of statements, applied by :meth:`apply` when a block is left."""

    def __init__(self) -> None:
        self.replacements: Dict[Any, Replacement] = {}
        self.before: Dict[Any, List[Any]] = {}
        #: the statements whose comments stay on them, below what is inserted before them
        self.own_comments: set = set()
        self.after: Dict[Any, List[Any]] = {}
        self.groups: Dict[Any, Any] = {}
        #: lines a replacement gave up for the statement after it (see :meth:`lead_next`)
        self._to_next: List[Any] = []

    def __bool__(self) -> bool:
        return bool(self.replacements or self.before or self.after or self.groups)

    def wrap(self, members: Sequence[Any], fn: Callable[[List[Any]], Sequence[Any]]) -> None:
        """Replace the consecutive statements ``members`` together by ``fn(updated members)``."""
        self.groups[members[0]] = (list(members), fn)

    def replace(self, stmt: Any, replacement: Replacement) -> None:
        self.replacements[stmt] = replacement

    def insert_before(self, stmt: Any, new: Sequence[Any], above_comments: bool = False) -> None:
        """``new`` before ``stmt``; the comments above ``stmt`` go above ``new`` unless
        ``above_comments`` (``new`` is no part of what they describe: an import the function
        needs first), where only the blank lines before them do."""
        self.before.setdefault(stmt, []).extend(new)
        if above_comments:
            self.own_comments.add(stmt)

    def insert_after(self, stmt: Any, new: Sequence[Any]) -> None:
        self.after.setdefault(stmt, []).extend(new)

    def planned(self, stmt: Any) -> bool:
        return stmt in self.replacements or stmt in self.before or stmt in self.after

    def lead_next(self, lines: Sequence[Any]) -> None:
        """Called by a replacement while :meth:`apply` runs: ``lines`` (comments of what it
        removes) lead the next statement of the same body; with none after it they go."""
        self._to_next.extend(lines)

    def apply(self, original: Sequence[Any], updated: Sequence[Any]) -> List[Any]:
        body: List[Any] = []
        pairs = list(zip(original, updated))
        skip: set = set()
        carried: List[Any] = []
        for index, (orig, upd) in enumerate(pairs):
            if orig in skip:
                continue
            start = len(body)
            self._apply_one(index, pairs, skip, body)
            if carried and len(body) > start:
                body[start] = body[start].with_changes(leading_lines=[*carried, *body[start].leading_lines])
                carried = []
            carried.extend(self._to_next)
            self._to_next = []
        return body

    def _apply_one(self, index: int, pairs: List[Any], skip: set, body: List[Any]) -> None:
        orig, upd = pairs[index]
        group = self.groups.get(orig)
        if group is not None:
            members, fn = group
            ups = [u for o, u in pairs[index : index + len(members)]]
            skip.update(members[1:])
            body.extend(fn(ups))
            return
        before = self.before.get(orig, [])
        if before:
            # comments above the original statement stay above what is inserted before it
            lead = list(upd.leading_lines)
            cut = len(lead)
            if orig in self.own_comments:
                cut = next((i for i, line in enumerate(lead) if line.comment is not None), cut)
            body.extend([move_leading(upd.with_changes(leading_lines=lead[:cut]), before[0])] + list(before[1:]))
            upd = upd.with_changes(leading_lines=lead[cut:])
        repl = self.replacements.get(orig)
        if repl is None:
            body.append(upd)
        else:
            new = list(repl(upd) if callable(repl) else repl)
            body.extend(new)
        body.extend(self.after.get(orig, []))


def block_body(block: Any, body: List[Any]) -> Any:
    """``block`` with ``body``; an emptied block gets ``pass``.  A block whose statements
    are the very ones it has comes back as it is (kept objects mark what a rule left alone:
    ``reparse``, ``tree_merge``)."""
    if isinstance(block, cst.IndentedBlock) and len(body) == len(block.body) and all(
        new is old for new, old in zip(body, block.body)
    ):
        return block
    if not body:
        body = [cst.SimpleStatementLine([cst.Pass()])]
    if isinstance(block, cst.SimpleStatementSuite):
        if all(isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1 and not s.leading_lines for s in body):
            return block.with_changes(body=[s.body[0] for s in body])
        return cst.IndentedBlock(body=body)
    return block.with_changes(body=body)


def suite_statements(suite: Any) -> List[Any]:
    """The statements of an indented block or a one-line suite, as full statements."""
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    return [cst.SimpleStatementLine([s.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)]) for s in suite.body]


def small_statements(stmt: Any) -> Sequence[Any]:
    """The small statements of a simple statement line; none for a compound statement
    (a ``class`` or ``def`` whose ``body`` is a block, not a list)."""
    return stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ()
