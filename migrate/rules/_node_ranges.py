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
"""

from __future__ import annotations

import re
from bisect import bisect_right
from types import TracebackType
from typing import TYPE_CHECKING, Dict, Iterator, List, Mapping, Optional, Tuple, Type

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import BaseMetadataProvider, CodePosition, CodeRange

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


class _Ranges(Mapping[cst.CSTNode, CodeRange]):
    """Node -> its ``CodeRange``, worked out from the offsets when asked."""

    def __init__(self, offsets: _Offsets, line_starts: List[int]) -> None:
        self._offsets = offsets
        self._line_starts = line_starts

    def _position(self, offset: int) -> CodePosition:
        line = bisect_right(self._line_starts, offset)
        return CodePosition(line, offset - self._line_starts[line - 1])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        start, end = self._offsets[node]
        return CodeRange(self._position(start), self._position(end))

    def __contains__(self, node: object) -> bool:
        return node in self._offsets

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)


class PositionProvider(BaseMetadataProvider[CodeRange]):
    """Each node's syntactic range (what ``libcst.metadata.PositionProvider`` gives)."""

    def _gen(self, wrapper: "MetadataWrapper") -> Mapping[cst.CSTNode, CodeRange]:
        state = _OffsetCodegenState(wrapper.module)
        wrapper.module._codegen(state)
        return _Ranges(state.offsets, state.line_starts)

    def _gen_impl(self, module: cst.Module) -> None:  # pragma: no cover - _gen does the work
        raise NotImplementedError
