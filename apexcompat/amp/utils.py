"""Casting helpers for ``amp.initialize``: the value walker behind the patched ``forward``,
and the batchnorm-aware conversion of a network to a half type (spec §3.9)."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any

import torch

__all__ = [
    "cast_value",
    "TypeCaster",
    "is_fp32_batchnorm",
    "convert_module",
    "convert_network",
]


def _is_numpy_array(value: Any) -> bool:
    numpy = sys.modules.get("numpy")  # never import numpy just to say "no"
    return numpy is not None and isinstance(value, numpy.ndarray)


def _cast_leaf(value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(dtype) if value.is_floating_point() else value
    return value.to(dtype)


def cast_value(value: Any, dtype: torch.dtype) -> Any:
    """Cast every floating-point tensor inside ``value`` to ``dtype``, walking containers
    the way apex did.

    * a Tensor: ``.to(dtype)`` if floating point, else unchanged;
    * ``str``/``bytes`` and numpy arrays: unchanged;
    * any other object with a ``to`` attribute (custom batch classes, even modules):
      ``value.to(dtype)``;
    * a Mapping: a new plain ``dict`` with keys and values cast;
    * any other iterable: ``type(value)(cast items)`` — lists, tuples and sets keep their
      type; a namedtuple raises ``TypeError`` exactly as under apex;
    * anything else (numbers, ``None``): unchanged.
    """
    if isinstance(value, torch.Tensor):
        return _cast_leaf(value, dtype)
    if isinstance(value, (str, bytes)) or _is_numpy_array(value):
        return value
    if hasattr(value, "to"):
        return _cast_leaf(value, dtype)
    if isinstance(value, Mapping):
        return {cast_value(k, dtype): cast_value(v, dtype) for k, v in value.items()}
    if isinstance(value, Iterable):
        container: Any = type(value)
        return container(cast_value(v, dtype) for v in value)
    return value


class TypeCaster:
    """``cast_value`` bound to one dtype, as a picklable callable (so a model whose
    ``forward`` holds it can still be saved with ``torch.save(model)``)."""

    __slots__ = ("dtype",)

    def __init__(self, dtype: torch.dtype) -> None:
        self.dtype = dtype

    def __call__(self, value: Any) -> Any:
        return cast_value(value, self.dtype)

    def __getstate__(self):
        return self.dtype

    def __setstate__(self, state) -> None:
        self.dtype = state

    def __repr__(self) -> str:
        return f"TypeCaster({self.dtype})"


def is_fp32_batchnorm(module: torch.nn.Module) -> bool:
    """True for the modules ``keep_batchnorm_fp32`` keeps in float32: every affine
    ``_BatchNorm`` (BatchNorm1d/2d/3d, their lazy forms, SyncBatchNorm and subclasses).
    A batchnorm with ``affine=False``, InstanceNorm, LayerNorm, GroupNorm are converted."""
    return isinstance(module, torch.nn.modules.batchnorm._BatchNorm) and module.affine is True


def convert_module(module: torch.nn.Module, dtype: torch.dtype) -> None:
    """Convert ``module``'s own (not its children's) floating-point parameters, their
    existing gradients and its floating-point buffers to ``dtype``, in place.

    Parameters keep their identity (``param.data`` is replaced), so optimizers that already
    hold them stay valid. Integer buffers such as ``num_batches_tracked`` are untouched.
    """
    for param in module.parameters(recurse=False):
        if param.is_floating_point():
            param.data = param.data.to(dtype=dtype)
        grad = param.grad
        if grad is not None and grad.is_floating_point():
            grad.data = grad.data.to(dtype=dtype)
    for buf in module.buffers(recurse=False):
        if buf.is_floating_point():
            buf.data = buf.data.to(dtype=dtype)


def convert_network(network: torch.nn.Module, dtype: torch.dtype) -> torch.nn.Module:
    """Convert every submodule of ``network`` to ``dtype`` except affine batchnorms, which
    stay float32; RNNs get ``flatten_parameters()`` afterwards. Returns ``network``."""
    for module in network.modules():
        if is_fp32_batchnorm(module):
            continue
        convert_module(module, dtype)
        if isinstance(module, torch.nn.RNNBase):
            module.flatten_parameters()
    return network
