"""The one place that knows how torch versions differ (torch 2.2 -> 2.15).

Every other module asks this one instead of comparing version strings. Each helper
feature-detects (``hasattr`` or a one-off probe on a tiny tensor, cached); the docstrings
say which releases behave differently, as measured in ``shared/spec/torch-compat.md``.
None of the helpers emits a ``DeprecationWarning`` or ``FutureWarning`` on any release.

Helpers may be added here by any part of the package; keep each one small, detected
rather than version-compared, and documented with the versions it separates.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, List, Tuple, Union

import torch
from packaging.version import Version

# What torch's foreach ops accept: a list or a tuple of tensors.
TensorList = Union[List[torch.Tensor], Tuple[torch.Tensor, ...]]
# "cpu", "cuda:1", torch.device("cuda", 0), ...
DeviceLike = Union[str, torch.device]

__all__ = [
    "torch_version",
    "device_type_of",
    "is_autocast_enabled",
    "set_autocast_enabled",
    "get_autocast_dtype",
    "set_autocast_dtype",
    "cpu_float16_autocast_supported",
    "cpu_half_matmul_supported",
    "has_amp_unscale_kernel",
    "has_foreach_copy",
    "foreach_copy_",
    "grad_scaler_class",
    "new_grad_scaler",
    "grad_scaler_supports_device",
    "has_device_generic_grad_scaler",
    "register_state_dict_post_hook",
    "autocast_cache_reuses_no_grad_casts",
]


def torch_version() -> Version:
    """The running torch's version without local suffix (``2.13.0+cpu`` -> ``2.13.0``).

    For reports and skip reasons only; code paths are chosen by feature detection.
    """
    return Version(torch.__version__.split("+")[0])


def device_type_of(device: DeviceLike) -> str:
    """``"cuda"`` for ``"cuda"``, ``"cuda:1"``, ``torch.device("cuda", 1)``; same for others."""
    if isinstance(device, torch.device):
        return device.type
    return torch.device(device).type


# --- autocast state queries -------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _autocast_query_takes_device() -> bool:
    # torch 2.4 added the device argument; before, the call raises TypeError
    # ("is_autocast_enabled() takes no arguments (1 given)").
    try:
        torch.is_autocast_enabled("cpu")  # type: ignore[call-arg]
    except TypeError:
        return False
    return True


def _legacy_infix(device_type: str) -> str:
    # Pre-2.4 per-device functions: torch.is_autocast_enabled() / get_autocast_gpu_dtype()
    # mean CUDA; other devices have torch.is_autocast_<dev>_enabled() etc.
    return "" if device_type == "cuda" else f"{device_type}_"


def _legacy_function(template: str, device_type: str) -> Any:
    name = template.format(_legacy_infix(device_type))
    func = getattr(torch, name, None)
    if func is None:
        raise RuntimeError(f"torch {torch.__version__} has no autocast state for device {device_type!r}")
    return func


def is_autocast_enabled(device_type: DeviceLike) -> bool:
    """Whether autocast is on for ``device_type`` ("cpu", "cuda", ...) in this thread.

    torch >= 2.4: ``torch.is_autocast_enabled(device_type)``. torch 2.2-2.3: the function
    takes no argument and reports CUDA only; CPU is ``torch.is_autocast_cpu_enabled()``
    (deprecated, with a DeprecationWarning, from 2.4 — hence never called there).
    """
    device_type = device_type_of(device_type)
    if _autocast_query_takes_device():
        return bool(torch.is_autocast_enabled(device_type))  # type: ignore[call-arg]
    return bool(_legacy_function("is_autocast_{}enabled", device_type)())


def set_autocast_enabled(device_type: DeviceLike, enabled: bool) -> None:
    """Switch autocast on/off for ``device_type`` in this thread (low level; prefer
    ``torch.autocast`` as a context manager).

    torch >= 2.4: ``torch.set_autocast_enabled(device_type, enabled)``. torch 2.2-2.3:
    ``torch.set_autocast_enabled(enabled)`` (CUDA) / ``torch.set_autocast_cpu_enabled``.
    """
    device_type = device_type_of(device_type)
    if _autocast_query_takes_device():
        torch.set_autocast_enabled(device_type, enabled)  # type: ignore[call-arg]
    else:
        _legacy_function("set_autocast_{}enabled", device_type)(enabled)


def get_autocast_dtype(device_type: DeviceLike) -> torch.dtype:
    """The lower-precision dtype autocast uses for ``device_type`` in this thread
    (defaults: float16 for CUDA, bfloat16 for CPU).

    torch >= 2.4: ``torch.get_autocast_dtype(device_type)``. torch 2.2-2.3:
    ``torch.get_autocast_gpu_dtype()`` / ``torch.get_autocast_cpu_dtype()`` (both emit a
    DeprecationWarning from 2.4, so they are only used where the new function is missing).
    """
    device_type = device_type_of(device_type)
    getter = getattr(torch, "get_autocast_dtype", None)
    if getter is not None:
        return getter(device_type)
    template = "get_autocast_gpu_dtype" if device_type == "cuda" else "get_autocast_{}dtype"
    return _legacy_function(template, device_type)()


def set_autocast_dtype(device_type: DeviceLike, dtype: torch.dtype) -> None:
    """Set the lower-precision dtype autocast uses for ``device_type`` in this thread.

    torch >= 2.4: ``torch.set_autocast_dtype(device_type, dtype)``. torch 2.2-2.3:
    ``torch.set_autocast_gpu_dtype`` / ``torch.set_autocast_cpu_dtype``.
    """
    device_type = device_type_of(device_type)
    setter = getattr(torch, "set_autocast_dtype", None)
    if setter is not None:
        setter(device_type, dtype)
        return
    template = "set_autocast_gpu_dtype" if device_type == "cuda" else "set_autocast_{}dtype"
    _legacy_function(template, device_type)(dtype)


# --- CPU half-precision capabilities ----------------------------------------------------


@functools.lru_cache(maxsize=None)
def cpu_float16_autocast_supported() -> bool:
    """Whether ``torch.autocast("cpu", dtype=torch.float16)`` really casts to float16.

    False on torch 2.0-2.1 (RuntimeError "AutocastCPU only support Bfloat16" at
    ``__enter__``, or a warning and a disabled region); True from 2.2. Probed once on a
    tiny matmul, cached; the probe's own warnings are swallowed.
    """
    a = torch.ones(2, 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autocast("cpu", dtype=torch.float16):
                out = torch.mm(a, a)
    except (RuntimeError, TypeError, ValueError):
        return False
    return out.dtype == torch.float16


@functools.lru_cache(maxsize=None)
def cpu_half_matmul_supported() -> bool:
    """Whether float16 ``addmm`` (``nn.Linear``) runs on CPU, forward and backward —
    what apex O2/O3 (model ``.half()``) need.

    False on torch 2.0-2.1 (RuntimeError ``"addmm_impl_cpu_" not implemented for
    'Half'``); True from 2.2. Probed once, cached.
    """
    try:
        weight = torch.ones(2, 2, dtype=torch.float16, requires_grad=True)
        x = torch.ones(1, 2, dtype=torch.float16)
        bias = torch.zeros(2, dtype=torch.float16)
        torch.nn.functional.linear(x, weight, bias).sum().backward()
    except (RuntimeError, NotImplementedError):
        return False
    return weight.grad is not None and weight.grad.dtype == torch.float16


@functools.lru_cache(maxsize=None)
def autocast_cache_reuses_no_grad_casts() -> bool:
    """Whether autocast's weight-cast cache hands a cast made under ``torch.no_grad()`` to a
    later grad-enabled op in the same autocast region (pytorch#112583). That cast has no
    ``grad_fn``, so the weight silently gets no gradient, or backward raises "element 0 of
    tensors does not require grad" — apex's eval-then-train pattern inside one O1 region.

    True on torch 2.2-2.10, False from 2.11 (measured on CPU in every minor release; CUDA uses
    the same cache code; fixed upstream by pytorch#165068). Probed once on a tiny bfloat16 CPU
    linear, cached. Workaround where True: run no-grad
    forwards with ``cache_enabled=False`` or call ``torch.clear_autocast_cache()`` when grad
    mode flips. The probe clears the autocast cache afterwards (a stale probe entry could
    otherwise be returned for a new tensor at the same address).
    """
    weight = torch.ones(2, 2, requires_grad=True)
    x = torch.ones(1, 2)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autocast("cpu", dtype=torch.bfloat16):
                with torch.no_grad():
                    torch.nn.functional.linear(x, weight)
                out = torch.nn.functional.linear(x, weight)
    finally:
        torch.clear_autocast_cache()
    return not out.requires_grad


# --- loss-scaling kernels ----------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _has_amp_unscale_kernel(device_type: str) -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. CUDA init warnings on a GPU-less box
            grads = [torch.ones(2, device=device_type)]
            found_inf = torch.zeros(1, device=device_type)
            inv_scale = torch.full((1,), 0.5, device=device_type)
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale)
    except NotImplementedError:
        return False
    except (RuntimeError, AssertionError):
        # The device itself is unusable here (e.g. "cuda" on a CPU-only build or machine).
        return False
    return bool(grads[0][0].item() == 0.5)


def has_amp_unscale_kernel(device_type: DeviceLike) -> bool:
    """Whether ``torch._amp_foreach_non_finite_check_and_unscale_`` has a kernel for
    ``device_type`` (and the device is usable). Probed once per device type, cached.

    CUDA: all versions (when a GPU is present). CPU: from torch 2.3; torch 2.0-2.2 raise
    NotImplementedError, so callers need a pure-torch fallback there.
    """
    return _has_amp_unscale_kernel(device_type_of(device_type))


# --- foreach helpers ------------------------------------------------------------------------


def has_foreach_copy() -> bool:
    """Whether ``torch._foreach_copy_(dst, src)`` exists (torch >= 2.1; missing in 2.0)."""
    return hasattr(torch, "_foreach_copy_")


def foreach_copy_(dst: TensorList, src: TensorList) -> None:
    """Copy ``src[i]`` into ``dst[i]`` (with dtype conversion) in one fused call where
    torch has ``_foreach_copy_`` (2.1+), else one ``copy_`` per tensor."""
    if not dst:
        return
    if has_foreach_copy():
        torch._foreach_copy_(dst, src)
        return
    for d, s in zip(dst, src):
        d.copy_(s)


# --- GradScaler -------------------------------------------------------------------------


def has_device_generic_grad_scaler() -> bool:
    """Whether ``torch.amp.GradScaler(device, ...)`` exists (torch >= 2.3)."""
    return hasattr(torch.amp, "GradScaler")


def grad_scaler_class() -> type:
    """The GradScaler class to use: ``torch.amp.GradScaler`` (torch >= 2.3, takes the
    device as first argument) else ``torch.cuda.amp.GradScaler`` (2.0-2.2, CUDA only).

    ``torch.cuda.amp.GradScaler(...)`` emits a FutureWarning from 2.4 — it is only
    returned where the device-generic class is missing, so no release warns.
    """
    if has_device_generic_grad_scaler():
        return torch.amp.GradScaler
    return torch.cuda.amp.GradScaler


def grad_scaler_supports_device(device_type: DeviceLike) -> bool:
    """Whether a working (enabled) GradScaler can exist for ``device_type`` here: CPU from
    torch 2.3; CUDA when a GPU is available; other devices when the generic class exists
    and the device is available."""
    device_type = device_type_of(device_type)
    if device_type == "cuda":
        return torch.cuda.is_available()
    if not has_device_generic_grad_scaler():
        return False
    if device_type == "cpu":
        return has_amp_unscale_kernel("cpu")
    module = getattr(torch, device_type, None)
    is_available = getattr(module, "is_available", None)
    return bool(is_available()) if callable(is_available) else False


def new_grad_scaler(device_type: DeviceLike = "cuda", **kwargs: Any) -> Any:
    """Build a GradScaler for ``device_type`` without deprecation warnings on any release.

    torch >= 2.3: ``torch.amp.GradScaler(device_type, **kwargs)``. torch 2.2: only
    ``torch.cuda.amp.GradScaler(**kwargs)`` exists; asking for another device there raises
    ``RuntimeError`` (torch has no CPU scaler before 2.3).
    """
    device_type = device_type_of(device_type)
    cls = grad_scaler_class()
    if has_device_generic_grad_scaler():
        return cls(device_type, **kwargs)
    if device_type != "cuda":
        raise RuntimeError(
            f"torch {torch.__version__} has no GradScaler for device {device_type!r} "
            "(torch.amp.GradScaler arrived in 2.3)"
        )
    return cls(**kwargs)


# --- nn.Module hooks ------------------------------------------------------------------------


def register_state_dict_post_hook(module: torch.nn.Module, hook: Any) -> Any:
    """Register ``hook(module, state_dict, prefix, local_metadata) -> None`` to run after
    ``module.state_dict()`` filled in the module's entries; the hook edits ``state_dict`` in
    place. Returns the removable handle.

    Uses the public ``Module.register_state_dict_post_hook`` where it exists (torch >= 2.5,
    pytorch#131690), else the private ``Module._register_state_dict_hook`` (torch 2.2-2.4),
    which calls an in-place hook the same way.
    """
    register = getattr(module, "register_state_dict_post_hook", None)
    if register is None:
        register = module._register_state_dict_hook
    return register(hook)
