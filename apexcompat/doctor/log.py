"""The doctor's logger, ``apexcompat.diagnose``: its own handler on the *current*
``sys.stderr``, and no propagation, so nothing it says reaches the ``apexcompat`` stdout
handler that carries apex's lines.  Re-route it like any logger (remove
:func:`diagnose_stderr_handler`, add your own)."""

from __future__ import annotations

import logging

from .._logging import CurrentStreamHandler, own_logger

LOGGER_NAME = "apexcompat.diagnose"
PREFIX = "apexcompat doctor: "

_handler = CurrentStreamHandler("stderr")
logger = own_logger(LOGGER_NAME, _handler)


def diagnose_stderr_handler() -> logging.Handler:
    """The handler installed by default on ``apexcompat.diagnose``."""
    return _handler


def say(message: str, level: int = logging.INFO) -> None:
    """One report (possibly several lines), prefixed so it can be grepped."""
    logger.log(level, PREFIX + message)
