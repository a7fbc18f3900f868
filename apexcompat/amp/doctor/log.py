"""The doctor's logger, ``apexcompat.diagnose``: its own handler on the *current*
``sys.stderr``, and no propagation, so nothing it says reaches the ``apexcompat`` stdout
handler that carries apex's lines.  Re-route it like any logger (remove
:func:`diagnose_stderr_handler`, add your own)."""

from __future__ import annotations

import logging
import sys

LOGGER_NAME = "apexcompat.diagnose"
PREFIX = "apexcompat doctor: "


class _CurrentStderrHandler(logging.StreamHandler):
    """A stream handler bound to whatever ``sys.stderr`` is at the time of each record."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self):  # noqa: D401 - property
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # logging.StreamHandler.__init__ assigns it
        pass


logger = logging.getLogger(LOGGER_NAME)
_handler = _CurrentStderrHandler()
if logger.level == logging.NOTSET:
    logger.setLevel(logging.INFO)
if not logger.handlers:
    logger.addHandler(_handler)
    logger.propagate = False


def diagnose_stderr_handler() -> logging.Handler:
    """The handler installed by default on ``apexcompat.diagnose``."""
    return _handler


def say(message: str, level: int = logging.INFO) -> None:
    """One report (possibly several lines), prefixed so it can be grepped."""
    logger.log(level, PREFIX + message)
