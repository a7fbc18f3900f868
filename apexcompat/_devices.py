"""Which device a model lives on, and which half-precision dtype amp uses there.

apex only ran on CUDA. apexcompat infers the device type from the model's own tensors and
picks the lower-precision dtype for it: float16 on CUDA (apex's type) and on other
accelerators; on the CPU float16 where the installed torch can autocast and multiply in
float16 (torch >= 2.2), else bfloat16, announced once with a warning.
"""

from __future__ import annotations

import warnings
from typing import Iterable, Union

import torch

from . import _compat

__all__ = ["model_device_type", "half_dtype_for", "legacy_type_string", "legacy_float_type_string"]

ModelsArg = Union[torch.nn.Module, Iterable[torch.nn.Module], None]

_warned_cpu_bfloat16 = False


def _tensors_of(models: ModelsArg):
    if isinstance(models, torch.nn.Module):
        models = [models]
    elif not isinstance(models, (list, tuple)):
        return
    for model in models:
        if isinstance(model, torch.nn.Module):
            yield from model.parameters()
            yield from model.buffers()


def model_device_type(models: ModelsArg) -> str:
    """The device type (``"cuda"``, ``"cpu"``, ...) of a model or a list of models.

    Read from the parameters and buffers; an accelerator wins over the CPU when a model is
    split across both. Meta tensors (not materialised yet) are ignored. A model without
    tensors (or an argument that is not a model) counts as CUDA when CUDA is available,
    else as CPU.
    """
    found = None
    for tensor in _tensors_of(models):
        device_type = tensor.device.type
        if device_type == "meta":
            continue
        if device_type != "cpu":
            return device_type
        found = device_type
    if found is not None:
        return found
    return "cuda" if torch.cuda.is_available() else "cpu"


def half_dtype_for(device_type: str) -> torch.dtype:
    """The dtype apex's "half" means on ``device_type``.

    ``torch.float16`` on CUDA and other accelerators. On the CPU ``torch.float16`` when this
    torch supports float16 autocast and float16 matmul on the CPU (torch >= 2.2), otherwise
    ``torch.bfloat16`` (a ``UserWarning`` says so, once per process).
    """
    global _warned_cpu_bfloat16
    if _compat.device_type_of(device_type) != "cpu":
        return torch.float16
    if _compat.cpu_float16_autocast_supported() and _compat.cpu_half_matmul_supported():
        return torch.float16
    if not _warned_cpu_bfloat16:
        _warned_cpu_bfloat16 = True
        warnings.warn(
            f"apexcompat: torch {torch.__version__} cannot autocast or multiply float16 on "
            "the CPU; amp uses torch.bfloat16 as the half type for CPU models instead.",
            UserWarning,
            stacklevel=2,
        )
    return torch.bfloat16


def legacy_type_string(tensor: torch.Tensor) -> str:
    """The tensor's legacy type name as apex printed it: ``torch.cuda.HalfTensor`` on CUDA,
    ``torch.HalfTensor`` on the CPU."""
    try:
        return tensor.type()
    except ValueError:  # an uninitialised (lazy) parameter refuses .type()
        return torch.empty(0, dtype=tensor.dtype, device=tensor.device).type()


def legacy_float_type_string(tensor: torch.Tensor) -> str:
    """The legacy name of a float32 tensor on ``tensor``'s device (``torch.FloatTensor`` on
    the CPU, ``torch.cuda.FloatTensor`` on CUDA): what apex says it expected."""
    return legacy_type_string(tensor).rsplit(".", 1)[0] + ".FloatTensor"
