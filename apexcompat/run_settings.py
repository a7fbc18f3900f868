"""Run-wide switches that change what ``amp.initialize`` does without editing the script:
``APEXCOMPAT_HALF_DTYPE`` (``float16``/``bfloat16``) and ``APEXCOMPAT_OPT_LEVEL``
(``O0``..``O3``), and their Python counterparts :func:`set_half_dtype` and
:func:`set_opt_level_override`.

Both are read at each ``initialize`` call (a value set from Python wins over the
environment) and reset with amp's state. Not part of apex's API, so they live outside
``apexcompat.amp`` (whose names are apex's): ``apexcompat.set_half_dtype(...)``.
"""

from __future__ import annotations

import os
from typing import Optional, Union

import torch

__all__ = [
    "HALF_DTYPE_ENV",
    "OPT_LEVEL_ENV",
    "set_half_dtype",
    "set_opt_level_override",
    "half_dtype_override",
    "opt_level_override",
]

HALF_DTYPE_ENV = "APEXCOMPAT_HALF_DTYPE"
OPT_LEVEL_ENV = "APEXCOMPAT_OPT_LEVEL"
_HALF_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}
_OPT_LEVELS = ("O0", "O1", "O2", "O3")

_half_dtype: Optional[torch.dtype] = None
_opt_level: Optional[str] = None


def _parse_half_dtype(value: Union[str, torch.dtype], source: str) -> torch.dtype:
    if isinstance(value, torch.dtype) and value in _HALF_DTYPES.values():
        return value
    if isinstance(value, str):
        name = value.strip().lower()
        name = name[len("torch."):] if name.startswith("torch.") else name
        if name in _HALF_DTYPES:
            return _HALF_DTYPES[name]
    raise ValueError(f"{source}={value!r} is not a half dtype: valid values are 'float16' and 'bfloat16'")


def _parse_opt_level(value: str, source: str) -> str:
    if isinstance(value, str) and value.strip().upper() in _OPT_LEVELS:
        return value.strip().upper()
    raise ValueError(
        f"{source}={value!r} is not an opt level: valid values are 'O0', 'O1', 'O2', 'O3' "
        "(the letter O, not the number zero)"
    )


def set_half_dtype(dtype: Union[str, torch.dtype, None]) -> None:
    """Use ``dtype`` (``torch.bfloat16`` or ``torch.float16``, or their names) wherever the
    opt levels use float16, from the next ``initialize`` on; ``None`` goes back to
    ``APEXCOMPAT_HALF_DTYPE`` (unset: float16, apex's type)."""
    global _half_dtype
    _half_dtype = None if dtype is None else _parse_half_dtype(dtype, "half dtype")


def set_opt_level_override(opt_level: Optional[str]) -> None:
    """Make the next ``initialize`` calls use ``opt_level`` (``"O0"``..``"O3"``) whatever
    the script passes; ``None`` goes back to ``APEXCOMPAT_OPT_LEVEL`` (unset: no override)."""
    global _opt_level
    _opt_level = None if opt_level is None else _parse_opt_level(opt_level, "opt level override")


def half_dtype_override() -> Optional[torch.dtype]:
    """The half dtype asked for (Python setting, else the environment), None if neither."""
    if _half_dtype is not None:
        return _half_dtype
    value = os.environ.get(HALF_DTYPE_ENV, "").strip()
    return _parse_half_dtype(value, HALF_DTYPE_ENV) if value else None


def opt_level_override() -> Optional[str]:
    """The opt level forced (Python setting, else the environment), None if neither."""
    if _opt_level is not None:
        return _opt_level
    value = os.environ.get(OPT_LEVEL_ENV, "").strip()
    return _parse_opt_level(value, OPT_LEVEL_ENV) if value else None


def source_of_opt_level() -> str:
    """How to name the override in a notice."""
    return "set_opt_level_override" if _opt_level is not None else OPT_LEVEL_ENV


def source_of_half_dtype() -> str:
    return "set_half_dtype" if _half_dtype is not None else HALF_DTYPE_ENV


def _reset() -> None:
    global _half_dtype, _opt_level
    _half_dtype = None
    _opt_level = None


def _register_reset() -> None:
    from ._notices import forget_notices
    from .amp._amp_state import _reset_hooks

    for hook in (_reset, forget_notices):
        if hook not in _reset_hooks:
            _reset_hooks.append(hook)


_register_reset()
