"""The one process-wide amp state object, and the print helpers apex kept beside it.

apex kept every piece of amp's global state on a single ``AmpState`` instance; scripts and
tests touch its attributes (``loss_scalers``, ``opt_properties``, ``hard_override``, ...), so
the shim keeps exactly one such object.  Attributes that apex created lazily are absent until
``initialize`` sets them, so reading them early raises apex's ``AttributeError``.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Iterator, List, Optional

import torch

from .._logging import emit

_DEFAULTS = {
    "hard_override": False,
    "allow_incoming_model_not_fp32": False,
    "verbosity": 1,
}


class AmpState:
    """Holds amp's process-wide state (see the spec, §2).

    The annotated-only attributes below are absent until ``initialize`` sets them (reading
    one early raises apex's ``AttributeError``); the annotations exist for type checkers.
    """

    hard_override: bool
    allow_incoming_model_not_fp32: bool
    verbosity: int
    opt_properties: Any
    min_loss_scale: Optional[float]
    max_loss_scale: Optional[float]
    loss_scalers: List[Any]
    handle: Any
    # apexcompat's own: the bfloat16 rule turned loss scaling off (frontend, scaler).
    bfloat16_unscaled: bool

    def __init__(self) -> None:
        for name, value in _DEFAULTS.items():
            setattr(self, name, value)


_amp_state = AmpState()

# Callables run by ``reset_state`` before the attributes are cleared (e.g. the O1 autocast
# scope registers its own teardown here).
_reset_hooks: List[Callable[[], None]] = []


def reset_state() -> None:
    """Return amp to its pristine, just-imported state (used by tests and re-initialisation
    in long-lived processes).  Not part of apex's API."""
    for hook in list(_reset_hooks):
        hook()
    for name in list(vars(_amp_state)):
        delattr(_amp_state, name)
    for name, value in _DEFAULTS.items():
        setattr(_amp_state, name, value)


def _distributed_rank_and_size():
    dist = torch.distributed
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def is_printing_rank() -> bool:
    """True unless torch.distributed is initialised with world_size > 1 and this is not rank 0."""
    rank, size = _distributed_rank_and_size()
    return size <= 1 or rank == 0


def maybe_print(msg: str, rank0: bool = False) -> None:
    """apex's ``maybe_print``: printed only when verbosity > 0 (and, with ``rank0``, only on
    the printing rank)."""
    if _amp_state.verbosity > 0 and (not rank0 or is_printing_rank()):
        emit(msg, stacklevel=2)


def warn_print(msg: str) -> None:
    """A line apex printed unconditionally with ``print`` (ignores verbosity, every rank)."""
    emit(msg, logging.WARNING, stacklevel=2)


def warn_or_err(msg: str) -> None:
    """apex's hard_override helper: warn and go on, or raise ``RuntimeError(msg)``."""
    if _amp_state.hard_override:
        warn_print("Warning:  " + msg)
    else:
        raise RuntimeError(msg)


def master_params(optimizer: torch.optim.Optimizer) -> Iterator[torch.Tensor]:
    """Yield every parameter the optimizer steps on.

    For O2 (master weights) after the first backward these are the fp32 master copies, so
    gradient clipping should use ``amp.master_params(optimizer)``.  Works on any optimizer.
    """
    for group in optimizer.param_groups:
        yield from group["params"]
