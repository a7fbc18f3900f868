"""LibCST's printing, less a generator per node.

LibCST prints a node through a ``CodegenState`` whose ``record_syntactic_position`` hook
(for the position provider's own state) is a ``contextmanager``: a generator built and
run for every expression and statement printed, for nothing where no positions are
recorded.  ``printed`` gives the same text with that hook a shared no-op context
(DeepLearningExamples' admitted files, every statement: 30 % less time).  Positions are
still worked out through LibCST's hook (``_node_ranges``).

Every expression prints inside another ``contextmanager`` of LibCST's, its
``_parenthesize`` (its parentheses around the hook above).  ``print_parentheses_directly``
makes that one give the hook's own context where a node has no parentheses (nearly every
node) and a plain context object where it has: the same tokens and positions, without a
generator.  The command's worker server calls it (``server_preload``): a program importing
the engine keeps LibCST as it is.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Optional, Type

import libcst as cst
from libcst._nodes.expression import _BaseParenthesizedNode
from libcst._nodes.internal import CodegenState


class _NoPosition:
    """A context that does nothing (what the base hook does, without a generator)."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


_NO_POSITION = _NoPosition()


class _PlainState(CodegenState):
    def record_syntactic_position(
        self, node: cst.CSTNode, *, start_node: Optional[cst.CSTNode] = None, end_node: Optional[cst.CSTNode] = None
    ) -> Any:
        return _NO_POSITION


def printed(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)`` (``module.code`` where ``node`` is ``module``)."""
    state = _PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)
    return "".join(state.tokens)


class _Parenthesized:
    """What LibCST's ``_parenthesize`` does for a node with parentheses: its left ones, the
    position hook around what the node prints inside, then its right ones."""

    __slots__ = ("node", "state", "position")

    def __init__(self, node: Any, state: CodegenState) -> None:
        self.node = node
        self.state = state

    def __enter__(self) -> None:
        for lpar in self.node.lpar:
            lpar._codegen(self.state)
        self.position = self.state.record_syntactic_position(self.node)
        self.position.__enter__()

    def __exit__(
        self, kind: Optional[Type[BaseException]], error: Optional[BaseException], trace: Optional[TracebackType]
    ) -> bool:
        suppressed = bool(self.position.__exit__(kind, error, trace))
        if kind is None:
            for rpar in self.node.rpar:
                rpar._codegen(self.state)
        return suppressed


def _parenthesize(self: Any, state: CodegenState) -> Any:
    if not self.lpar and not self.rpar:  # (a node has both or neither)
        return state.record_syntactic_position(self)
    return _Parenthesized(self, state)


def print_parentheses_directly() -> bool:
    """Put ``_parenthesize`` above in place of LibCST's, for the rest of the process; whether
    it is (not where LibCST's is not the generator this replaces, or a node class has its own)."""
    current = _BaseParenthesizedNode.__dict__.get("_parenthesize")
    if current is _parenthesize:
        return True
    if getattr(current, "__wrapped__", None) is None or _overridden(_BaseParenthesizedNode):
        return False
    _BaseParenthesizedNode._parenthesize = _parenthesize  # type: ignore[method-assign]
    return True


def _overridden(base: type) -> bool:
    """Whether a class below ``base`` defines its own ``_parenthesize``."""
    return any("_parenthesize" in klass.__dict__ or _overridden(klass) for klass in base.__subclasses__())
