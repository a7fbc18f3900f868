"""Opt-in diagnostics (spec §12): DEBUG names of params with non-finite grads, and an error
when a dynamic scale collapses below a chosen floor.  Off by default: stdout unchanged."""

from __future__ import annotations

import logging

import pytest
import torch

from apexcompat import amp
from apexcompat.amp import scaler as scaler_module
from _golden_replay import LoopNet, captured_lines


def _setup(opt_level):
    torch.manual_seed(1234)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level=opt_level, verbosity=0)
    return model, opt


def _overflowing_backward(model, opt):
    opt.zero_grad()
    with amp.scale_loss(model(torch.ones(4, 4)).float().mean() * 1e-3, opt) as scaled:
        scaled.backward()
        model.fc2.bias.grad.view(-1)[0] = float("nan")


@pytest.mark.parametrize("opt_level, expected", [
    ("O1", "param_groups[0]['params'][5]"),
    ("O2", "param_groups[0]['params'][5] (fp16 model param)"),
])
def test_debug_log_names_nonfinite_params(opt_level, expected):
    model, opt = _setup(opt_level)
    log = logging.getLogger("apexcompat.overflow")
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        with captured_lines() as printed:
            _overflowing_backward(model, opt)
    finally:
        log.setLevel(logging.NOTSET)
        log.removeHandler(handler)
    want = f"non-finite gradient in {expected} (shape (2,), {model.fc2.bias.grad.dtype})"
    assert [r.getMessage() for r in records] == [want]
    assert printed == [want]  # opted in: it reaches the apexcompat stdout handler too


def test_no_debug_output_by_default():
    model, opt = _setup("O1")
    with captured_lines() as printed:
        _overflowing_backward(model, opt)
    assert printed == []


def test_collapse_error_is_opt_in():
    model, opt = _setup("O1")
    scaler_module.set_loss_scale_error_floor(2.0**13)
    try:
        _overflowing_backward(model, opt)  # 32768
        opt.step()
        _overflowing_backward(model, opt)  # 16384
        opt.step()
        _overflowing_backward(model, opt)  # 8192: not below the floor
        opt.step()
        with pytest.raises(scaler_module.LossScaleCollapsedError, match=r"collapsed to 4096.0 .* after 4 consecutive"):
            _overflowing_backward(model, opt)
    finally:
        scaler_module.set_loss_scale_error_floor(None)


def test_without_floor_scale_keeps_halving():
    model, opt = _setup("O1")
    for _ in range(30):
        _overflowing_backward(model, opt)
        opt.step()
    assert amp._amp_state.loss_scalers[0].loss_scale() == 65536.0 / 2**30
