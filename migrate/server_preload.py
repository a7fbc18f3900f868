"""What the server process forking the command's workers imports before it serves them
(``early_pool.start_workers``): the engine (LibCST, the rules: each worker forked from the
server has them), and an end without the interpreter's teardown.

The command stops the server once its workers are done and waits for it (so that their
CPU time is the command's, ``time`` shows it).  The server then exits like any Python
process, freeing every module it imported, object by object: a tenth of a second of the
command's wall time, at its very end, for a process holding nothing to save.  Its
workers leave it through ``os._exit`` (as forked workers always do), so the handler
registered here ends the server alone.
"""

from __future__ import annotations

import atexit
import os
import sys

from . import engine  # noqa: F401 - imported for the workers forked from this process


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


atexit.register(_end_at_once)
