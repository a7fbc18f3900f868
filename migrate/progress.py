"""A progress bar on stderr for long runs: drawn only when stderr is a terminal, and only
once the run has taken more than a second (short runs print nothing extra)."""

from __future__ import annotations

import sys
import time
from typing import Optional, TextIO

DELAY_S = 1.0
REFRESH_S = 0.1
WIDTH = 30


class Progress:
    def __init__(self, total: int, stream: Optional[TextIO] = None, enabled: bool = True) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.total = total
        self.done = 0
        isatty = getattr(self.stream, "isatty", None)
        self.enabled = enabled and total > 0 and bool(isatty and isatty())
        self._start = time.monotonic()
        self._last = 0.0
        self._drawn = False

    def advance(self, n: int = 1) -> None:
        self.done += n
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._start < DELAY_S or now - self._last < REFRESH_S:
            return
        self._last = now
        filled = WIDTH * self.done // self.total
        self.stream.write(f"\r[{'#' * filled}{'.' * (WIDTH - filled)}] {self.done}/{self.total} files")
        self.stream.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * (WIDTH + 30) + "\r")
            self.stream.flush()
            self._drawn = False
