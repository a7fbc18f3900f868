"""Small tensor-type helpers apex kept in ``apex.amp.compat`` (a visible submodule).

Torch version differences themselves are detected in ``apexcompat._compat``.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["is_tensor_like", "is_floating_point", "scalar_python_val", "filter_attrs"]


def is_tensor_like(x: Any) -> bool:
    """Whether ``x`` is a tensor."""
    return torch.is_tensor(x)


def is_floating_point(x: Any) -> bool:
    """Whether ``x`` is a floating-point tensor."""
    return torch.is_tensor(x) and x.is_floating_point()


def scalar_python_val(x: Any) -> Any:
    """A one-element tensor's value as a Python number (other values unchanged)."""
    if torch.is_tensor(x):
        return x.item()
    return x


def filter_attrs(module: Any, attrs: Any) -> list:
    """The names in ``attrs`` that ``module`` actually has."""
    return [name for name in attrs if hasattr(module, name)]
