"""Gradient unscaling with a non-finite check, as apex's fused (amp_C) build did it.

Built on ``torch._amp_foreach_non_finite_check_and_unscale_``: one call per (device, dtype)
group, one ``found_inf`` flag tensor per device, no host sync here — the caller reads the
flags once (``FoundInf.any()``) when it updates the scale.  Where a torch release has no
kernel for a device (CPU before torch 2.3) a pure-torch fallback does the same work, still
without per-tensor ``.item()``.

Fused-build semantics (spec §6.5): a grad overflows if any element is inf/-inf/nan, and
every grad is processed even after an overflow was seen.
"""

from __future__ import annotations

import logging
from typing import Dict, List, Optional, Sequence, Tuple

import torch

from . import _compat
from ._logging import emit

__all__ = ["FoundInf", "unscale_into", "unscale_add_into", "warn_once_if_not_fp32", "log_nonfinite"]

_diag_logger = logging.getLogger("apexcompat.overflow")


def debug_enabled() -> bool:
    """Whether per-tensor overflow diagnostics are wanted (DEBUG on ``apexcompat.overflow``)."""
    return _diag_logger.isEnabledFor(logging.DEBUG)


def log_nonfinite(grads: Sequence[torch.Tensor], labels: Sequence[str]) -> None:
    """DEBUG-log each grad holding inf/nan (one host sync; call only if ``debug_enabled()``)."""
    if len(grads) == 0:
        return
    bad = torch.stack([torch.logical_not(torch.isfinite(g)).any().cpu() for g in grads]).tolist()
    for flag, grad, label in zip(bad, grads, labels):
        if flag:
            _diag_logger.debug(
                "non-finite gradient in %s (shape %s, %s)", label, tuple(grad.shape), grad.dtype
            )


_NON_FP32_WARNING = (
    "Warning:  unscaling grads that are not FP32. Unscaling non-fp32 grads may indicate an "
    "error. When using Amp, you don't need to call .half() on your model."
)
_warned_non_fp32 = False


def _reset_warned() -> None:
    global _warned_non_fp32
    _warned_non_fp32 = False


def _register_reset() -> None:
    # The "once per process" flag goes back to its import state with amp's state.
    from .amp._amp_state import _reset_hooks

    if _reset_warned not in _reset_hooks:
        _reset_hooks.append(_reset_warned)


def warn_once_if_not_fp32(out_grads: Sequence[torch.Tensor]) -> None:
    """apex's fused build printed this (plain print, every rank, once per process) when
    accumulating unscaled grads into existing non-fp32 grads (O3 + dynamic scale)."""
    global _warned_non_fp32
    if not _warned_non_fp32 and len(out_grads) > 0 and out_grads[0].dtype != torch.float32:
        emit(_NON_FP32_WARNING, logging.WARNING)
        _warned_non_fp32 = True


class FoundInf:
    """One float32 flag tensor per device, set to a non-zero value by any non-finite grad.

    ``reset()`` is free (flags are zeroed lazily at their first use after it); ``any()`` is
    the only method that syncs with the device (one ``.item()`` per device used).
    """

    __slots__ = ("_flags", "_fresh")

    def __init__(self) -> None:
        self._flags: Dict[torch.device, torch.Tensor] = {}
        self._fresh: set = set()

    def reset(self) -> None:
        self._fresh = set()

    def for_device(self, device: torch.device) -> torch.Tensor:
        flag = self._flags.get(device)
        if flag is None:
            flag = self._flags[device] = torch.zeros(1, dtype=torch.float32, device=device)
            self._fresh.add(device)
        elif device not in self._fresh:
            flag.zero_()
            self._fresh.add(device)
        return flag

    def any(self) -> bool:
        return any(bool(self._flags[dev].item()) for dev in self._fresh)

    def devices_flagged(self) -> List[torch.device]:
        return [dev for dev in self._fresh if bool(self._flags[dev].item())]


# inv_scale per device: value -> (its float32 rounding as a Python float, a 1-element float32
# tensor on the device).  A few entries per device (one per scaler's current scale), so
# several loss scalers do not rebuild tensors on every call.
_inv_scale_cache: Dict[torch.device, Dict[float, Tuple[float, torch.Tensor]]] = {}
_CACHE_ENTRIES_PER_DEVICE = 8


def _as_float32(value: float) -> float:
    """``value`` rounded to float32 (beyond float32's range: inf), as apex's kernels took
    ``1/scale`` as a C float (spec §5.4)."""
    return float(torch.tensor(value, dtype=torch.float64).to(torch.float32))


def _inv_scale_entry(inv_scale: float, device: torch.device) -> Tuple[float, torch.Tensor]:
    per_device = _inv_scale_cache.setdefault(device, {})
    entry = per_device.get(inv_scale)
    if entry is None:
        inv32 = _as_float32(inv_scale)
        # torch.full launches a fill on the device: no host-to-device copy, no sync.
        entry = (inv32, torch.full((1,), inv32, dtype=torch.float32, device=device))
        if len(per_device) >= _CACHE_ENTRIES_PER_DEVICE:
            per_device.pop(next(iter(per_device)))
        per_device[inv_scale] = entry
    return entry


def _groups(tensors: Sequence[torch.Tensor]) -> List[Tuple[torch.device, List[int]]]:
    """Indices of ``tensors`` grouped by (device, dtype), in first-seen order."""
    first = tensors[0]
    device, dtype = first.device, first.dtype
    if all(t.dtype == dtype and t.device == device for t in tensors):
        return [(device, list(range(len(tensors))))]
    by_key: Dict[Tuple[torch.device, torch.dtype], List[int]] = {}
    for i, t in enumerate(tensors):
        by_key.setdefault((t.device, t.dtype), []).append(i)
    return [(key[0], idx) for key, idx in by_key.items()]


def _check_and_unscale_(
    grads: List[torch.Tensor], inv_scale: float, device: torch.device, found_inf: Optional["FoundInf"]
) -> None:
    """In place: ``grads *= inv_scale`` (float32 multiplier), flagging non-finite inputs."""
    if found_inf is None:
        if inv_scale != 1.0:
            torch._foreach_mul_(grads, _inv_scale_entry(inv_scale, device)[0])
        return
    flag = found_inf.for_device(device)
    if _compat.has_amp_unscale_kernel(device.type):
        torch._amp_foreach_non_finite_check_and_unscale_(
            grads, flag, _inv_scale_entry(inv_scale, device)[1]
        )
        return
    # Pure-torch fallback: test the incoming values (as the kernel does), then scale.
    bad = torch.stack([torch.logical_not(torch.isfinite(g)).any() for g in grads]).any()
    flag.add_(bad.to(torch.float32))
    torch._foreach_mul_(grads, _inv_scale_entry(inv_scale, device)[0])


def unscale_into(
    src: Sequence[torch.Tensor],
    dst: Sequence[torch.Tensor],
    inv_scale: float,
    found_inf: Optional[FoundInf],
) -> None:
    """``dst[i] = src[i] * inv_scale`` (in place when ``dst[i] is src[i]``), flagging
    non-finite ``src`` values in ``found_inf`` (``None``: no check, static scalers)."""
    if len(src) == 0:
        return
    for device, idx in _groups(src):
        s = [src[i] for i in idx]
        d = [dst[i] for i in idx]
        if all(a is b for a, b in zip(s, d)):
            _check_and_unscale_(s, inv_scale, device, found_inf)
        else:
            # e.g. fp16 model grads -> fp32 master grads: convert, then scale the copies.
            _compat.foreach_copy_(d, s)
            _check_and_unscale_(d, inv_scale, device, found_inf)


def unscale_add_into(
    new: Sequence[torch.Tensor],
    stashed: Sequence[torch.Tensor],
    out: Sequence[torch.Tensor],
    a: float,
    b: float,
    found_inf: Optional[FoundInf],
) -> None:
    """``out[i] = new[i] * a + stashed[i] * b`` computed in float32 (only ``new`` is
    checked); ``out[i]`` may be ``new[i]`` or ``stashed[i]``."""
    if len(new) == 0:
        return
    for device, idx in _groups(new):
        n = [new[i] for i in idx]
        s = [stashed[i] for i in idx]
        o = [out[i] for i in idx]
        if all(t.dtype == torch.float32 for t in n) and all(x is y for x, y in zip(n, o)):
            scaled_new = n  # unscale in place: the new grads are the output
        else:
            scaled_new = [t.float() if t.dtype != torch.float32 else t.clone() for t in n]
        _check_and_unscale_(scaled_new, a, device, found_inf)
        addend = s if b == 1.0 else torch._foreach_mul(s, b)
        all_fp32 = all(t.dtype == torch.float32 for t in o) and all(t.dtype == torch.float32 for t in addend)
        if all_fp32 and all(x is y for x, y in zip(o, s)):
            torch._foreach_add_(o, scaled_new)  # O2: accumulate into the existing master grads
        elif all_fp32 and scaled_new is n and all(x is y for x, y in zip(o, n)):
            torch._foreach_add_(o, addend)  # O0/O1: the unscaled new grads are the output
        else:
            total = torch._foreach_add(scaled_new, [t.float() for t in addend])
            _compat.foreach_copy_(o, total)


_register_reset()
