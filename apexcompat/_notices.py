"""apexcompat's own one-line notices on stderr (never apex's stdout lines).

They go through the ``apexcompat.notice`` logger, which writes each message unformatted to
the *current* ``sys.stderr`` and does not propagate to ``apexcompat`` (whose handler writes
apex's lines to stdout). Each distinct message is given once per process (until amp's state
is reset).
"""

from __future__ import annotations

from typing import Set

from ._logging import CurrentStreamHandler, own_logger

__all__ = ["notice_once"]

_logger = own_logger("apexcompat.notice", CurrentStreamHandler("stderr"))

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
