"""apexcompat's own one-line notices on stderr (never apex's stdout lines).

They go through the ``apexcompat.notice`` logger, which writes each message unformatted to
the *current* ``sys.stderr`` and does not propagate to ``apexcompat`` (whose handler writes
apex's lines to stdout). Each distinct message is given once per process (until amp's state
is reset).
"""

from __future__ import annotations

import logging
import sys
from typing import Set

__all__ = ["notice_once"]

_logger = logging.getLogger("apexcompat.notice")


class _CurrentStderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of the call (tests swap it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # logging.StreamHandler.__init__ assigns it
        pass


if not _logger.handlers:
    _logger.addHandler(_CurrentStderrHandler())
    _logger.propagate = False
if _logger.level == logging.NOTSET:
    _logger.setLevel(logging.INFO)

_given: Set[str] = set()


def notice_once(message: str) -> None:
    """Log ``message`` (prefixed ``apexcompat: ``) on stderr unless it was given already."""
    if message in _given:
        return
    _given.add(message)
    _logger.info("apexcompat: %s", message)


def forget_notices() -> None:
    """Allow every notice again (amp's ``reset_state`` calls this)."""
    _given.clear()
