"""LibCST's parser, less the validation of its own output.

Every LibCST node checks itself as it is built (``CSTNode.__post_init__`` calls
``_validate``: parentheses in pairs, whitespace made of whitespace, names that are
identifiers).  A rule building a node needs that check; the parser does not: it builds
nodes from a text it has just read, and those checks were a sixth of a parse's time (a
parse is a fifth of a run's).  While ``parse_module`` runs, nodes are built without it.

The check is switched off on the node base class for the duration of the call, so it
holds for nodes built by any thread meanwhile: callers parse from the thread doing the
work (the command's other thread only starts its worker processes).  Where the installed
LibCST does not build its nodes that way, parsing is LibCST's own.
"""

from __future__ import annotations

import threading
from typing import Union

import libcst as cst
from libcst import CSTNode

_lock = threading.Lock()


def _unchecked(self: CSTNode) -> None:
    """A node's ``__post_init__`` while the parser builds it."""


def _builds_through_post_init() -> bool:
    """Whether every node class takes its check from ``CSTNode.__post_init__`` (none
    defines a ``__post_init__`` of its own), the hook switched off here."""
    hook = CSTNode.__dict__.get("__post_init__")
    if hook is None:
        return False
    stack = list(CSTNode.__subclasses__())
    while stack:
        cls = stack.pop()
        if "__post_init__" in cls.__dict__:
            return False
        stack.extend(cls.__subclasses__())
    return True


_TRUSTED = _builds_through_post_init()


_DEFAULT_CONFIG = cst.PartialParserConfig()


def parse_module(source: Union[str, bytes], config: cst.PartialParserConfig = _DEFAULT_CONFIG) -> cst.Module:
    """``libcst.parse_module(source, config)``: the same tree, or the same error."""
    if not _TRUSTED:
        return cst.parse_module(source, config)
    with _lock:
        checked = CSTNode.__dict__["__post_init__"]
        CSTNode.__post_init__ = _unchecked  # type: ignore[method-assign]
        try:
            return cst.parse_module(source, config)
        finally:
            CSTNode.__post_init__ = checked  # type: ignore[method-assign]
