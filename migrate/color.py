"""Colour for the text output: on only for a terminal (``--color auto``, the default) unless
``NO_COLOR`` is set, always with ``--color always``, never with ``--color never``."""

from __future__ import annotations

import os
from typing import Optional, TextIO

CHOICES = ("auto", "always", "never")

_CODES = {"bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36", "dim": "2"}


def wants_color(choice: str, stream: TextIO, environ: Optional[dict] = None) -> bool:
    """Whether to colour what goes to ``stream``: ``--color always|never`` decide; ``auto``
    colours a terminal unless ``NO_COLOR`` is set to anything non-empty (no-color.org)."""
    if choice == "always":
        return True
    if choice == "never":
        return False
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


class Palette:
    """Wraps text in ANSI colours, or leaves it as it is when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *styles: str) -> str:
        if not self.enabled or not styles:
            return text
        return f"\033[{';'.join(_CODES[s] for s in styles)}m{text}\033[0m"


PLAIN = Palette(False)
