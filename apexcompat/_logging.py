"""The ``apexcompat`` logger: every line apex printed goes through it.

By default the logger writes each message, unformatted, to whatever ``sys.stdout`` is at
the time of the call, so output is byte-for-byte what apex printed with ``print``.  Users
re-route it with ordinary logging configuration, e.g.::

    import logging
    log = logging.getLogger("apexcompat")
    log.removeHandler(apexcompat_stdout_handler())   # or log.handlers.clear()
    log.propagate = True                              # now root handlers see it
"""

from __future__ import annotations

import logging
import sys

LOGGER_NAME = "apexcompat"


class CurrentStreamHandler(logging.StreamHandler):
    """A stream handler bound to the *current* ``sys.stdout`` or ``sys.stderr`` (either may
    be swapped by ``contextlib.redirect_stdout`` or a test runner after import), writing each
    message unformatted."""

    def __init__(self, stream_name: str = "stdout") -> None:
        self._stream_name = stream_name
        super().__init__(getattr(sys, stream_name))
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self):  # noqa: D401 - property
        return getattr(sys, self._stream_name)

    @stream.setter
    def stream(self, value) -> None:  # logging.StreamHandler.__init__ assigns it
        pass


def own_logger(name: str, handler: logging.Handler) -> logging.Logger:
    """The logger ``name`` with ``handler`` as its only output and no propagation, unless
    the user configured handlers for it before importing us (those are kept).  Either way it
    passes INFO records, which would otherwise fall to root's WARNING default."""
    log = logging.getLogger(name)
    if log.level == logging.NOTSET:
        log.setLevel(logging.INFO)
    if not log.handlers:
        log.addHandler(handler)
        log.propagate = False
    return log


_default_handler = CurrentStreamHandler("stdout")
logger = own_logger(LOGGER_NAME, _default_handler)


def apexcompat_stdout_handler() -> logging.Handler:
    """The handler installed by default (remove it to silence or re-route output)."""
    return _default_handler


def emit(message: str, level: int = logging.INFO, stacklevel: int = 1) -> None:
    """Emit one apex-compatible line (``print(message)`` in apex).

    ``stacklevel`` counts the wrappers between the amp code that printed and this function,
    so ``%(module)s:%(lineno)d`` in a user's format points at that code."""
    logger.log(level, message, stacklevel=stacklevel + 1)
