"""LossScaler and its rule (spec §6) on cases the traces do not spell out, and the
unscale helpers (fused-build semantics, fp32 multiplier, accumulate form)."""

from __future__ import annotations

import pytest
import torch

from apexcompat import _unscale
from apexcompat.amp.scaler import LossScaler, next_scale_state


def _step(scaler, overflow):
    scaler.clear_overflow_state()
    g = torch.ones(2)
    if overflow:
        g[1] = float("nan")
    scaler.unscale([g], [g], None, models_are_masters=True)
    return scaler.update_scale()


def test_construction():
    s = LossScaler("dynamic")
    assert s.dynamic and s.loss_scale() == 65536.0 and type(s.loss_scale()) is float
    assert s._unskipped == 0 and s._scale_seq_len == 2000 and not s._has_overflow
    assert LossScaler("dynamic", max_loss_scale=1024).loss_scale() == 1024  # int cap wins
    assert type(LossScaler("dynamic", max_loss_scale=1024).loss_scale()) is int
    assert LossScaler("dynamic", min_loss_scale=2.0**20).loss_scale() == 65536.0  # floor not at start
    static = LossScaler(128.0)
    assert not static.dynamic and static.loss_scale() == 128.0


def test_none_max_with_dynamic_raises_pythons_error():
    with pytest.raises(TypeError, match="'<' not supported between instances of 'float' and 'NoneType'"):
        LossScaler("dynamic", max_loss_scale=None)
    assert LossScaler(4.0, max_loss_scale=None).loss_scale() == 4.0


@pytest.mark.parametrize("floor", [0, 0.0, None])
def test_falsy_floor_is_no_floor(floor):
    s = LossScaler("dynamic", min_loss_scale=floor)
    for _ in range(20):
        assert _step(s, True)
    assert s.loss_scale() == 65536.0 / 2**20


def test_int_floor_reached_exactly_gives_int():
    s = LossScaler("dynamic", min_loss_scale=128)
    s._loss_scale = 256.0
    _step(s, True)
    assert s.loss_scale() == 128 and type(s.loss_scale()) is int
    _step(s, True)
    assert type(s.loss_scale()) is int


def test_floor_above_scale_raises_it_and_still_skips():
    s = LossScaler("dynamic", min_loss_scale=2.0**20)
    assert _step(s, True) is True
    assert s.loss_scale() == 2.0**20 and s._unskipped == 0


def test_static_never_checks_and_counts():
    s = LossScaler(128.0)
    for i in range(2005):
        assert _step(s, i % 3 == 0) is False
    assert s.loss_scale() == 128.0 and s._unskipped == 2005


def test_growth_at_exact_window_and_cap():
    s = LossScaler("dynamic", max_loss_scale=2.0**17)
    for _ in range(1999):
        _step(s, False)
    assert s.loss_scale() == 65536.0
    assert _step(s, False) is False  # the growth update is not a skip
    assert s.loss_scale() == 131072.0 and s._unskipped == 0
    for _ in range(2000):
        _step(s, False)
    assert s.loss_scale() == 131072.0 and s._unskipped == 0  # capped, counter reset


def test_counter_past_window_never_grows():
    s = LossScaler("dynamic")
    s._unskipped = 2500
    for _ in range(100):
        _step(s, False)
    assert s.loss_scale() == 65536.0 and s._unskipped == 2600


def test_next_scale_state_is_the_rule():
    assert next_scale_state(8.0, 5, True, True, None, 2.0**24, 2000) == (4.0, 0, True)
    assert next_scale_state(8.0, 1999, False, True, None, 2.0**24, 2000) == (16.0, 0, False)
    assert next_scale_state(8.0, 1999, True, False, None, 2.0**24, 2000) == (8.0, 2000, False)


def test_has_overflow_is_settable_and_syncs_lazily():
    s = LossScaler("dynamic")
    s.clear_overflow_state()
    g = torch.tensor([1.0, float("inf")])
    s.unscale([g], [g], None, models_are_masters=True)
    assert s._has_overflow is True
    s._has_overflow = False
    assert s.update_scale() is False


def test_tiny_scale_gives_infinite_float32_multiplier():
    """1/scale is applied as a float32 (spec §5.4): 0 * inf = nan, and that overflows."""
    s = LossScaler("dynamic")
    s._loss_scale = 2.0**-140
    g = torch.tensor([0.0, 1e-30])
    s.clear_overflow_state()
    s.unscale([g], [g], None, models_are_masters=True)
    assert torch.isnan(g[0]) and torch.isinf(g[1])
    assert s.update_scale() is False  # the input was finite: the check looks at inputs


def test_unscale_out_of_place_fp16_to_fp32():
    src = [torch.tensor([65504.0, 2.0], dtype=torch.float16)]
    dst = [torch.empty(2)]
    found = _unscale.FoundInf()
    _unscale.unscale_into(src, dst, 1.0 / 65536, found)
    assert dst[0].dtype == torch.float32 and dst[0].tolist() == [65504.0 / 65536, 2.0 / 65536]
    assert not found.any()


def test_unscale_add_checks_only_new_part():
    new = [torch.tensor([4.0, 8.0])]
    stashed = [torch.tensor([float("inf"), 1.0])]
    found = _unscale.FoundInf()
    _unscale.unscale_add_into(new, stashed, new, 0.25, 1.0, found)
    assert new[0].tolist() == [float("inf"), 3.0]
    assert not found.any()
    found.reset()
    new = [torch.tensor([float("nan"), 8.0], dtype=torch.float16)]
    out = [torch.ones(2)]
    _unscale.unscale_add_into(new, out, out, 0.5, 1.0, found)
    assert found.any() and out[0][1].item() == 5.0


def test_groups_by_device_and_dtype_one_flag_per_device():
    grads = [torch.ones(2), torch.ones(2, dtype=torch.float16), torch.ones(3)]
    found = _unscale.FoundInf()
    _unscale.unscale_into(grads, grads, 0.5, found)
    assert [g.tolist() for g in grads] == [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5, 0.5]]
    assert list(found._flags) == [torch.device("cpu")]


def test_fallback_without_kernel(monkeypatch):
    from apexcompat import _compat

    monkeypatch.setattr(_compat, "has_amp_unscale_kernel", lambda device_type: False)
    grads = [torch.tensor([2.0, 4.0]), torch.tensor([float("-inf")])]
    found = _unscale.FoundInf()
    _unscale.unscale_into(grads, grads, 0.5, found)
    assert grads[0].tolist() == [1.0, 2.0] and found.any()
    clean = [torch.tensor([3e38, 3e38])]
    found.reset()
    _unscale.unscale_into(clean, clean, 1.0, found)
    assert not found.any()


@pytest.mark.parametrize("opt_level, loss_scale, syncs", [("O1", "dynamic", 1), ("O2", "dynamic", 1), ("O2", 128.0, 0)])
def test_one_host_sync_per_scale_loss_exit(monkeypatch, opt_level, loss_scale, syncs):
    """No per-tensor .item(): one read of the found-inf flag per exit (none when static)."""
    from apexcompat import _compat, amp
    from _golden_replay import LoopNet, captured_lines

    torch.manual_seed(0)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level=opt_level, loss_scale=loss_scale, verbosity=0)
    calls = []
    original = torch.Tensor.item

    def counting_item(self):
        calls.append(self.shape)
        return original(self)

    _compat.has_amp_unscale_kernel("cpu")  # the one-off, cached kernel probe
    for accumulate in (False, True):  # fresh grads, then grads accumulated onto a stash
        if not accumulate:
            opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(torch.randn(8, 4)), torch.zeros(8, 2))
        monkeypatch.setattr(torch.Tensor, "item", counting_item)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        monkeypatch.setattr(torch.Tensor, "item", original)
        assert len(calls) == syncs, calls
        calls.clear()
