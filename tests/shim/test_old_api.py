"""The old ``amp.init`` API (spec §8.4) and the names ``apexcompat.amp`` exports: replay of
``api/old_api``."""

from __future__ import annotations

import json

import pytest
import torch

from apexcompat import amp
from apexcompat.amp._amp_state import reset_state
from conftest import golden_files, golden_params

OLD_API_TRACES = {n for n in golden_files("api") if n.startswith("old_api")}


def _error(exc: BaseException) -> dict:
    return {"type": type(exc).__name__, "message": str(exc)}


@golden_params("api", names=OLD_API_TRACES)
def test_old_api_golden(golden_path, capsys):
    expected = json.loads(golden_path.read_text())
    got = {}
    handle = amp.init()
    got["amp.init returns"] = type(handle).__name__
    loss = torch.ones(())
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    with pytest.raises(Exception) as info:
        with handle.scale_loss(loss, optimizer):
            pass
    got["handle.scale_loss"] = _error(info.value)
    reset_state()
    got["amp.init(enabled=False) returns"] = type(amp.init(enabled=False)).__name__
    got["exports"] = sorted(name for name in dir(amp) if not name.startswith("__"))
    assert got == {key: expected["result"][key] for key in got}
    assert set(got) == set(expected["result"]), "trace has entries this replay does not build"
    assert capsys.readouterr().out.splitlines() == expected["stdout_without_fallback_lines"]


def test_init_turns_o1_casting_on_for_this_thread():
    device = "cuda" if torch.cuda.is_available() else "cpu"  # where amp.init casts
    handle = amp.init()
    assert handle.is_active()
    assert torch.mm(torch.rand(2, 2, device=device), torch.rand(2, 2, device=device)).dtype == torch.float16
    reset_state()
    assert torch.mm(torch.rand(2, 2, device=device), torch.rand(2, 2, device=device)).dtype == torch.float32


def test_noop_handle_scale_loss_yields_the_loss():
    handle = amp.init(enabled=False)
    loss = torch.ones(())
    with handle.scale_loss(loss, None) as scaled:
        assert scaled is loss
    assert not handle.is_active()


def test_wrap_optimizer_raises_old_api_error_and_forwards_the_rest():
    handle = amp.init()
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    wrapped = handle.wrap_optimizer(optimizer)
    assert wrapped.param_groups is optimizer.param_groups
    with pytest.raises(RuntimeError, match="^The old Amp API is no longer supported"):
        with wrapped.scale_loss(torch.ones(())):
            pass
