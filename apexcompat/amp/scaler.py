"""apex's loss scaler: a Python-number state machine, plus ``amp.state_dict`` /
``amp.load_state_dict`` in apex's checkpoint format.

The scale is a plain Python number (never a tensor) so that logs and checkpoints are
byte-for-byte apex's: a float64 can halve 200 times from 2**16 (a float32 reaches 0.0 after
166 halvings), and ``max()``/``min()`` against an int floor/cap keep apex's int results.

Life cycle of one ``scale_loss`` exit (spec §5.2 step 7)::

    clear_overflow_state()          READY     -> CHECKING   (found-inf flags zeroed)
    unscale(...) / unscale_with_stashed(...)   (0..n calls; flags accumulate on device)
    update_scale() -> skip          CHECKING  -> READY      (the one host sync, dynamic only)
"""

from __future__ import annotations

import collections
import os
from typing import Any, List, Mapping, MutableMapping, Optional, Sequence, Tuple, Union

import torch

from .. import _unscale
from .._notices import notice_once
from ..checkpoint import grad_scaler_to_apex, is_grad_scaler_state
from ._amp_state import _amp_state, warn_print
from ..doctor.counters import OverflowCounters

Number = Union[int, float]

__all__ = [
    "LossScaler",
    "LossScaleCollapsedError",
    "next_scale_state",
    "set_loss_scale_error_floor",
    "state_dict",
    "load_state_dict",
]


# --- opt-in diagnostic (spec §12): fail loudly instead of death-spiralling -------------------


class LossScaleCollapsedError(RuntimeError):
    """A dynamic loss scale fell below the floor set with :func:`set_loss_scale_error_floor`
    (or ``APEXCOMPAT_LOSS_SCALE_ERROR_FLOOR``).  apex itself never raises this."""


def _floor_from_env() -> Optional[float]:
    value = os.environ.get("APEXCOMPAT_LOSS_SCALE_ERROR_FLOOR", "").strip()
    return float(value) if value else None


_error_floor: Optional[float] = _floor_from_env()


def set_loss_scale_error_floor(floor: Optional[float]) -> None:
    """Raise :class:`LossScaleCollapsedError` from ``scale_loss`` when a dynamic scale drops
    below ``floor`` (``None``, the default, keeps apex's behaviour: halve forever)."""
    global _error_floor
    _error_floor = None if floor is None else float(floor)


def _check_collapse(scaler: "LossScaler") -> None:
    floor = _error_floor
    if floor is None or not scaler.dynamic or not scaler._loss_scale < floor:
        return
    raise LossScaleCollapsedError(
        f"loss scale collapsed to {scaler._loss_scale} (below the error floor {_error_floor}) "
        f"after {scaler._overflow_streak} consecutive overflowing backward passes. The gradients "
        "are inf/nan at every scale: check the loss and inputs for inf/nan, lower the learning "
        "rate, or try opt_level='O1' / bfloat16. (Raised because the floor was set with "
        "set_loss_scale_error_floor or APEXCOMPAT_LOSS_SCALE_ERROR_FLOOR.)"
    )


def next_scale_state(
    scale: Any,
    unskipped: int,
    overflow: bool,
    dynamic: bool,
    min_loss_scale: Any,
    max_loss_scale: Any,
    window: int,
) -> Tuple[Any, int, bool]:
    """apex's update rule (spec §6.3), written once: returns ``(scale, unskipped, skip)``.

    Invariant: ``unskipped`` counts clean updates since the last overflow or growth, and the
    scale only changes on an overflow (halve, floored by a truthy ``min_loss_scale``) or when
    that count hits ``window`` *exactly* (double, capped by ``max_loss_scale``; the count
    restarts even when the cap leaves the scale unchanged).  Static scalers never skip and
    count forever.  ``max``/``min`` take the bound first, so on a tie the bound's own type
    (an int floor/cap) wins, as in apex.
    """
    if overflow and dynamic:
        skip = True
        halved = scale / 2.0
        scale = max(min_loss_scale, halved) if min_loss_scale else halved
        unskipped = 0
    else:
        skip = False
        unskipped += 1
    if unskipped == window and dynamic:
        scale = min(max_loss_scale, scale * 2.0)
        unskipped = 0
    return scale, unskipped, skip


class LossScaler:
    """One loss scaler of ``amp`` (one per ``loss_id``), identical in behaviour to apex's.

    ``loss_scale="dynamic"`` starts at ``min(max_loss_scale, init_scale)`` and follows
    :func:`next_scale_state`; any other value is a static scale that is never checked.
    ``scale_factor`` is accepted and ignored (apex always used 2).
    """

    # apex's class attribute: the shim always behaves like apex's fused (amp_C) build.
    has_fused_kernel = True

    # A Python number (whatever type the rule or a loaded checkpoint gave it), never a tensor;
    # bounds are kept as given (a None cap only fails where apex's comparisons fail).
    _loss_scale: Any
    _min_loss_scale: Any
    _max_loss_scale: Any
    _overflow: bool
    _pending_flags: bool

    def __init__(
        self,
        loss_scale: Union[str, Number],
        init_scale: Number = 2.0**16,
        scale_factor: Number = 2.0,
        scale_window: int = 2000,
        min_loss_scale: Any = None,
        max_loss_scale: Any = 2.0**24,
    ) -> None:
        if loss_scale == "dynamic":
            self.dynamic = True
            # The cap applies at start, the floor does not (spec §6.1).  A None cap raises
            # Python's own TypeError here, as in apex.
            self._loss_scale = min(max_loss_scale, init_scale)
        else:
            self.dynamic = False
            self._loss_scale = loss_scale
        self._max_loss_scale = max_loss_scale
        self._min_loss_scale = min_loss_scale
        self._scale_seq_len = scale_window
        self._unskipped = 0
        self._has_overflow = False
        self._found_inf = _unscale.FoundInf()
        # Diagnostics only (amp.overflow_stats, the doctor); not part of apex's state.
        self.counters = OverflowCounters()

    @property
    def _overflow_streak(self) -> int:
        """Skipped steps in a row, up to the last update."""
        return self.counters.consecutive

    # -- state read by scripts ------------------------------------------------------------

    def loss_scale(self) -> Any:
        """The current scale (a Python number)."""
        return self._loss_scale

    @property
    def _has_overflow(self) -> bool:
        """Result of the last check: syncs on the pending device flags (if any) once."""
        if self._pending_flags:
            self._overflow = bool(self._overflow or self._found_inf.any())
            self._pending_flags = False
        return self._overflow

    @_has_overflow.setter
    def _has_overflow(self, value: bool) -> None:
        self._overflow = bool(value)
        self._pending_flags = False

    # -- one scale_loss exit ----------------------------------------------------------------

    def clear_overflow_state(self) -> None:
        """READY -> CHECKING: forget the previous result, zero the device flags lazily."""
        self._has_overflow = False
        self._found_inf.reset()

    def unscale(
        self,
        model_grads: Sequence[torch.Tensor],
        master_grads: Sequence[torch.Tensor],
        unused_scale: Any = None,
        models_are_masters: bool = False,
        scale_override: Optional[Number] = None,
    ) -> None:
        """``master_grads[i] = model_grads[i] / scale`` (in place when they are the same
        tensors), recording non-finite values for dynamic scalers (fused-build semantics:
        every grad is processed even after an overflow)."""
        if self._overflow:
            # An overflow already read by update_scale() and not cleared since: apex's unscale
            # did nothing until clear_overflow_state() (reachable only by direct use).
            return
        scale = self._loss_scale if scale_override is None else scale_override
        if scale == 1.0 and models_are_masters and not self.dynamic:
            return
        _unscale.unscale_into(
            model_grads, master_grads, 1.0 / scale, self._found_inf if self.dynamic else None
        )
        self._pending_flags = self._pending_flags or (self.dynamic and len(model_grads) > 0)

    def unscale_python(
        self, model_grads: Sequence[torch.Tensor], master_grads: Sequence[torch.Tensor], scale: Number
    ) -> None:
        """apex's pure-Python unscale entry point, kept for scripts that call it; it behaves
        like the fused path (every grad processed, overflow read in ``update_scale``)."""
        self.unscale(model_grads, master_grads, None, scale_override=scale)

    def unscale_with_stashed(
        self,
        model_grads: Sequence[torch.Tensor],
        stashed_master_grads: Sequence[torch.Tensor],
        master_grads: Sequence[torch.Tensor],
        scale_override: Optional[Tuple[Number, Number, Number]] = None,
    ) -> None:
        """``master_grads[i] = model_grads[i] / scale + stashed[i]``; only the new
        ``model_grads`` are checked."""
        if self._overflow:
            return
        grads_have_scale, stashed_have_scale, out_scale = (
            (self._loss_scale, 1.0, 1.0) if scale_override is None else scale_override
        )
        _unscale.warn_once_if_not_fp32(master_grads)
        _unscale.unscale_add_into(
            model_grads,
            stashed_master_grads,
            master_grads,
            out_scale / grads_have_scale,
            out_scale / stashed_have_scale,
            self._found_inf if self.dynamic else None,
        )
        self._pending_flags = self._pending_flags or (self.dynamic and len(model_grads) > 0)

    def update_scale(self) -> bool:
        """CHECKING -> READY: apply apex's rule once; returns whether to skip the step."""
        overflow = self._has_overflow if self.dynamic else False
        scale_before = self._loss_scale
        self._loss_scale, self._unskipped, skip = next_scale_state(
            scale_before,
            self._unskipped,
            overflow,
            self.dynamic,
            self._min_loss_scale,
            self._max_loss_scale,
            self._scale_seq_len,
        )
        grew = self.dynamic and not skip and self._unskipped == 0
        self.counters.record(skip, grew, scale_before)
        if skip:
            _check_collapse(self)
        return skip

    def __repr__(self) -> str:
        kind = "dynamic" if self.dynamic else "static"
        return f"LossScaler({kind}, loss_scale={self._loss_scale!r}, unskipped={self._unskipped})"


# --- amp.state_dict / amp.load_state_dict (spec §7) ----------------------------------------

def state_dict(destination: Optional[MutableMapping] = None) -> MutableMapping:
    """``{'loss_scaler0': {'loss_scale': ..., 'unskipped': ...}, ...}``, one entry per
    scaler, in order; written into ``destination`` (after its own keys) when given."""
    if destination is None:
        destination = collections.OrderedDict()
    for idx, scaler in enumerate(_amp_state.loss_scalers):
        destination["loss_scaler%d" % idx] = {
            "loss_scale": scaler.loss_scale(),
            "unskipped": scaler._unskipped,
        }
    return destination


def load_state_dict(state_dict: Mapping) -> None:
    """Restore scaler states from ``amp.state_dict()`` output (apex's rules, §7.2), or
    from a ``torch.amp.GradScaler`` state dict (``scale`` -> loss scale,
    ``_growth_tracker`` -> unskipped, applied to scaler 0)."""
    scalers = _amp_state.loss_scalers
    if is_grad_scaler_state(state_dict):
        state_dict = grad_scaler_to_apex(state_dict)
    if len(state_dict) != len(scalers):
        warn_print(
            "Warning: state_dict contains {} entries, while {} loss_scalers are used".format(
                len(state_dict), len(scalers)
            )
        )
    nb_loss_scalers = len(scalers)
    unexpected_keys: List[str] = []
    idx = 0
    for key in state_dict:
        if "loss_scaler" not in key:
            unexpected_keys.append(key)
            continue
        if idx > nb_loss_scalers - 1:
            warn_print(
                "Skipping loss_scaler[{}], since num_losses was set to {}".format(
                    idx, nb_loss_scalers
                )
            )
            break
        if getattr(_amp_state, "bfloat16_unscaled", False):
            # bfloat16 run with scaling off (see frontend): an fp16 run's scale is not taken on.
            if state_dict[key]["loss_scale"] != 1.0:
                notice_once(f"bfloat16 run: the checkpoint's loss scale {state_dict[key]['loss_scale']} is not used")
        else:
            scalers[idx]._loss_scale = state_dict[key]["loss_scale"]
        scalers[idx]._unskipped = state_dict[key]["unskipped"]
        idx += 1
    if unexpected_keys:
        raise RuntimeError(
            "Error(s) in loading state_dict. Unexpected key(s) in state_dict: {}. ".format(
                ", ".join('"{}"'.format(k) for k in unexpected_keys)
            )
        )
