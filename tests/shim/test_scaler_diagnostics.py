"""Opt-in diagnostics (spec §12): DEBUG names of params with non-finite grads, and an error
when a dynamic scale collapses below a chosen floor.  Off by default: stdout unchanged."""

from __future__ import annotations

import contextlib
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


@pytest.mark.parametrize("opt_level", ["O1", "O2"])  # O2: the fp16 model param, not its master
def test_debug_log_names_nonfinite_params(opt_level):
    model, opt = _setup(opt_level)
    records = _debug_records(model, opt)
    want = f"non-finite gradient in fc2.bias (shape (2,), {model.fc2.bias.grad.dtype})"
    assert [r.getMessage() for r in records] == [want]


def test_debug_log_falls_back_to_param_group_position():
    model, opt = _setup("O1")
    extra = torch.nn.Parameter(torch.ones(3))  # belongs to no model given to initialize
    opt.add_param_group({"params": [extra]})
    opt.zero_grad()
    with amp.scale_loss(model(torch.ones(4, 4)).float().mean() + extra.sum(), opt) as scaled:
        scaled.backward()
    opt.step()
    extra.grad = None
    records = []
    with _debug_logging(records), captured_lines():
        opt.zero_grad()
        with amp.scale_loss(model(torch.ones(4, 4)).float().mean() + extra.sum(), opt) as scaled:
            scaled.backward()
            extra.grad[0] = float("inf")
    assert [r.getMessage() for r in records] == [
        "non-finite gradient in param_groups[1]['params'][0] (shape (3,), torch.float32)"
    ]


@contextlib.contextmanager
def _debug_logging(records):
    log = logging.getLogger("apexcompat.overflow")
    handler = logging.Handler()
    handler.emit = records.append
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        log.setLevel(logging.NOTSET)
        log.removeHandler(handler)


def _debug_records(model, opt):
    records = []
    with _debug_logging(records), captured_lines() as printed:
        _overflowing_backward(model, opt)
    assert list(printed) == [r.getMessage() for r in records]  # opted in: reaches stdout too
    return records


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
