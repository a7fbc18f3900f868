"""bfloat16 as amp's half type: ``APEXCOMPAT_HALF_DTYPE=bfloat16`` / ``amp.set_half_dtype``
at every opt level, and ``cast_model_type=torch.bfloat16`` at O2/O3 without them. Real
training loops on the CPU; GPU variants are marked ``gpu``."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import apexcompat
from apexcompat import amp
from apexcompat.amp._amp_state import _amp_state, reset_state
from _golden_replay import LoopNet, captured_lines

BF16_NOTICE = "apexcompat: APEXCOMPAT_HALF_DTYPE=bfloat16: "


def _batches(n, device="cpu"):
    g = torch.Generator().manual_seed(7)
    for _ in range(n):
        x = torch.randn(32, 4, generator=g)
        yield x.to(device), (x[:, :2] * 2 - x[:, 2:]).to(device)


def _train(model, opt, steps, device="cpu", seen=None):
    losses = []
    for x, y in _batches(steps, device):
        opt.zero_grad()
        out = model(x)
        if seen is not None:
            seen.append(out.dtype)
        loss = F.mse_loss(out.float(), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _fc1_output_dtypes(model):
    """Records the dtype fc1 computes in (autocast's dtype at O1)."""
    seen = []
    model.fc1.register_forward_hook(lambda mod, args, out: seen.append(out.dtype))
    return seen


EXPECTED = {
    # level: (fc1.weight dtype, bn.weight dtype, optimizer param dtypes, fc1 output dtype)
    "O1": (torch.float32, torch.float32, {torch.float32}, torch.bfloat16),
    "O2": (torch.bfloat16, torch.float32, {torch.float32}, torch.bfloat16),
    "O3": (torch.bfloat16, torch.bfloat16, {torch.bfloat16}, torch.bfloat16),
}


@pytest.mark.parametrize("opt_level", ["O1", "O2", "O3"])
def test_env_bfloat16_trains_at_every_level(opt_level, monkeypatch, capsys):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
    torch.manual_seed(0)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, opt = amp.initialize(model, opt, opt_level=opt_level)
    seen = _fc1_output_dtypes(model)
    losses = _train(model, opt, 60)
    out, err = capsys.readouterr()

    weight, bn, opt_dtypes, autocast_dtype = EXPECTED[opt_level]
    assert model.fc1.weight.dtype == weight and model.bn.weight.dtype == bn
    assert {p.dtype for g in opt.param_groups for p in g["params"]} == opt_dtypes
    assert set(seen) == {autocast_dtype}
    assert losses[-1] < 0.5 * losses[0]
    assert "Gradient overflow" not in out
    assert "cast_model_type        : " + ("None" if opt_level == "O1" else "torch.bfloat16") in out
    assert "loss_scale             : 1.0" in out and "dynamic" not in out
    assert not _amp_state.loss_scalers[0].dynamic
    assert err.count(BF16_NOTICE) == 1 and "loss scaling off (static loss_scale 1.0)" in err


def test_env_bfloat16_banner_names_bf16_and_keeps_o0():
    with pytest.MonkeyPatch.context() as mp, captured_lines() as lines:
        mp.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
        amp.initialize(LoopNet(), opt_level="O2")
        amp.initialize(LoopNet(), opt_level="O3")
        model = amp.initialize(LoopNet(), opt_level="O0")
    assert "Selected optimization level O2:  BF16 training with FP32 batchnorm and FP32 master weights." in lines
    assert "Selected optimization level O3:  Pure BF16 training." in lines
    assert model.fc1.weight.dtype == torch.float32


def test_explicit_loss_scale_keeps_scaling_with_env(monkeypatch, capsys):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
    torch.manual_seed(0)
    model, opt = amp.initialize(LoopNet(), torch.optim.SGD(LoopNet().parameters(), lr=0.05), opt_level="O2",
                                loss_scale="dynamic")
    assert _amp_state.loss_scalers[0].dynamic
    assert "loss_scale='dynamic' kept as passed to initialize" in capsys.readouterr().err


def test_env_turns_an_explicit_float16_cast_into_bfloat16(monkeypatch):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
    with captured_lines():
        model = amp.initialize(LoopNet(), opt_level="O2", cast_model_type=torch.float16)
    assert model.fc1.weight.dtype == torch.bfloat16


def test_set_half_dtype_from_python_matches_the_env(capsys):
    apexcompat.set_half_dtype("bfloat16")
    with captured_lines():
        model, opt = amp.initialize(LoopNet(), torch.optim.SGD(LoopNet().parameters(), lr=0.1), opt_level="O2")
    assert model.fc1.weight.dtype == torch.bfloat16
    assert "apexcompat: set_half_dtype=bfloat16: O2 casts the model" in capsys.readouterr().err
    reset_state()  # the Python setting goes with amp's state
    with captured_lines():
        model = amp.initialize(LoopNet(), opt_level="O2")
    assert model.fc1.weight.dtype == torch.float16


@pytest.mark.parametrize("value", ["fp8", "half", "O2"])
def test_invalid_half_dtype_names_the_valid_values(value, monkeypatch):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", value)
    with pytest.raises(ValueError, match="valid values are 'float16' and 'bfloat16'"), captured_lines():
        amp.initialize(LoopNet(), opt_level="O1")


def test_float16_setting_is_apex_default(monkeypatch):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "float16")
    with captured_lines() as with_env:
        amp.initialize(LoopNet(), opt_level="O2")
    monkeypatch.delenv("APEXCOMPAT_HALF_DTYPE")
    reset_state()
    with captured_lines() as without:
        amp.initialize(LoopNet(), opt_level="O2")
    assert list(with_env) == list(without)
    assert "Selected optimization level O2:  FP16 training with FP32 batchnorm and FP32 master weights." in without


# --- cast_model_type=torch.bfloat16 without the env var ---------------------------------


@pytest.mark.parametrize("opt_level", ["O2", "O3"])
def test_cast_model_type_bfloat16_trains(opt_level, capsys):
    torch.manual_seed(0)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, opt = amp.initialize(model, opt, opt_level=opt_level, cast_model_type=torch.bfloat16)
    losses = _train(model, opt, 60)
    out, err = capsys.readouterr()
    weight, bn, opt_dtypes, _ = EXPECTED[opt_level]
    assert model.fc1.weight.dtype == weight and model.bn.weight.dtype == bn
    assert {p.dtype for g in opt.param_groups for p in g["params"]} == opt_dtypes
    assert losses[-1] < 0.5 * losses[0]
    assert "Gradient overflow" not in out
    # the defaults block shows the level's defaults, the final block the truth
    final = out.split("After processing overrides, optimization options are:")[1]
    assert "cast_model_type        : torch.bfloat16" in final and "loss_scale             : 1.0" in final
    assert err.count("apexcompat: cast_model_type=torch.bfloat16: loss scaling off") == 1


def test_cast_model_type_bfloat16_with_loss_scale_scales():
    torch.manual_seed(0)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level="O2", cast_model_type=torch.bfloat16, loss_scale=128.0)
        losses = _train(model, opt, 30)
    assert _amp_state.loss_scalers[0].loss_scale() == 128.0
    assert losses[-1] < losses[0]


def test_bfloat16_params_get_fp32_masters_and_stay_in_sync():
    torch.manual_seed(0)
    model = LoopNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level="O2", cast_model_type=torch.bfloat16)
        _train(model, opt, 3)
    stash = opt._amp_stash
    assert [p.dtype for p in stash.all_fp16_params] == [torch.bfloat16] * 4
    for param, master in zip(stash.all_fp16_params, stash.all_fp32_from_fp16_params):
        assert master.dtype == torch.float32
        assert torch.equal(param, master.to(torch.bfloat16))


# --- checkpoints ------------------------------------------------------------------------


def _init_bf16_o2(seed=0):
    torch.manual_seed(seed)
    model = LoopNet()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    return amp.initialize(model, opt, opt_level="O2")


def test_bfloat16_checkpoint_saves_and_restores(monkeypatch, tmp_path):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
    with captured_lines() as printed:
        model, opt = _init_bf16_o2()
        _train(model, opt, 5)
        torch.save(
            {"model": model.state_dict(), "optimizer": opt.state_dict(), "amp": amp.state_dict()},
            tmp_path / "ckpt.pt",
        )
        expected = _train(model, opt, 5)

        reset_state()
        checkpoint = torch.load(tmp_path / "ckpt.pt")
        model, opt = _init_bf16_o2(seed=99)
        fresh = _train(*_init_bf16_o2(seed=99), 5)
        model.load_state_dict(checkpoint["model"])
        opt.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        resumed = _train(model, opt, 5)
    # the model checkpoint is fp32, as with float16 (the state-dict hook upcasts bf16 too)
    assert {v.dtype for v in checkpoint["model"].values()} == {torch.float32, torch.int64}
    assert checkpoint["amp"] == {"loss_scaler0": {"loss_scale": 1.0, "unskipped": 5}}
    # same bf16 weights, so the same first loss; the fp32 masters are rebuilt from the bf16
    # weights on resume (as apex's O2 did for fp16), so later steps differ by bf16 rounding
    assert resumed[0] == expected[0]
    assert resumed == pytest.approx(expected, rel=1e-2)
    assert resumed[1:] != pytest.approx(fresh[1:], rel=1e-2)
    assert not any("Gradient overflow" in line for line in printed)


def test_float16_apex_checkpoint_loads_into_a_bfloat16_run(monkeypatch, capsys):
    """An apex fp16 run's scale (65536.0) is not taken on: bf16 runs unscaled."""
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
    model, opt = _init_bf16_o2()
    amp.load_state_dict({"loss_scaler0": {"loss_scale": 65536.0, "unskipped": 17}})
    scaler = _amp_state.loss_scalers[0]
    assert (scaler.loss_scale(), scaler._unskipped) == (1.0, 17)
    assert "the checkpoint's loss scale 65536.0 is not used" in capsys.readouterr().err
    losses = _train(model, opt, 20)
    assert losses[-1] < losses[0]


def test_explicit_cast_bfloat16_model_state_dict_stays_bfloat16():
    """apex's hook upcast Half entries only; an explicit bf16 cast_model_type keeps that."""
    with captured_lines():
        model = amp.initialize(LoopNet(), opt_level="O2", cast_model_type=torch.bfloat16)
    assert torch.bfloat16 in {v.dtype for v in model.state_dict().values()}


# --- GPU --------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("opt_level", ["O1", "O2", "O3"])
def test_env_bfloat16_trains_on_cuda(opt_level, monkeypatch):
    monkeypatch.setenv("APEXCOMPAT_HALF_DTYPE", "bfloat16")
    torch.manual_seed(0)
    model = LoopNet().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with captured_lines() as printed:
        model, opt = amp.initialize(model, opt, opt_level=opt_level)
        seen = _fc1_output_dtypes(model)
        losses = _train(model, opt, 60, device="cuda")
    weight, bn, opt_dtypes, autocast_dtype = EXPECTED[opt_level]
    assert model.fc1.weight.dtype == weight and model.bn.weight.dtype == bn
    assert {p.dtype for g in opt.param_groups for p in g["params"]} == opt_dtypes
    assert set(seen) == {autocast_dtype}
    assert losses[-1] < 0.5 * losses[0]
    assert not any("Gradient overflow" in line for line in printed)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cast_model_type_bfloat16_o2_on_cuda():
    torch.manual_seed(0)
    model = LoopNet().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level="O2", cast_model_type=torch.bfloat16)
        losses = _train(model, opt, 60, device="cuda")
    assert model.fc1.weight.dtype == torch.bfloat16
    assert {p.dtype for g in opt.param_groups for p in g["params"]} == {torch.float32}
    assert losses[-1] < 0.5 * losses[0]
