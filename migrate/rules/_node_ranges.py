"""Node positions with the values of LibCST's ``PositionProvider``, at a fraction of its cost.

LibCST's provider turns every token into a line and column and builds two ``CodePosition``
objects and a ``CodeRange`` for each of the file's nodes, then copies the whole mapping;
a rule reports on a handful of them.  This provider generates the code once counting
characters, remembers where each line starts and each node's start and end offsets, and
turns an offset pair into a ``CodeRange`` only for the nodes a rule asks about.

The values are the same: LibCST splits each token on ``\\r\\n``, ``\\r`` and ``\\n``, so a
line starts after every such match inside a token, and a column counts the characters
since the last line start; the syntactic positions of ``record_syntactic_position``
(with their hoisted start and end nodes) are recorded the way LibCST records them.

During a file's run (``_tree.printing_by_statement``) the offsets are worked out for the
top-level statement holding the node asked about only, and kept per statement object: a
rule's output shares most statements with its input, so the next rule's positions mostly
come from offsets already known.  A top-level statement starts a line, and its code does not
depend on what comes before it, so a node's line is the lines before its statement (counted
in the statements' texts: most are the file's own, ``StatementTexts.read_source``) plus its
line within it, and its column is the same.  Inside a long statement, the statement holding
the node is printed alone instead, indented as in its module, and placed by the stdlib tree
(``nested_lines``) or by where its text occurs in the long one's.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from types import TracebackType
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Type

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import BaseMetadataProvider, CodePosition, CodeRange

from ..nested_lines import statement_line
from ._printing import printed
from ._tree import VERIFY_ENV, StatementTexts, active_statement_texts

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

_NEWLINE = re.compile(r"\r\n?|\n")

#: node -> (start offset, end offset) in the generated code
_Offsets = Dict[cst.CSTNode, Tuple[int, int]]


class _OffsetCodegenState(CodegenState):
    """Generates the code of a module, recording character offsets instead of positions."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.line_starts: List[int] = [0]
        self.offsets: _Offsets = {}
        self._starts: List[int] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            base = self.offset
            self.line_starts.extend(base + match.end() for match in _NEWLINE.finditer(value))
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self._starts.pop()
        if node not in self.offsets:  # a syntactic position recorded inside wins
            self.offsets[node] = (start, self.offset)

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: Optional[cst.CSTNode] = None,
        end_node: Optional[cst.CSTNode] = None,
    ) -> "_SyntacticPosition":
        return _SyntacticPosition(self, node, start_node, end_node)


class _SyntacticPosition:
    """The context in which LibCST generates the syntactic part of a node."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self,
        state: _OffsetCodegenState,
        node: cst.CSTNode,
        start_node: Optional[cst.CSTNode],
        end_node: Optional[cst.CSTNode],
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(
        self,
        kind: Optional[Type[BaseException]],
        error: Optional[BaseException],
        trace: Optional[TracebackType],
    ) -> None:
        offsets = self.state.offsets
        start = offsets[self.start_node][0] if self.start_node is not None else self.start
        end = offsets[self.end_node][1] if self.end_node is not None else self.state.offset
        offsets[self.node] = (start, end)


def _position_in(line_starts: List[int], lines_before: int, offset: int) -> CodePosition:
    """The position of ``offset`` in a text of ``line_starts`` that starts a line after
    ``lines_before`` others."""
    line = bisect_right(line_starts, offset)
    return CodePosition(lines_before + line, offset - line_starts[line - 1])


class _Ranges(Mapping[cst.CSTNode, CodeRange]):
    """Node -> its ``CodeRange``, worked out from the offsets when asked."""

    def __init__(self, offsets: _Offsets, line_starts: List[int]) -> None:
        self._offsets = offsets
        self._line_starts = line_starts

    def _position(self, offset: int) -> CodePosition:
        return _position_in(self._line_starts, 0, offset)

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._offsets[node]
        return CodeRange(self._position(start), self._position(end))

    def __contains__(self, node: object) -> bool:
        return node in self._offsets

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)


class _StatementOffsets(NamedTuple):
    """A statement printed on its own: its nodes' offsets, its line starts (both from its own
    start) and its text."""

    offsets: _Offsets
    line_starts: List[int]
    text: str


def _printed(module: cst.Module, statement: cst.CSTNode, indents: Sequence[str] = ()) -> _StatementOffsets:
    """``statement`` printed on its own with offsets; a nested one indented by ``indents``
    (its blocks' indentations, outermost first) as it is in its module."""
    state = _OffsetCodegenState(module)
    for indent in indents:
        state.increase_indent(indent)
    statement._codegen(state)
    return _StatementOffsets(state.offsets, state.line_starts, "".join(state.tokens))


def _statement_offsets(module: cst.Module, statement: cst.CSTNode, texts: StatementTexts) -> _StatementOffsets:
    """A top-level ``statement``'s offsets, printed once (its text learnt on the way)."""

    def offsets_of(statement: cst.CSTNode) -> _StatementOffsets:
        found = _printed(module, statement)
        texts.learn(module, statement, found.text)
        return found

    return texts.fact(_offsets_kind(module), statement, offsets_of)


def _offsets_kind(module: cst.Module) -> str:
    return f"offsets {module.default_indent!r} {module.default_newline!r}"


#: the nodes whose ``indent`` indents what they hold
_INDENTING = frozenset({cst.IndentedBlock, cst.Match}) if hasattr(cst, "Match") else frozenset({cst.IndentedBlock})


def _printable_alone(statement: cst.CSTNode, parent: cst.CSTNode) -> bool:
    """Whether ``statement`` prints alone as it prints in its module, from its first line:
    a statement line, or a compound statement but an ``elif`` (alone it would print ``if``)
    and a decorated definition (its first line is its first decorator's)."""
    if type(statement) is cst.SimpleStatementLine:
        return True
    if not isinstance(statement, cst.BaseCompoundStatement) or getattr(statement, "decorators", ()):
        return False
    return not (type(statement) is cst.If and type(parent) is cst.If)


def print_by_statement(module: cst.Module, texts: StatementTexts) -> str:
    """``module.code``, learning each top-level statement's text and nodes' offsets into
    ``texts`` on the way (for the positions and printings of the trees that follow)."""
    if module.body and module.has_trailing_newline:
        for statement in module.body:
            _statement_offsets(module, statement, texts)
        code = texts.code(module)
        if code is not None:
            return code
    return printed(module, module)


def _whole_module_ranges(module: cst.Module) -> _Ranges:
    state = _OffsetCodegenState(module)
    module._codegen(state)
    return _Ranges(state.offsets, state.line_starts)


class _StatementwiseRanges(Mapping[cst.CSTNode, CodeRange]):
    """Node -> its ``CodeRange``, from the offsets of the top-level statement holding it;
    the module itself and its header and footer lines from a whole printing."""

    def __init__(self, module: cst.Module, texts: StatementTexts) -> None:
        self._module = module
        self._texts = texts
        header = _OffsetCodegenState(module)
        for line in module.header:
            line._codegen(header)
        self._header_lines = len(header.line_starts) - 1
        self._whole: Optional[_Ranges] = None
        self._index: Optional[Dict[int, int]] = None
        #: how many lines the statements before each statement of the body take, from the first on
        self._lines_above: List[int] = [0]

    def _walked_to(self, node: cst.CSTNode) -> Optional[cst.CSTNode]:
        """The top-level statement holding ``node``, found by walking the statements in turn
        (their walks are kept: the parent links of the same tree are made from them); a
        statement walked for the first time is where its nodes are looked up from then on."""
        texts = self._texts
        for statement in self._module.body:
            texts.statement_walk(statement)
            if texts.top_statement(node) is statement:
                return statement
        return None

    def _nested_range(self, node: cst.CSTNode, holder: cst.CSTNode, index: int) -> Optional[CodeRange]:
        """The range of ``node`` from a printing of the statement holding it alone, placed
        in its top-level statement ``holder`` (the ``index``-th) without printing that: a
        statement of a thousand lines is not printed for a call on one of them."""
        chain = self._texts.chain_to(node)
        if chain is None or chain[0] is not holder:
            return None
        last = next((k for k in range(len(chain) - 1, 0, -1) if _printable_alone(chain[k], chain[k - 1])), None)
        if last is None:
            return None
        inner = chain[last]
        module = self._module
        # (a ``match`` indents its cases by its own ``indent``, each case's block by the block's)
        indents = [
            module.default_indent if block.indent is None else block.indent
            for block in chain[:last]
            if type(block) in _INDENTING
        ]
        part = self._texts.fact(
            f"alone {indents!r} {_offsets_kind(module)}", inner, lambda inner: _printed(module, inner, indents)
        )
        found = part.offsets.get(node)
        above = self._lines_into(holder, chain[: last + 1], part.text) if found is not None else None
        if found is None or above is None:
            return None
        lines_before = self._header_lines + self._lines_before(index) + above
        return CodeRange(*(_position_in(part.line_starts, lines_before, offset) for offset in found))

    def _lines_into(self, holder: cst.CSTNode, chain: List[cst.CSTNode], alone: str) -> Optional[int]:
        """How many lines of ``holder``'s text come before the text of the statement
        ``chain[-1]`` inside it (printed alone: ``alone``).  For a statement as the file has
        it, from the inner one's first line in the stdlib tree (``nested_lines``); for one a
        rule made, where the inner one's text occurs once in the statement's known text; else
        None."""
        read = self._texts.as_read(holder)
        if read is not None:
            first_line = statement_line(chain, read.first)
            return None if first_line is None else first_line - read.line - len(chain[-1].leading_lines)
        text = self._texts.known_text(self._module, holder)
        where = text.find(alone) if text is not None and alone else -1
        if where < 0 or text.find(alone, where + 1) >= 0 or (where and text[where - 1] not in "\r\n"):
            return None
        return len(_NEWLINE.findall(text, 0, where))

    def _index_of(self) -> Dict[int, int]:
        if self._index is None:
            self._index = {id(statement): index for index, statement in enumerate(self._module.body)}
        return self._index

    def _lines_before(self, index: int) -> int:
        """How many lines the statements before ``module.body[index]`` take: counted in their
        offsets where those are known, else in their texts (cut from the file for those read
        from it: ``StatementTexts.read_source``), which need no offsets."""
        above = self._lines_above
        module, texts = self._module, self._texts
        while len(above) <= index:
            statement = module.body[len(above) - 1]
            if texts.knows(_offsets_kind(module), statement):
                count = len(_statement_offsets(module, statement, texts).line_starts) - 1
            else:
                count = len(_NEWLINE.findall(texts.text(module, statement)))
            above.append(above[-1] + count)
        return above[index]

    def _whole_ranges(self) -> _Ranges:
        if self._whole is None:
            self._whole = _whole_module_ranges(self._module)
        return self._whole

    def _range(self, node: cst.CSTNode) -> Optional[CodeRange]:
        holder = self._texts.top_statement(node)
        index = self._index_of().get(id(holder)) if holder is not None else None
        if index is None:  # not walked yet, or walked as part of an earlier tree sharing it
            holder = self._walked_to(node)
            index = self._index_of().get(id(holder)) if holder is not None else None
        if index is not None:
            nested = self._nested_range(node, holder, index)
            if nested is not None:
                return nested
            part = _statement_offsets(self._module, holder, self._texts)
            found = part.offsets.get(node)
            if found is not None:
                lines_before = self._header_lines + self._lines_before(index)
                start = _position_in(part.line_starts, lines_before, found[0])
                return CodeRange(start, _position_in(part.line_starts, lines_before, found[1]))
        lines_before = self._header_lines
        for statement in self._module.body:
            part = _statement_offsets(self._module, statement, self._texts)
            found = part.offsets.get(node)
            if found is not None:
                start = _position_in(part.line_starts, lines_before, found[0])
                return CodeRange(start, _position_in(part.line_starts, lines_before, found[1]))
            lines_before += len(part.line_starts) - 1
        return None

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        found = self._range(node)
        if found is None:
            return self._whole_ranges()[node]
        if os.environ.get(VERIFY_ENV) and found != self._whole_ranges()[node]:
            raise AssertionError(f"statement-wise position {found} differs from {self._whole_ranges()[node]}")
        return found

    def __contains__(self, node: object) -> bool:
        return node in self._whole_ranges()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._whole_ranges())

    def __len__(self) -> int:
        return len(self._whole_ranges())


class PositionProvider(BaseMetadataProvider[CodeRange]):
    """Each node's syntactic range (what ``libcst.metadata.PositionProvider`` gives)."""

    def _gen(self, wrapper: "MetadataWrapper") -> Mapping[cst.CSTNode, CodeRange]:
        texts = active_statement_texts()
        if texts is not None and wrapper.module.body:
            return _StatementwiseRanges(wrapper.module, texts)
        return _whole_module_ranges(wrapper.module)

    def _gen_impl(self, module: cst.Module) -> None:  # pragma: no cover - _gen does the work
        raise NotImplementedError
