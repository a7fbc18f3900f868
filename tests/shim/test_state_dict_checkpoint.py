"""apexcompat.checkpoint: apex amp state <-> GradScaler state, round trips keep values
and int/float types; what one format cannot hold is refused explicitly."""

from __future__ import annotations

import collections

import pytest
import torch

from apexcompat import _compat
from apexcompat.checkpoint import (
    apex_to_grad_scaler,
    apex_to_grad_scalers,
    grad_scaler_to_apex,
    grad_scalers_to_apex,
    is_apex_amp_state,
    is_grad_scaler_state,
)
from _golden_replay import typed

APEX_ONE = collections.OrderedDict([("loss_scaler0", {"loss_scale": 32768.0, "unskipped": 2})])
APEX_INT = {"loss_scaler0": {"loss_scale": 128, "unskipped": 7}}
APEX_THREE = collections.OrderedDict(
    (f"loss_scaler{i}", {"loss_scale": 2.0 ** (15 - i), "unskipped": i}) for i in range(3)
)


@pytest.mark.parametrize("state", [APEX_ONE, APEX_INT], ids=["float", "int"])
def test_apex_round_trip_is_lossless(state):
    gs = apex_to_grad_scaler(state)
    assert is_grad_scaler_state(gs) and not is_apex_amp_state(gs)
    back = grad_scaler_to_apex(gs)
    assert typed(dict(back)) == typed(dict(state))


def test_grad_scaler_round_trip_is_lossless():
    gs = {"scale": 1024.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 11}
    assert typed(apex_to_grad_scaler(grad_scaler_to_apex(gs))) == typed(gs)


def test_several_scalers_need_an_explicit_choice():
    with pytest.raises(ValueError, match="loss_id"):
        apex_to_grad_scaler(APEX_THREE)
    assert apex_to_grad_scaler(APEX_THREE, loss_id=2)["scale"] == 2.0**13
    assert apex_to_grad_scaler(APEX_THREE, key="loss_scaler1")["_growth_tracker"] == 1
    with pytest.raises(IndexError):
        apex_to_grad_scaler(APEX_THREE, loss_id=3)
    all_three = apex_to_grad_scalers(APEX_THREE)
    assert typed(dict(grad_scalers_to_apex(all_three))) == typed(dict(APEX_THREE))


def test_growth_settings_apex_cannot_hold_are_refused():
    gs = {"scale": 8.0, "growth_factor": 4.0, "backoff_factor": 0.5, "growth_interval": 100, "_growth_tracker": 1}
    with pytest.raises(ValueError, match="growth_factor=4.0, growth_interval=100"):
        grad_scaler_to_apex(gs)
    assert dict(grad_scaler_to_apex(gs, strict=False)) == {"loss_scaler0": {"loss_scale": 8.0, "unskipped": 1}}


def test_not_a_state_dict():
    with pytest.raises(ValueError):
        apex_to_grad_scaler({"foo": 1})
    with pytest.raises(ValueError):
        grad_scaler_to_apex({"loss_scaler0": {"loss_scale": 1.0, "unskipped": 0}})


def test_real_grad_scaler_continues_apex_trajectory():
    """A GradScaler loaded from an apex state continues with the same scale and counter."""
    if not _compat.grad_scaler_supports_device("cpu"):
        pytest.skip("this torch has no CPU GradScaler")
    apex_state = {"loss_scaler0": {"loss_scale": 512.0, "unskipped": 1998}}
    scaler = _compat.new_grad_scaler("cpu")
    scaler.load_state_dict(apex_to_grad_scaler(apex_state))
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([w], lr=0.0)
    for _ in range(2):  # the 2000th clean update doubles, as in apex
        opt.zero_grad()
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
    back = grad_scaler_to_apex(scaler.state_dict())
    assert typed(dict(back)) == typed({"loss_scaler0": {"loss_scale": 1024.0, "unskipped": 0}})
