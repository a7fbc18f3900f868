"""What the server process forking the command's workers imports before it serves them
(``early_pool.start_workers``): the engine (LibCST, the rules: each worker forked from the
server has them), and, in that server only, LibCST's printing of parentheses without a
generator per node (``rules._printing.print_parentheses_directly``) and an end without the
interpreter's teardown.

The command stops the server once its workers are done and waits for it (so that their
CPU time is the command's, ``time`` shows it).  The server then exited like any Python
process, freeing every module it imported, object by object: a tenth of a second of the
command's wall time, at its very end, for a process holding nothing to save.  Its workers
leave it through ``os._exit`` (as forked workers always do), so the handler registered
here ends the server alone.  Imported anywhere else (a test, a documentation tool), the
module changes nothing: the importing process keeps its own exit, status and LibCST.

The server's import of the engine is what the first worker waits for, and a sixth of it
went into the docstrings ``dataclasses`` writes for classes without one: the signature of
each of LibCST's generated matcher classes, every annotation (unions of dozens of classes)
printed in full, for a docstring no worker reads.  While the server imports the engine,
``dataclasses`` gets an empty signature instead (``Name()``); everything else is as usual.
"""

from __future__ import annotations

import atexit
import dataclasses
import inspect
import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator


def _imported_by_the_server() -> bool:
    """Whether this import is the preload of a multiprocessing forkserver (its ``main``
    is on the stack: it imports the preload modules before it serves)."""
    server = sys.modules.get("multiprocessing.forkserver")
    main = getattr(server, "main", None)
    code = getattr(main, "__code__", None)
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


class _InspectWithoutSignatures:
    """``inspect`` as ``dataclasses`` reads it, less the signature it prints into the
    docstring of a class that has none."""

    _EMPTY = inspect.Signature()

    def __getattr__(self, name: str) -> Any:
        return getattr(inspect, name)

    def signature(self, *args: Any, **kwargs: Any) -> inspect.Signature:
        return self._EMPTY


@contextmanager
def unsigned_dataclass_docstrings() -> Iterator[None]:
    """Classes made dataclasses meanwhile get ``Name()`` as a missing docstring (where
    ``dataclasses`` reads ``inspect`` as a module attribute of its own: else as usual)."""
    if getattr(dataclasses, "inspect", None) is not inspect:
        yield
        return
    dataclasses.inspect = _InspectWithoutSignatures()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        dataclasses.inspect = inspect  # type: ignore[attr-defined]


def _end_at_once() -> None:
    """Output flushed, the process ends (the exit handlers the engine's imports registered,
    which run after this one, have nothing to do in the server: it logs nothing, starts no
    process of its own)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


if _imported_by_the_server():
    with unsigned_dataclass_docstrings():
        from . import engine  # noqa: F401 - imported for the workers forked from this process
    from .rules._printing import print_parentheses_directly

    atexit.register(_end_at_once)
    print_parentheses_directly()
else:
    from . import engine  # noqa: F401
