"""LibCST's printing, less a generator per node.

LibCST prints a node through a ``CodegenState`` whose ``record_syntactic_position`` hook
(for the position provider's own state) is a ``contextmanager``: a generator built and
run for every expression and statement printed, for nothing where no positions are
recorded.  ``printed`` gives the same text with that hook a shared no-op context
(DeepLearningExamples' admitted files, every statement: 30 % less time).  Positions are
still worked out through LibCST's hook (``_node_ranges``).
"""

from __future__ import annotations

from typing import Any, Optional

import libcst as cst
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
