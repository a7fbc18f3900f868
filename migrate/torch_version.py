"""The installed torch's X.Y (the torch a migrated file will run under), read without
importing torch.

``importlib.metadata`` answers, but importing it (``email``, ``zipfile``, ``csv``...) cost
every run more than the rest of its settings, before the command could start its workers.
A wheel's metadata folder carries the version in its name (``torch-2.13.0+cpu.dist-info``),
so the folders of ``sys.path`` are looked at first, in the order ``importlib.metadata``
searches them; the first folder holding a torch distribution answers where its name gives
the version, and ``importlib.metadata`` answers everywhere else (an ``egg-info`` without a
version in its name, a distribution found only by another finder, no torch at all).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Iterable, Optional, Tuple

#: ``torch-<version>.dist-info`` / ``torch-<version>[-pyX.Y].egg-info``, the name as pip
#: writes it (lower case) or in any case
_FOLDER = re.compile(r"torch-(\d+)\.(\d+)[^-]*(?:-py[^-]*)?\.(?:dist|egg)-info", re.IGNORECASE)
_ANY_TORCH = re.compile(r"torch(?:-[^-]*)*\.(?:dist|egg)-info", re.IGNORECASE)


def installed_torch_version(path: Optional[Iterable[str]] = None) -> Optional[Tuple[int, int]]:
    """X.Y of the torch distribution ``path`` (default ``sys.path``) holds first; None where
    none is installed."""
    for folder in sys.path if path is None else path:
        try:
            names = os.listdir(folder or ".")
        except OSError:
            continue  # a zip file, a missing folder: importlib.metadata looks there
        found = [name for name in names if _ANY_TORCH.fullmatch(name)]
        if not found:
            continue
        match = _FOLDER.fullmatch(found[0]) if len(found) == 1 else None
        if match is not None:
            return int(match[1]), int(match[2])
        break  # no version in the name, or two distributions: the metadata decides
    return _from_metadata()


def _from_metadata() -> Optional[Tuple[int, int]]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        text = version("torch")
    except PackageNotFoundError:
        return None
    match = re.match(r"(\d+)\.(\d+)", text)
    return (int(match[1]), int(match[2])) if match else None
