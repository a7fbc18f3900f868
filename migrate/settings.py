"""The run's settings: one small immutable object handed to every rule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import FrozenSet, Optional, Tuple

TARGETS = ("native", "shim")
#: the autocast dtype of the native target; bfloat16 also drops loss scaling
DTYPES = ("float16", "bfloat16")
DEFAULT_TARGET_TORCH: Tuple[int, int] = (2, 4)
#: the torch releases the migrated code is written for (``--target-torch`` below the first is refused)
SUPPORTED_TORCH: Tuple[Tuple[int, int], Tuple[int, int]] = ((2, 2), (2, 15))


@dataclass(frozen=True)
class Settings:
    """``target``: ``native`` (plain PyTorch) or ``shim`` (``apexcompat.amp``, the smallest
    safe change); ``target_torch``: the oldest torch the migrated code must run on;
    ``select``/``ignore``: rule-code prefixes (``APX1`` selects the whole family);
    ``dtype``: the native autocast dtype (``bfloat16``: no GradScaler, no loss scaling)."""

    target: str = "native"
    target_torch: Tuple[int, int] = DEFAULT_TARGET_TORCH
    select: Optional[FrozenSet[str]] = None
    ignore: FrozenSet[str] = field(default_factory=frozenset)
    dtype: str = "float16"

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"target must be one of {TARGETS}, not {self.target!r}")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype must be one of {DTYPES}, not {self.dtype!r}")

    def code_enabled(self, code: str) -> bool:
        if any(code.startswith(prefix) for prefix in self.ignore):
            return False
        return self.select is None or any(code.startswith(p) for p in self.select)

    def torch_at_least(self, major: int, minor: int) -> bool:
        return self.target_torch >= (major, minor)
