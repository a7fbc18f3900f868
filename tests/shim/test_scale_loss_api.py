"""``amp.scale_loss`` against the api/ traces: what it yields, the short-cut, errors,
``delay_overflow_check``, the fused-build overflow test, the non-fp32 accumulate warning,
closures and the skip patch, several models/losses, and rank-0 printing."""

from __future__ import annotations

import json
import math

import pytest
import torch

from apexcompat import amp
from apexcompat.amp import _amp_state
from conftest import golden_files
from _golden_replay import LoopNet, captured_lines, expected_stdout, scaler_states, typed


def _trace(name):
    path = golden_files("api").get(name)
    if path is None:
        pytest.fail(f"golden trace api/{name} is missing")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _setup(opt_level="O1", lr=0.05, printed=None, **kwargs):
    torch.manual_seed(1234)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    model, opt = amp.initialize(model, opt, opt_level=opt_level, **kwargs)
    return model, opt


def _data(i=0):
    g = torch.Generator().manual_seed(1000 + i)
    return torch.randn(16, 4, generator=g), torch.randn(16, 2, generator=g)


def _loss(model, i=0):
    x, y = _data(i)
    return torch.nn.functional.mse_loss(model(x), y)


def test_before_initialize_scale_loss():
    want = _trace("before_initialize")["result"]["scale_loss"]["value_or_error"]
    with pytest.raises(RuntimeError) as err:
        with amp.scale_loss(torch.ones(()), None):
            pass
    assert type(err.value).__name__ == want["type"]
    assert str(err.value) == want["message"]


def test_master_params_before_initialize():
    want = _trace("before_initialize")["result"]["master_params"]
    w = torch.nn.Parameter(torch.ones(1))
    assert want["status"] == "ok"
    assert len(list(amp.master_params(torch.optim.SGD([w], lr=0.1)))) == want["value_or_error"]


def test_scale_loss_yield():
    want = _trace("scale_loss_yield")["result"]
    with captured_lines():
        model, opt = _setup("O2")
    fp16_loss = torch.tensor(3.0, dtype=torch.float16, requires_grad=True)
    with amp.scale_loss(fp16_loss, opt, delay_unscale=True) as scaled:
        got16 = {"dtype": str(scaled.dtype), "value": float(scaled.detach()),
                 "scale": _amp_state.loss_scalers[0].loss_scale()}
    assert typed(got16) == typed(want["O2_fp16_loss"])
    loss = _loss(model)
    with amp.scale_loss(loss, opt) as scaled:
        got32 = {"dtype": str(scaled.dtype), "is_loss": scaled is loss,
                 "value_over_loss": float(scaled.detach()) / float(loss.detach())}
        scaled.backward()
    assert got32["dtype"] == want["O2_fp32_loss"]["dtype"]
    assert got32["is_loss"] == want["O2_fp32_loss"]["is_loss"]
    assert math.isclose(got32["value_over_loss"], want["O2_fp32_loss"]["value_over_loss"], rel_tol=1e-6)


def test_scale_loss_shortcut_identity():
    want = _trace("scale_loss_shortcut_identity")["result"]
    with captured_lines():
        model, opt = _setup("O0")
    loss = _loss(model)
    model.fc1.weight.grad = torch.full_like(model.fc1.weight, float("inf"))
    with amp.scale_loss(loss, opt) as scaled:
        is_loss = scaled is loss
        scaled.backward()
    assert is_loss == want["O0_yield_is_loss_object"]
    assert typed(scaler_states()) == typed(want["scalers_after"])
    assert not opt._amp_stash.already_patched  # no check at all on the short-cut


def test_loss_id_out_of_range():
    with captured_lines():
        model, opt = _setup("O1", num_losses=2)
    with pytest.raises(IndexError, match="list index out of range"):
        with amp.scale_loss(_loss(model), opt, loss_id=2):
            pass


def test_delay_overflow_check():
    trace = _trace("delay_overflow_check")
    with captured_lines() as printed:
        model, opt = _setup("O1")
        for row in trace["result"]["rows"]:
            i = row["iteration"]
            opt.zero_grad()
            with amp.scale_loss(_loss(model, i), opt, delay_overflow_check=row["delay_overflow_check"]) as scaled:
                scaled.backward()
                if row["inf_injected"]:
                    model.fc1.weight.grad.view(-1)[0] = float("inf")
            assert opt._amp_stash.already_patched == row["step_patched_to_skip"], i
            mark = printed.mark()
            opt.step()
            assert printed.since(mark) == row["lines"], i
            assert typed(scaler_states()) == typed(row["scalers_after"]), i
            assert bool(torch.isfinite(model.fc1.weight).all()) == row["fc1_weight_finite"], i
    assert printed == expected_stdout(trace)


def test_overflow_check_is_elementwise():
    """Fused-build semantics (trace adjusted to it): finite values whose sum overflows are
    not an overflow; +inf and -inf are."""
    want = _trace("python_overflow_check_sum")["result"]
    with captured_lines():
        model, opt = _setup("O0", loss_scale="dynamic", verbosity=0)

    def overflowed(values):
        opt.zero_grad()
        with amp.scale_loss(_loss(model), opt) as scaled:
            scaled.backward()
            model.fc1.weight.grad.view(-1)[: len(values)] = torch.tensor(values)
        skipped = opt._amp_stash.already_patched
        opt.step()
        return skipped

    assert overflowed([3e38, 3e38]) == want["finite_values_whose_fp32_sum_overflows_flagged_as_overflow"]
    assert overflowed([float("inf"), float("-inf")]) == want["plus_and_minus_inf_flagged"]


def test_overflow_processes_every_grad():
    """After an overflowing grad, the later grads (and optimizers) are still unscaled."""
    with captured_lines():
        torch.manual_seed(0)
        a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
        oa, ob = torch.optim.SGD(a.parameters(), lr=0.1), torch.optim.SGD(b.parameters(), lr=0.1)
        [a, b], [oa, ob] = amp.initialize([a, b], [oa, ob], opt_level="O0", loss_scale="dynamic", verbosity=0)
    x = torch.ones(1, 2)
    loss = a(x).sum() + b(x).sum()
    with amp.scale_loss(loss, [oa, ob]) as scaled:
        scaled.backward()
        a.weight.grad[0, 0] = float("inf")
    assert torch.equal(b.weight.grad, torch.ones(2, 2))  # unscaled back from 65536
    assert torch.equal(a.bias.grad, torch.ones(2))
    assert oa._amp_stash.already_patched and ob._amp_stash.already_patched


def test_o3_dynamic_accumulate_warns_once():
    trace = _trace("O3_dynamic_accumulate_stash")
    with captured_lines() as printed:
        model, opt = _setup("O3", loss_scale="dynamic")
        per_iteration = {}
        for i in range(3):
            if i == 0:
                opt.zero_grad()
            mark = printed.mark()
            with amp.scale_loss(_loss(model, i), opt) as scaled:
                scaled.backward()
            per_iteration[str(i)] = printed.since(mark)
    assert printed == expected_stdout(trace)
    fused = [line for lines in trace["result"]["lines_per_iteration"].values() for line in lines
             if line.startswith("Warning:  unscaling")]
    assert [line for lines in per_iteration.values() for line in lines] == fused
    assert per_iteration["0"] == []


def test_step_closure():
    want = _trace("O1_step_closure")["result"]
    with captured_lines() as printed:
        model, opt = _setup("O1")
        calls = []

        def closure():
            calls.append(1)
            return None

        with amp.scale_loss(_loss(model), opt) as scaled:
            scaled.backward()
        opt.step(closure)
        assert len(calls) == want["normal_step_with_closure"]["closure_called"]
        with amp.scale_loss(_loss(model), opt) as scaled:
            scaled.backward()
            model.fc1.weight.grad.view(-1)[0] = float("inf")
        mark = printed.mark()
        with pytest.raises(RuntimeError) as err:
            opt.step(closure)
        assert str(err.value) == want["skip_step_with_closure"]["value"]["message"]
        assert printed.since(mark) == want["skip_step_with_closure"]["lines"]
        assert opt._amp_stash.already_patched == want["skip_step_with_closure"]["still_patched_after"]


def test_pending_skip_swallows_next_step_and_restores():
    with captured_lines() as printed:
        model, opt = _setup("O1", verbosity=1)
        plain_step = type(opt).step
        with amp.scale_loss(_loss(model), opt) as scaled:
            scaled.backward()
            model.fc1.weight.grad.view(-1)[0] = float("nan")
        # no step: the next clean iteration's step is swallowed
        opt.zero_grad()
        with amp.scale_loss(_loss(model, 1), opt) as scaled:
            scaled.backward()
        before = [p.detach().clone() for p in model.parameters()]
        mark = printed.mark()
        opt.step()
        line = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"
        assert printed.since(mark) == [line]
        assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
        assert not opt._amp_stash.already_patched
        opt.step()
        assert not all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert typed(scaler_states()) == typed([{"loss_scale": 32768.0, "unskipped": 1}])
    assert plain_step is type(opt).step


def test_two_models_one_list():
    """Two models, two optimizers, num_losses=2, optimizer B shared by both losses."""
    with captured_lines() as printed:
        torch.manual_seed(1234)
        m1, m2 = LoopNet(), LoopNet()
        o1 = torch.optim.SGD(m1.parameters(), lr=0.05)
        o2 = torch.optim.SGD(m2.parameters(), lr=0.05)
        [m1, m2], [o1, o2] = amp.initialize([m1, m2], [o1, o2], opt_level="O1", num_losses=2)
        x, y = _data()
        for i in range(3):
            o1.zero_grad()
            o2.zero_grad()
            loss1 = torch.nn.functional.mse_loss(m1(x), y) + torch.nn.functional.mse_loss(m2(x), y)
            with amp.scale_loss(loss1, [o1, o2], loss_id=0) as scaled:
                scaled.backward()
                if i == 1:
                    m1.fc1.weight.grad.view(-1)[0] = float("inf")
            loss2 = torch.nn.functional.mse_loss(m2(x), y)
            with amp.scale_loss(loss2, o2, loss_id=1) as scaled:
                scaled.backward()
            mark = printed.mark()
            o1.step()
            o2.step()
            lines = printed.since(mark)
            if i == 1:
                assert lines == ["Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"] * 2
            else:
                assert lines == []
    assert typed(scaler_states()) == typed([{"loss_scale": 32768.0, "unskipped": 1},
                                            {"loss_scale": 65536.0, "unskipped": 3}])


def test_o1_block_runs_with_casts_off_and_restores():
    """Backward inside scale_loss must not be autocast (apex's patches never reached
    autograd); after the block O1 casting is back on."""
    with captured_lines():
        model, opt = _setup("O1", verbosity=0)
    a = torch.ones(2, 2)
    assert torch.mm(a, a).dtype == torch.float16  # O1 active
    seen = []

    class Probe(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            seen.append(torch.mm(a, a).dtype)
            return g

    loss = Probe.apply(_loss(model))
    with amp.scale_loss(loss, opt) as scaled:
        seen.append(torch.mm(a, a).dtype)
        scaled.backward()
    assert seen == [torch.float32, torch.float32]
    assert torch.mm(a, a).dtype == torch.float16


def test_lr_scheduler_with_skips():
    """An LR scheduler wraps optimizer.step; apex's skip patch sits on top and restores it.
    A scheduler built while a skip is pending works too (the skip is a bound method)."""
    with captured_lines() as printed:
        model, opt = _setup("O2")
        sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        for i in range(3):
            opt.zero_grad()
            with amp.scale_loss(_loss(model, i), opt) as scaled:
                scaled.backward()
                if i == 1:
                    model.fc1.weight.grad.view(-1)[0] = float("inf")
            opt.step()
            sched.step()
        with amp.scale_loss(_loss(model, 3), opt) as scaled:
            scaled.backward()
            model.fc1.weight.grad.view(-1)[0] = float("inf")
        late = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        opt.step()
        late.step()
    assert [line for line in printed if line.startswith("Gradient")] == [
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0",
        "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0",
    ]
    assert not opt._amp_stash.already_patched
