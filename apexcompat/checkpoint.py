"""Convert loss-scaler checkpoints between apex's ``amp.state_dict()`` format and
``torch.amp.GradScaler.state_dict()``, losslessly where both formats can hold the state.

apex (one entry per loss scaler, in order)::

    {'loss_scaler0': {'loss_scale': 32768.0, 'unskipped': 2}, 'loss_scaler1': {...}}

GradScaler (one scaler)::

    {'scale': 32768.0, 'growth_factor': 2.0, 'backoff_factor': 0.5,
     'growth_interval': 2000, '_growth_tracker': 2}

``loss_scale`` <-> ``scale`` and ``unskipped`` <-> ``_growth_tracker`` follow the same
counting rule (reset on overflow and on growth; grow when it reaches the interval).  Values
are copied as they are, so an int scale stays an int and a round trip gives back an equal
dict with equal types.

What the other side cannot hold:

* GradScaler holds one scaler: an apex checkpoint with several loss scalers is converted
  one scaler at a time — pass ``loss_id`` (position) or ``key`` explicitly, or use
  :func:`apex_to_grad_scalers` for all of them.
* apex's format holds neither ``growth_factor``/``backoff_factor``/``growth_interval``
  (apex always used 2.0 / 0.5 / 2000) nor GradScaler's ``enabled`` state; a GradScaler state
  with other values is refused unless ``strict=False``.
* Neither format holds apex's ``min_loss_scale``/``max_loss_scale`` or whether a scaler was
  static: those come from the ``amp.initialize`` / ``GradScaler(...)`` call that restores.

Example (continue an apex run's loss scale with a native GradScaler)::

    import torch
    from apexcompat.checkpoint import apex_to_grad_scaler, grad_scaler_to_apex

    ckpt = {"amp": {"loss_scaler0": {"loss_scale": 1024.0, "unskipped": 3}}}  # torch.load(...)
    gs_state = apex_to_grad_scaler(ckpt["amp"])
    if hasattr(torch.amp, "GradScaler"):  # torch >= 2.3 (device-generic GradScaler)
        scaler = torch.amp.GradScaler("cpu")
        scaler.load_state_dict(gs_state)
    assert grad_scaler_to_apex(gs_state) == ckpt["amp"]
"""

from __future__ import annotations

import collections
from typing import Any, Dict, List, Mapping, Optional, Sequence

__all__ = [
    "APEX_GROWTH_FACTOR",
    "APEX_BACKOFF_FACTOR",
    "APEX_GROWTH_INTERVAL",
    "is_apex_amp_state",
    "is_grad_scaler_state",
    "apex_to_grad_scaler",
    "apex_to_grad_scalers",
    "grad_scaler_to_apex",
    "grad_scalers_to_apex",
]

APEX_GROWTH_FACTOR = 2.0
APEX_BACKOFF_FACTOR = 0.5
APEX_GROWTH_INTERVAL = 2000


def is_apex_amp_state(state: Any) -> bool:
    """Whether ``state`` looks like ``amp.state_dict()`` output (every key names a loss
    scaler and holds ``loss_scale`` and ``unskipped``)."""
    return (
        isinstance(state, Mapping)
        and len(state) > 0
        and all(
            "loss_scaler" in str(k) and isinstance(v, Mapping) and {"loss_scale", "unskipped"} <= set(v)
            for k, v in state.items()
        )
    )


def is_grad_scaler_state(state: Any) -> bool:
    """Whether ``state`` looks like ``GradScaler.state_dict()`` output."""
    return isinstance(state, Mapping) and "scale" in state and "_growth_tracker" in state


def _scaler_entries(amp_state: Mapping) -> List[Any]:
    # apex's load_state_dict assigns entries to scalers in iteration order, by substring.
    return [k for k in amp_state if "loss_scaler" in str(k)]


def _one_grad_scaler_state(entry: Mapping) -> Dict[str, Any]:
    return {
        "scale": entry["loss_scale"],
        "growth_factor": APEX_GROWTH_FACTOR,
        "backoff_factor": APEX_BACKOFF_FACTOR,
        "growth_interval": APEX_GROWTH_INTERVAL,
        "_growth_tracker": entry["unskipped"],
    }


def apex_to_grad_scaler(
    amp_state: Mapping, loss_id: Optional[int] = None, key: Optional[str] = None
) -> Dict[str, Any]:
    """The GradScaler state dict for one loss scaler of an apex ``amp.state_dict()``.

    With a single scaler no choice is needed; with several, pass ``loss_id`` (its position,
    as apex counts them) or ``key`` (e.g. ``"loss_scaler1"``) — a ``ValueError`` says which
    exist otherwise.
    """
    keys = _scaler_entries(amp_state)
    if not keys:
        raise ValueError("not an apex amp state dict: no 'loss_scaler' entries")
    if key is not None and loss_id is not None:
        raise ValueError("pass loss_id or key, not both")
    if key is not None:
        if key not in amp_state:
            raise KeyError(key)
        chosen = key
    elif loss_id is not None:
        if not 0 <= loss_id < len(keys):
            raise IndexError(f"loss_id {loss_id} out of range: the state dict has {len(keys)} loss scalers")
        chosen = keys[loss_id]
    elif len(keys) == 1:
        chosen = keys[0]
    else:
        raise ValueError(
            "the apex state dict holds {} loss scalers ({}); a GradScaler holds one: pass "
            "loss_id=... or key=..., or use apex_to_grad_scalers()".format(len(keys), ", ".join(map(str, keys)))
        )
    return _one_grad_scaler_state(amp_state[chosen])


def apex_to_grad_scalers(amp_state: Mapping) -> List[Dict[str, Any]]:
    """One GradScaler state dict per loss scaler, in apex's order."""
    return [_one_grad_scaler_state(amp_state[k]) for k in _scaler_entries(amp_state)]


def _check_apex_constants(state: Mapping, strict: bool) -> None:
    if not strict:
        return
    expected = {
        "growth_factor": APEX_GROWTH_FACTOR,
        "backoff_factor": APEX_BACKOFF_FACTOR,
        "growth_interval": APEX_GROWTH_INTERVAL,
    }
    different = {k: state[k] for k, v in expected.items() if k in state and state[k] != v}
    if different:
        raise ValueError(
            "apex's loss scaler always grows x2 after 2000 clean steps and halves on overflow; "
            "this GradScaler state has {} which apex's format cannot hold (strict=False drops "
            "them)".format(", ".join(f"{k}={v!r}" for k, v in sorted(different.items())))
        )


def grad_scaler_to_apex(
    state: Mapping, key: str = "loss_scaler0", strict: bool = True
) -> "collections.OrderedDict[str, Dict[str, Any]]":
    """An apex ``amp.state_dict()`` with one entry (``key``) from a GradScaler state dict."""
    if not is_grad_scaler_state(state):
        raise ValueError("not a GradScaler state dict: needs 'scale' and '_growth_tracker'")
    _check_apex_constants(state, strict)
    return collections.OrderedDict([(key, {"loss_scale": state["scale"], "unskipped": state["_growth_tracker"]})])


def grad_scalers_to_apex(
    states: Sequence[Mapping], strict: bool = True
) -> "collections.OrderedDict[str, Dict[str, Any]]":
    """An apex ``amp.state_dict()`` with one entry per GradScaler state (``loss_scaler0``,
    ``loss_scaler1``, ...), for ``amp.initialize(..., num_losses=len(states))``."""
    out: "collections.OrderedDict[str, Dict[str, Any]]" = collections.OrderedDict()
    for i, state in enumerate(states):
        out.update(grad_scaler_to_apex(state, key=f"loss_scaler{i}", strict=strict))
    return out
