"""The overflow doctor in process: counters (several losses and optimizers), the switches,
where reports go, and that clean steps do no doctor work at all."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys

import pytest
import torch

from apexcompat import amp, doctor
from apexcompat.amp._amp_state import reset_state
from apexcompat.doctor import core
from apexcompat.doctor.counters import RATE_WINDOW, OverflowCounters
from apexcompat.doctor.names import qualified_names


def _init(models, optimizers, **kwargs):
    with contextlib.redirect_stdout(io.StringIO()):
        return amp.initialize(models, optimizers, verbosity=0, **kwargs)


def _step(model, optimizer, loss_id=0, poison=None, x=None):
    """One real iteration; ``poison`` (a parameter) gets a NaN gradient inside the block."""
    loss = model(torch.full((4, 4), 0.1) if x is None else x).float().mean() * 0.5
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled:
        scaled.backward()
        if poison is not None:
            poison.grad.view(-1)[0] = float("nan")
    optimizer.step()


@contextlib.contextmanager
def doctor_records():
    records = []
    handler = logging.Handler()
    handler.emit = records.append
    log = logging.getLogger("apexcompat.diagnose")
    log.addHandler(handler)
    try:
        yield records
    finally:
        log.removeHandler(handler)


def test_counters_two_losses_two_optimizers():
    torch.manual_seed(0)
    m0, m1 = torch.nn.Linear(4, 2), torch.nn.Linear(4, 2)
    o0 = torch.optim.SGD(m0.parameters(), lr=0.1)
    o1 = torch.optim.SGD(m1.parameters(), lr=0.1)
    [m0, m1], [o0, o1] = _init([m0, m1], [o0, o1], opt_level="O1", num_losses=2)
    for step in range(6):
        _step(m0, o0, loss_id=0, poison=m0.bias if step in (1, 3, 4) else None)
        _step(m1, o1, loss_id=1)
    s0, s1 = doctor.overflow_stats(0), doctor.overflow_stats(1)
    assert (s0.steps, s0.skipped_steps, s0.consecutive_skips) == (6, 3, 0)
    assert (s0.last_skip_step, s0.last_clean_step) == (4, 5)
    assert s0.overflow_rate == pytest.approx(0.5) and s0.window == RATE_WINDOW
    assert s0.loss_scale == 65536.0 / 8 and s0.loss_id == 0
    assert (s1.steps, s1.skipped_steps, s1.last_skip_step, s1.overflow_rate) == (6, 0, None, 0.0)
    _step(m0, o0, loss_id=0, poison=m0.weight)
    assert doctor.overflow_stats(0).consecutive_skips == 1
    assert doctor.overflow_stats(1).consecutive_skips == 0


def test_one_scale_loss_over_two_optimizers_counts_one_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    o0 = torch.optim.SGD(model[0].parameters(), lr=0.1)
    o1 = torch.optim.SGD(model[1].parameters(), lr=0.1)
    model, [o0, o1] = _init(model, [o0, o1], opt_level="O1")
    loss = model(torch.ones(2, 4)).float().sum()
    with amp.scale_loss(loss, [o0, o1]) as scaled:
        scaled.backward()
        model[1].bias.grad.fill_(float("inf"))
    stats = doctor.overflow_stats()
    assert (stats.steps, stats.skipped_steps, stats.last_skip_step) == (1, 1, 0)


def test_overflow_rate_is_over_the_window():
    c = OverflowCounters()
    for step in range(RATE_WINDOW + 500):
        c.record(step % 10 == 0, False, 1.0)
    snap = c.snapshot(0, 1.0)
    assert snap.skipped_steps == (RATE_WINDOW + 500) // 10
    assert snap.overflow_rate == pytest.approx(0.1)
    for _ in range(RATE_WINDOW):
        c.record(False, False, 1.0)
    assert c.overflow_rate() == 0.0 and c.skipped == (RATE_WINDOW + 500) // 10


def test_first_skip_after_growth_is_flagged():
    c = OverflowCounters()
    c.record(True, False, 4.0)
    assert not c.skip_after_growth  # no growth yet: calibration
    c.record(False, True, 2.0)      # growth
    c.record(True, False, 4.0)
    assert c.skip_after_growth and c.streak_start_scale == 4.0
    c.record(True, False, 2.0)
    assert not c.skip_after_growth


def test_overflow_stats_needs_initialize():
    with pytest.raises(RuntimeError, match=r"amp\.initialize"):
        doctor.overflow_stats()


def test_clean_steps_do_no_doctor_work(monkeypatch):
    calls = []
    monkeypatch.setattr(core.doctor, "after_check", lambda *a: calls.append(a))
    doctor.diagnose(True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = _init(model, opt, opt_level="O2")
    for _ in range(20):
        _step(model, opt)
    assert calls == [] and doctor.overflow_stats().steps == 20
    assert all(not m._forward_hooks for m in model.modules())


def test_localisation_hooks_live_for_one_step_only():
    doctor.diagnose(True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = _init(model, opt, opt_level="O2")
    with doctor_records():
        _step(model, opt, poison=model[2].weight)
        assert all(len(m._forward_hooks) == 1 for m in model.modules())
        _step(model, opt)
    assert all(not m._forward_hooks for m in model.modules())
    assert core.doctor.armed is None


def test_reports_go_to_stderr_never_stdout(capsys):
    doctor.diagnose(True)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = amp.initialize(model, opt, opt_level="O1", verbosity=1)
    capsys.readouterr()
    _step(model, opt, poison=model[1].bias)
    out, err = capsys.readouterr()
    assert out == "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\n"
    assert "apexcompat doctor: step 0, loss scaler 0: gradient overflow at loss scale 65536.0" in err
    assert "    1.bias  float32  [1]  nan" in err
    assert logging.getLogger("apexcompat.diagnose").propagate is False


def test_switches(monkeypatch):
    monkeypatch.delenv("APEXCOMPAT_DIAGNOSE", raising=False)
    assert not doctor.diagnose_enabled()
    monkeypatch.setenv("APEXCOMPAT_DIAGNOSE", "1")
    assert doctor.diagnose_enabled()
    doctor.diagnose(False)
    assert not doctor.diagnose_enabled()
    doctor.diagnose(None)
    assert doctor.diagnose_enabled()
    monkeypatch.setenv("APEXCOMPAT_DIAGNOSE", "0")
    doctor.diagnose(True)
    assert doctor.diagnose_enabled()
    reset_state()
    assert not doctor.diagnose_enabled() and core.doctor.models() == []


def test_summary_after_repeated_skips(monkeypatch):
    monkeypatch.setattr(core, "SUMMARY_EVERY", 5)
    monkeypatch.setattr(core, "LOCALISE_ATTEMPTS", 0)
    doctor.diagnose(True)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = _init(model, opt, opt_level="O1", min_loss_scale=1.0)
    with doctor_records() as records:
        for _ in range(12):
            _step(model, opt, poison=model.bias)
    messages = [r.getMessage() for r in records]
    assert len(messages) == 3  # the first report, then one summary every 5 steps
    assert messages[1].startswith("apexcompat doctor: summary at step 5, loss scaler 0: 6 of 6 steps skipped")
    assert messages[2].startswith("apexcompat doctor: summary at step 10, loss scaler 0: 11 of 11")


def test_collapse_by_streak_with_a_floor_warns_once_by_default(monkeypatch):
    monkeypatch.delenv("APEXCOMPAT_DIAGNOSE", raising=False)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    model, opt = _init(model, opt, opt_level="O1", min_loss_scale=1.0)
    with doctor_records() as records:
        for _ in range(core.COLLAPSE_STREAK + 10):
            _step(model, opt, poison=model.bias)
    assert [r.levelno for r in records] == [logging.WARNING]
    assert records[0].getMessage().startswith(
        f"apexcompat doctor: loss scaler 0 is collapsing: {core.COLLAPSE_STREAK} skipped steps in a row"
    )


def test_several_models_are_prefixed():
    a, b = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    names = qualified_names([a, b])
    assert names[id(a.weight)] == "models[0].weight" and names[id(b.bias)] == "models[1].bias"
    assert qualified_names([a])[id(a.bias)] == "bias"


def test_error_floor_env_var_still_raises():
    code = (
        "import torch\nfrom apexcompat import amp\n"
        "from apexcompat.amp.scaler import LossScaleCollapsedError\n"
        "m = torch.nn.Linear(4, 1)\no = torch.optim.SGD(m.parameters(), lr=0.1)\n"
        "m, o = amp.initialize(m, o, opt_level='O1', verbosity=0)\n"
        "try:\n"
        "    for step in range(40):\n"
        "        loss = m(torch.full((2, 4), float('nan'))).float().mean()\n"
        "        with amp.scale_loss(loss, o) as s:\n"
        "            s.backward()\n"
        "        o.step()\n"
        "except LossScaleCollapsedError:\n"
        "    print('raised at', step)\n"
    )
    env = dict(os.environ, APEXCOMPAT_LOSS_SCALE_ERROR_FLOOR="1.0", APEXCOMPAT_DIAGNOSE="1")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert proc.stdout == "raised at 16\n", proc.stderr
    assert "the loss is nan before scaling" in proc.stderr


def test_docs_state_the_doctors_constants():
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    page = (docs / "troubleshooting.md").read_text(encoding="utf-8")
    assert f"{core.COLLAPSE_STREAK} skipped steps in a row" in page
    assert f"at most every {core.SUMMARY_EVERY} steps" in page
    assert "the first five" in page and core.NAMED_PARAMS == 5
    differences = (docs / "differences.md").read_text(encoding="utf-8")
    assert f"skipped {core.COLLAPSE_STREAK} steps in a row" in differences
