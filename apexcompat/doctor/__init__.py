"""The overflow doctor: why a dynamic loss scale keeps skipping steps (not part of apex).

Switched on without editing the script by ``APEXCOMPAT_DIAGNOSE=1``, or from Python with
:func:`diagnose` (``from apexcompat import doctor; doctor.diagnose(True)``).  It lives beside
``apexcompat.amp``, not in it, so that ``amp``'s namespace stays exactly apex's.  Reports
go to the logger ``apexcompat.diagnose`` (stderr by default) and never change apex's stdout
lines.  Without it, a collapsing run gets one stderr warning.
:func:`overflow_stats` reads the per-loss counters, which are kept in every mode.
"""

from __future__ import annotations

from typing import Optional

from .core import COLLAPSE_STREAK, SUMMARY_EVERY, doctor
from .counters import RATE_WINDOW, OverflowCounters, OverflowStats
from .log import LOGGER_NAME, diagnose_stderr_handler

__all__ = [
    "COLLAPSE_STREAK",
    "LOGGER_NAME",
    "RATE_WINDOW",
    "SUMMARY_EVERY",
    "OverflowCounters",
    "OverflowStats",
    "diagnose",
    "diagnose_enabled",
    "diagnose_stderr_handler",
    "overflow_stats",
]


def diagnose(enabled: Optional[bool] = True) -> None:
    """Switch the overflow doctor on (``True``) or off (``False``) from Python, at any time,
    also in the middle of a run; ``None`` goes back to the environment variable
    ``APEXCOMPAT_DIAGNOSE`` (``1``/``true``/``yes``/``on`` = on; unset = off)."""
    doctor.override = None if enabled is None else bool(enabled)
    if not doctor.active:
        doctor.disarm()


def diagnose_enabled() -> bool:
    """Whether the doctor is on now (:func:`diagnose`, else ``APEXCOMPAT_DIAGNOSE``)."""
    return doctor.active


def overflow_stats(loss_id: int = 0) -> OverflowStats:
    """The overflow counters of loss scaler ``loss_id`` (see :class:`OverflowStats`), kept
    with or without the doctor.  Raises ``RuntimeError`` before ``amp.initialize``."""
    from ..amp._amp_state import _amp_state

    scalers = getattr(_amp_state, "loss_scalers", None)
    if scalers is None:
        raise RuntimeError("overflow_stats() needs amp.initialize(...) to have been called.")
    scaler = scalers[loss_id]
    return scaler.counters.snapshot(loss_id, scaler.loss_scale())


def _reset() -> None:
    doctor.disarm()
    doctor.override = None
    doctor.reset()


def _register_reset() -> None:
    from ..amp._amp_state import _reset_hooks

    if _reset not in _reset_hooks:
        _reset_hooks.append(_reset)


_register_reset()
