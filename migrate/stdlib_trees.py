"""The stdlib ``ast`` tree of a text, parsed once per run.

The index summarises each admitted file, the engine reads the same file's code words, and
the rules' gates and import clean-up read its statements again: each used to parse the
same text on its own, and parsing was a fifth of a run's time.  Trees are kept for the
most recent texts up to a bound on their total size (a tree takes some 35 times its
text's memory).  The early pool's workers are forked before the index is built
(``early_pool``), so they parse their files' texts again; a pool forked later inherits the
index's trees.

The trees are shared: a caller must not change one.
"""

from __future__ import annotations

import ast
import io
import threading
import tokenize
from collections import OrderedDict
from typing import Optional, Tuple, Union

#: the most source text (in characters) whose trees are kept
MAX_TEXT = 4_000_000

_lock = threading.Lock()
#: whether this process ends as soon as its run does (``leave_to_exit``)
_left_to_exit = False
_trees: "OrderedDict[str, Optional[ast.Module]]" = OrderedDict()
_kept_text = 0


def decoded(source: bytes) -> Optional[str]:
    """``source`` as text, decoded as Python reads a file (coding cookie, BOM); None where
    it cannot be."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        return source.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None


def parse(source: Union[str, bytes]) -> Optional[ast.Module]:
    """``ast.parse(source)``, or None where the stdlib rejects it (or cannot decode it)."""
    text = decoded(source) if isinstance(source, bytes) else source
    if text is None:
        return None
    tree, known = _lookup(text)
    if known:
        return tree
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        tree = None
    _remember(text, tree)
    return tree


def _lookup(text: str) -> Tuple[Optional[ast.Module], bool]:
    with _lock:
        if text in _trees:
            _trees.move_to_end(text)
            return _trees[text], True
    return None, False


def _remember(text: str, tree: Optional[ast.Module]) -> None:
    global _kept_text
    if len(text) > MAX_TEXT:
        return
    with _lock:
        if text in _trees:
            return
        _trees[text] = tree
        _kept_text += len(text)
        while _kept_text > MAX_TEXT:
            old, _ = _trees.popitem(last=False)
            _kept_text -= len(old)


def forget() -> None:
    """Drop every kept tree (the end of a run)."""
    global _kept_text
    with _lock:
        _trees.clear()
        _kept_text = 0


def leave_to_exit() -> None:
    """This process ends as soon as its run does, without the interpreter's teardown
    (``cli.command``): ``end_of_run`` keeps the trees, whose freeing, node by node, took a
    tenth of a second of the run's wall time (DeepLearningExamples) for nothing."""
    global _left_to_exit
    _left_to_exit = True


def end_of_run() -> None:
    """A run is over: its trees are dropped (a caller that goes on need not keep them),
    unless the process is about to end (``leave_to_exit``)."""
    if not _left_to_exit:
        forget()
