"""``amp.state_dict`` / ``amp.load_state_dict`` (spec §7) against the api/ traces, plus
the GradScaler-format load path."""

from __future__ import annotations

import collections
import json

import pytest
import torch

from apexcompat import amp
from apexcompat.amp import _amp_state
from conftest import golden_files
from _golden_replay import LoopNet, captured_lines, load_state_dict_trace_names, scaler_states, typed


def _trace(name):
    path = golden_files("api").get(name)
    if path is None:
        pytest.fail(f"golden trace api/{name} is missing")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _init(num_losses=1, opt_level="O1", **kwargs):
    torch.manual_seed(1234)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level=opt_level, num_losses=num_losses, verbosity=0, **kwargs)
    return model, opt


def _backward(model, opt, loss_id=0, inject=False):
    g = torch.Generator().manual_seed(1000)
    x, y = torch.randn(16, 4, generator=g), torch.randn(16, 2, generator=g)
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    with amp.scale_loss(loss, opt, loss_id=loss_id) as scaled:
        scaled.backward()
        if inject:
            model.fc1.weight.grad.view(-1)[0] = float("inf")
    opt.step()


def test_state_dict_format():
    want = _trace("state_dict_format")["result"]
    model, opt = _init(num_losses=3)
    for loss_id, clean_steps in enumerate((2, 1, 0)):
        _backward(model, opt, loss_id, inject=True)
        for _ in range(clean_steps):
            _backward(model, opt, loss_id)
    sd = amp.state_dict()
    assert type(sd).__name__ == want["type"] and isinstance(sd, collections.OrderedDict)
    assert list(sd) == want["keys"]
    assert typed(dict(sd)) == typed(want["value"])
    assert {k: {f: type(v).__name__ for f, v in e.items()} for k, e in sd.items()} == want["value_types"]


def test_state_dict_destination():
    want = _trace("state_dict_destination")["result"]
    _init()
    destination = {"already": 1}
    returned = amp.state_dict(destination)
    assert (returned is destination) == want["returned_is_destination"]
    assert list(returned) == list(want["value"])
    assert typed(returned) == typed(want["value"])


LOAD_TRACES = load_state_dict_trace_names()


def test_the_visible_load_traces_are_found():
    assert {"load_state_dict_fewer_entries", "load_state_dict_more_entries",
            "load_state_dict_unexpected_key"} <= set(LOAD_TRACES)


@pytest.mark.parametrize("name", LOAD_TRACES)
def test_load_state_dict_entries(name):
    trace = _trace(name)
    want = trace["result"]
    _init(num_losses=len(want["scalers_after"]))
    loaded = want.get("loaded")
    if loaded is None:  # unexpected keys: apex's own example values
        loaded = {k: ({"loss_scale": 512.0, "unskipped": 7} if "loss_scaler" in k else {"x": 1})
                  for k in want["loaded_keys"]}
    with captured_lines() as printed:
        if want["status"] == "error":
            with pytest.raises(Exception) as err:
                amp.load_state_dict(loaded)
            assert type(err.value).__name__ == want["error"]["type"]
            assert str(err.value) == want["error"]["message"]
        else:
            amp.load_state_dict(loaded)
    assert printed == trace["stdout_without_fallback_lines"]
    assert typed(scaler_states()) == typed(want["scalers_after"])


def test_load_state_dict_types_kept():
    want = _trace("load_state_dict_types_kept")["result"]
    _init()
    amp.load_state_dict({"loss_scaler0": {"loss_scale": 1024, "unskipped": 5}})
    assert type(_amp_state.loss_scalers[0].loss_scale()).__name__ == want["loss_scale_type_after_loading_int"]
    assert typed(dict(amp.state_dict())) == typed(want["state_dict_after"])


def test_load_state_dict_key_order_not_number():
    """Keys are assigned in iteration order; the number in the key is ignored (§7.2)."""
    _init(num_losses=2)
    amp.load_state_dict({"loss_scaler1": {"loss_scale": 8.0, "unskipped": 1},
                         "my_loss_scaler0": {"loss_scale": 16.0, "unskipped": 2}})
    assert scaler_states() == [{"loss_scale": 8.0, "unskipped": 1}, {"loss_scale": 16.0, "unskipped": 2}]


def test_load_state_dict_missing_field_raises_keyerror():
    _init()
    with pytest.raises(KeyError):
        amp.load_state_dict({"loss_scaler0": {"loss_scale": 8.0}})


def test_before_initialize_state_dicts():
    want = _trace("before_initialize")["result"]
    for name, call in (("state_dict", lambda: amp.state_dict()), ("load_state_dict", lambda: amp.load_state_dict({}))):
        with pytest.raises(AttributeError) as err:
            call()
        assert want[name]["status"] == "error"
        assert str(err.value) == want[name]["value_or_error"]["message"]


def test_load_grad_scaler_state_dict():
    """A torch.amp.GradScaler state dict restores scaler 0 (scale, _growth_tracker)."""
    _init()
    gs = {"scale": 4096.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2000, "_growth_tracker": 17}
    with captured_lines() as printed:
        amp.load_state_dict(gs)
    assert printed == []
    assert typed(scaler_states()) == typed([{"loss_scale": 4096.0, "unskipped": 17}])


def test_load_real_grad_scaler_state_dict():
    from apexcompat import _compat

    if not _compat.grad_scaler_supports_device("cpu"):
        pytest.skip("this torch has no CPU GradScaler")
    scaler = _compat.new_grad_scaler("cpu", init_scale=1024.0)
    w = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([w], lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        scaler.scale(w.sum()).backward()
        scaler.step(opt)
        scaler.update()
    _init()
    amp.load_state_dict(scaler.state_dict())
    assert typed(scaler_states()) == typed([{"loss_scale": 1024.0, "unskipped": 3}])
