"""apexcompat must not trigger torch's DeprecationWarning/FutureWarning on any torch release.

torch 2.4 deprecated ``torch.cuda.amp.*``/``torch.cpu.amp.*`` and the per-device autocast
queries; a shim that still used them would spam every training step on new releases. Each test
runs a real CPU training loop through the public ``apexcompat.amp`` API with both warning
categories turned into errors, so the traceback points at the offending call.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest
import torch
import torch.nn.functional as F

from apexcompat import _compat, amp

OPT_LEVELS = ["O0", "O1", "O2", "O3"]


@pytest.fixture
def deprecations_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", FutureWarning)
        yield


def _model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Conv2d(1, 4, 3),
        torch.nn.BatchNorm2d(4),
        torch.nn.ReLU(),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 4 * 4, 3),
    )


def _needs_cpu_half(opt_level: str) -> None:
    if opt_level == "O1" and not _compat.cpu_float16_autocast_supported():
        pytest.skip(f"torch {_compat.torch_version()} has no CPU float16 autocast (O1 on CPU)")
    if opt_level in ("O2", "O3") and not _compat.cpu_half_matmul_supported():
        pytest.skip(f"torch {_compat.torch_version()} has no CPU float16 matmul (O2/O3 on CPU)")


def _train(model, optimizer, steps: int, overflow_at: int = -1) -> None:
    x = torch.randn(8, 1, 6, 6)
    target = torch.randint(0, 3, (8,))
    for step in range(steps):
        optimizer.zero_grad()
        out = model(x)
        loss = F.cross_entropy(out.float(), target)  # loss outside forward, as scripts do
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
            if step == overflow_at:
                next(model.parameters()).grad.fill_(float("inf"))
        optimizer.step()


@pytest.mark.parametrize("opt_level", OPT_LEVELS)
def test_training_loop_raises_no_deprecation(opt_level, deprecations_are_errors, capsys):
    _needs_cpu_half(opt_level)
    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    kwargs = {"loss_scale": 128.0} if opt_level == "O3" else {}
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, verbosity=1, **kwargs)
    _train(model, optimizer, steps=3, overflow_at=1 if opt_level != "O3" else -1)
    assert len(list(amp.master_params(optimizer))) == len(list(model.parameters()))
    state = amp.state_dict()
    amp.load_state_dict(state)
    with torch.no_grad():
        model(torch.randn(2, 1, 6, 6))
    capsys.readouterr()


@pytest.mark.parametrize("opt_level", ["O1", "O2"])
def test_two_losses_and_delayed_unscale_raise_no_deprecation(opt_level, deprecations_are_errors):
    _needs_cpu_half(opt_level)
    model = _model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, num_losses=2, verbosity=0)
    x = torch.randn(4, 1, 6, 6)
    for _ in range(2):
        optimizer.zero_grad()
        out = model(x).float()
        with amp.scale_loss(out.pow(2).mean(), optimizer, loss_id=0, delay_unscale=True) as s:
            s.backward()
        out = model(x).float()
        with amp.scale_loss(out.abs().mean(), optimizer, loss_id=1) as s:
            s.backward()
        optimizer.step()


def test_o1_function_registry_and_disable_casts_raise_no_deprecation(deprecations_are_errors):
    _needs_cpu_half("O1")

    @amp.float_function
    def fp32_only(t):
        return t * 2

    @amp.half_function
    def fp16_ok(t):
        return t + 1

    model = _model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    x = torch.randn(2, 1, 6, 6)
    out = model(x)
    fp32_only(out)
    fp16_ok(out)
    with amp.disable_casts():
        model(x)
    loss = out.float().sum()
    with amp.scale_loss(loss, optimizer) as s:
        s.backward()
    optimizer.step()


def test_importing_the_shim_raises_no_deprecation():
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning); "
        "warnings.simplefilter('error', FutureWarning); "
        "import apexcompat, apexcompat.amp, apexcompat._compat as c; "
        "c.is_autocast_enabled('cpu'); c.get_autocast_dtype('cuda'); c.grad_scaler_class(); "
        "c.cpu_float16_autocast_supported(); c.has_amp_unscale_kernel('cpu')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
