"""Rules of the apex.amp spec that no visible golden trace pins down, one test per rule
(the section is named in each test).  They guard the held-back traces of the same kinds."""

from __future__ import annotations

import collections
import sys

import pytest
import torch
import torch.nn.functional as F

from apexcompat import amp
from apexcompat.amp._amp_state import _amp_state
from apexcompat.amp.scaler import LossScaler
from _golden_replay import LoopNet, captured_lines

# The module (``apexcompat.amp._amp_state`` as an attribute is apex's state object).
amp_state_module = sys.modules["apexcompat.amp._amp_state"]
OVERFLOW = "Gradient overflow.  Skipping step, loss scaler {} reducing loss scale to {}"


def _model_and_sgd(momentum=0.0):
    torch.manual_seed(1234)
    model = LoopNet()
    return model, torch.optim.SGD(model.parameters(), lr=0.05, momentum=momentum)


def _backward(model, optimizers, inject=None, target="fc1", i=0, **kwargs):
    g = torch.Generator().manual_seed(1000 + i)
    x, y = torch.randn(16, 4, generator=g), torch.randn(16, 2, generator=g)
    with amp.scale_loss(F.mse_loss(model(x).float(), y), optimizers, **kwargs) as scaled:
        scaled.backward()
        if inject is not None:
            getattr(model, target).weight.grad.view(-1)[0] = inject


def _init(opt_level="O1", optimizer=None, **kwargs):
    model, opt = _model_and_sgd()
    kwargs.setdefault("verbosity", 0)
    with captured_lines():
        model, opt = amp.initialize(model, optimizer or opt, opt_level=opt_level, **kwargs)
    return model, opt


# --- §3.2 / §3.4 initialize ----------------------------------------------------------------


@pytest.mark.parametrize("level, printed", [("O0", 11), ("O2", 11), ("O3", 10)])
def test_override_error_comes_after_the_defaults_block(level, printed):
    """§3.2 step 9: an override error arrives after 11 printed lines (10 for O3)."""
    model, opt = _model_and_sgd()
    with captured_lines() as lines, pytest.raises(RuntimeError, match="^Currently, patch_torch"):
        amp.initialize(model, opt, opt_level=level, patch_torch_functions=True)
    assert len(lines) == printed
    assert lines[-1] == "Processing user overrides (additional kwargs that are not None)..."


def test_hard_override_o1_cast_model_type_warns_and_keeps_value():
    """§3.4: with hard_override the message is printed with 'Warning:  ' and the value kept."""
    _amp_state.hard_override = True
    model, opt = _model_and_sgd()
    with captured_lines() as lines:
        amp.initialize(model, opt, opt_level="O1", cast_model_type=torch.float16)
    warning = [line for line in lines if line.startswith("Warning:")]
    assert warning == [
        "Warning:  O1 inserts casts around Torch functions rather than model weights, so with O1, "
        "the model weights themselves should remain FP32. If you wish to cast the model to a "
        "different type, use opt_level='O2' or 'O3'. cast_model_type was torch.float16"
    ]
    # printed between the override announcement and the second block
    at = lines.index(warning[0])
    assert lines[at - 1].startswith("Processing user overrides")
    assert lines[at + 1] == "After processing overrides, optimization options are:"
    assert _amp_state.opt_properties.cast_model_type is torch.float16
    assert "cast_model_type        : torch.float16" in lines[at + 1:]


def test_hard_override_o1_keep_bn_string_warns_with_raw_value_then_normalises():
    """§3.4: the O1 message shows the value as given; the string is then made a bool."""
    _amp_state.hard_override = True
    model, opt = _model_and_sgd()
    with captured_lines() as lines:
        amp.initialize(model, opt, opt_level="O1", keep_batchnorm_fp32="False")
    assert [line for line in lines if line.startswith("Warning:")] == [
        "Warning:  With opt_level O1, batchnorm functions are automatically patched to run in "
        "FP32, so keep_batchnorm_fp32 should be None. keep_batchnorm_fp32 was False"
    ]
    assert _amp_state.opt_properties.keep_batchnorm_fp32 is False


def test_hard_override_patch_torch_functions_at_o2():
    """§3.4: patch_torch_functions=True at O2 with hard_override warns and is kept."""
    _amp_state.hard_override = True
    model, opt = _model_and_sgd()
    with captured_lines() as lines:
        amp.initialize(model, opt, opt_level="O2", patch_torch_functions=True, verbosity=0)
    assert lines == [
        "Warning:  Currently, patch_torch_functions=True should only be set by selecting "
        "opt_level='O1'."
    ]
    assert _amp_state.opt_properties.patch_torch_functions is True


def test_failed_scaler_creation_leaves_no_old_scalers():
    """§3.4 / §3.11: max_loss_scale=None with a dynamic scale raises Python's TypeError while
    the scalers are being built; the previous initialize's scalers are gone."""
    _init("O1", num_losses=2)
    model, opt = _model_and_sgd()
    with captured_lines(), pytest.raises(TypeError, match="'<' not supported between instances of 'float' and 'NoneType'"):
        amp.initialize(model, opt, opt_level="O1", max_loss_scale=None)
    assert _amp_state.loss_scalers == []
    assert dict(amp.state_dict()) == {}


def test_static_scale_accepts_max_none():
    """§3.4: with a static scale, max_loss_scale=None is accepted."""
    _init("O1", loss_scale=128, max_loss_scale=None)
    assert _amp_state.loss_scalers[0].loss_scale() == 128.0
    assert isinstance(_amp_state.loss_scalers[0].loss_scale(), float)


def test_enabled_false_keeps_earlier_scalers_and_stores_verbosity():
    """§3.6: a disabled initialize resets the properties and verbosity but not the scalers."""
    model, opt = _init("O1", num_losses=2)
    _amp_state.loss_scalers[1]._loss_scale = 8.0
    model2, opt2 = _model_and_sgd()
    with captured_lines() as lines:
        amp.initialize(model2, opt2, enabled=False, verbosity=3)
    assert lines == []
    assert _amp_state.verbosity == 3
    assert _amp_state.opt_properties.enabled is False
    assert dict(amp.state_dict()) == {
        "loss_scaler0": {"loss_scale": 65536.0, "unskipped": 0},
        "loss_scaler1": {"loss_scale": 8.0, "unskipped": 0},
    }


def test_opt_properties_expose_the_seven_options():
    """§1: amp._amp_state.opt_properties exposes the seven options as attributes."""
    _init("O2", loss_scale="128.0", keep_batchnorm_fp32="False")
    props = _amp_state.opt_properties
    assert (props.enabled, props.opt_level, props.cast_model_type, props.patch_torch_functions,
            props.keep_batchnorm_fp32, props.master_weights, props.loss_scale) == (
        True, "O2", torch.float16, False, False, True, 128.0)


def test_second_o1_initialize_with_a_new_optimizer_works():
    """§3.11: initialize may run again with new objects; it prints again."""
    _init("O1")
    model, opt = _model_and_sgd()
    with captured_lines() as lines:
        amp.initialize(model, opt, opt_level="O1")
    assert len(lines) == 19
    _backward(model, opt, inject=float("inf"))
    with captured_lines() as lines:
        opt.step()
    assert lines == [OVERFLOW.format(0, 32768.0)]


# --- §4 optimizer processing ----------------------------------------------------------------


def test_add_param_group_without_masters_single_tensor_and_set():
    """§4.1: one tensor is wrapped in a list, a set raises, the group must be a dict; lazy
    init runs first (so the existing params are classified too)."""
    model, opt = _init("O1")
    assert opt._amp_stash.lazy_init_called is False
    extra = torch.nn.Parameter(torch.ones(3))
    with pytest.raises(AssertionError, match="^param group must be a dict$"):
        opt.add_param_group([extra])
    assert opt._amp_stash.lazy_init_called is True
    with pytest.raises(TypeError, match="^optimizer parameters need to be organized in ordered collections"):
        opt.add_param_group({"params": {extra}})
    opt.add_param_group({"params": extra, "lr": 0.5})
    assert opt.param_groups[-1]["params"] == [extra]
    assert opt._amp_stash.all_fp32_params[-1] is extra
    assert len(opt._amp_stash.all_fp32_grad_stash) == len(opt._amp_stash.all_fp32_params) == 7
    # the new param takes part in the unscale
    opt.zero_grad()
    with amp.scale_loss((extra * 2.0).sum(), opt) as scaled:
        scaled.backward()
    assert torch.equal(extra.grad, torch.full((3,), 2.0))


def test_master_weights_leave_frozen_params_unclassified():
    """§4.1/§4.2: with master weights only params requiring grad get masters; a frozen fp16
    param stays in the group as it is."""
    torch.manual_seed(1234)
    model = LoopNet()
    model.fc2.bias.requires_grad_(False)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level="O2", verbosity=0)
    opt.zero_grad()
    params = opt.param_groups[0]["params"]
    assert params[5] is model.fc2.bias and params[5].dtype == torch.float16
    assert [p.dtype for p in params[:5]] == [torch.float32] * 5
    assert len(opt._amp_stash.all_fp16_params) == 3


# --- §5 scale_loss ----------------------------------------------------------------------------


def test_tuple_of_optimizers_skips_prepare():
    """§5.2 step 5: with a tuple nothing is stashed, so the existing (unscaled) grads are
    unscaled again together with the new ones; a list stashes and adds them back."""
    results = {}
    for form in (list, tuple):
        model, opt = _init("O1")
        opt.zero_grad()
        _backward(model, [opt])
        first = model.fc1.weight.grad.clone()
        _backward(model, form([opt]), i=1)
        results[form] = (first, model.fc1.weight.grad.clone())
    model, opt = _init("O1")
    _backward(model, [opt], i=1)
    second = model.fc1.weight.grad.clone()
    first, accumulated = results[list]
    assert torch.allclose(accumulated, first + second, rtol=1e-3, atol=1e-6)
    first, unstashed = results[tuple]
    scale = _amp_state.loss_scalers[0].loss_scale()
    assert torch.allclose(unstashed, first / scale + second, rtol=1e-3, atol=1e-6)


def test_o2_static_one_drops_the_fp32_stash():
    """§5.3: O2 + loss_scale=1.0 accumulating without zero_grad keeps only the newest grads
    of the fp32 params (the stash is dropped), while fp16 params accumulate in the masters;
    the counter still advances (no short-cut with master weights)."""
    model, opt = _init("O2", loss_scale=1.0)
    opt.zero_grad()
    _backward(model, opt)
    bn_first = model.bn.weight.grad.clone()
    master_fc1 = opt.param_groups[0]["params"][0]
    fc1_first = master_fc1.grad.clone()
    _backward(model, opt, i=1)
    model2, opt2 = _init("O2", loss_scale=1.0)
    opt2.zero_grad()
    _backward(model2, opt2, i=1)
    bn_second = model2.bn.weight.grad
    fc1_second = opt2.param_groups[0]["params"][0].grad
    assert torch.equal(model.bn.weight.grad, bn_second)
    assert not torch.equal(model.bn.weight.grad, bn_first + bn_second)
    assert torch.allclose(master_fc1.grad, fc1_first + fc1_second)
    assert _amp_state.loss_scalers[0]._unskipped == 1


def test_overflow_line_prints_an_int_scale_without_point():
    """§5.5 / §6.3: an int floor reached exactly makes the scale the int itself."""
    model, opt = _init("O1", min_loss_scale=32768, verbosity=1)
    printed = []
    for _ in range(2):
        opt.zero_grad()
        _backward(model, opt, inject=float("inf"))
        with captured_lines() as lines:
            opt.step()
        printed += lines
    assert printed == [OVERFLOW.format(0, 32768)] * 2
    assert repr(_amp_state.loss_scalers[0].loss_scale()) == "32768"


def test_int_cap_gives_int_initial_scale():
    """§6.1 / §6.3: min(max_loss_scale, 2**16) returns an int cap on a tie."""
    _init("O1", max_loss_scale=65536)
    assert repr(_amp_state.loss_scalers[0].loss_scale()) == "65536"


def test_overflow_line_is_silent_at_verbosity_zero():
    """§5.5: nothing printed with verbosity=0, the step is still skipped."""
    model, opt = _init("O2", verbosity=0)
    opt.zero_grad()
    _backward(model, opt, inject=float("nan"))
    before = model.fc1.weight.clone()
    with captured_lines() as lines:
        opt.step()
    assert lines == []
    assert torch.equal(model.fc1.weight, before)


def test_delay_unscale_defers_unscale_and_update():
    """§5.7: delayed calls leave grads scaled and the scaler untouched; the next non-delayed
    call unscales everything at once and advances the counter once."""
    model, opt = _init("O1")
    opt.zero_grad()
    _backward(model, opt, delay_unscale=True)
    assert opt._amp_stash.params_have_scaled_gradients is True
    assert dict(amp.state_dict())["loss_scaler0"] == {"loss_scale": 65536.0, "unskipped": 0}
    scaled_first = model.fc1.weight.grad.clone()
    _backward(model, opt, i=1)
    assert opt._amp_stash.params_have_scaled_gradients is False
    assert dict(amp.state_dict())["loss_scaler0"] == {"loss_scale": 65536.0, "unskipped": 1}
    model2, opt2 = _init("O1")
    _backward(model2, opt2, i=1)
    assert torch.allclose(model.fc1.weight.grad, scaled_first / 65536.0 + model2.fc1.weight.grad,
                          rtol=1e-3, atol=1e-6)


def test_delay_overflow_check_never_skips():
    """§5.7: delay_overflow_check unscales but never updates: no skip, no counter change."""
    model, opt = _init("O1")
    opt.zero_grad()
    _backward(model, opt, inject=float("inf"), delay_overflow_check=True)
    assert opt._amp_stash.already_patched is False
    assert dict(amp.state_dict())["loss_scaler0"] == {"loss_scale": 65536.0, "unskipped": 0}
    assert torch.isinf(model.fc1.weight.grad).any()
    assert model.fc2.weight.grad.abs().max() < 100  # unscaled


def test_written_loss_scale_is_used_by_scale_loss():
    """§1: loss_scalers[i]._loss_scale is writable and used by the next scale_loss."""
    model, opt = _init("O1")
    _amp_state.loss_scalers[0]._loss_scale = 4.0
    loss = torch.ones(2, requires_grad=True).sum()
    with amp.scale_loss(loss, opt) as scaled:
        assert scaled.item() == 8.0
    assert _amp_state.loss_scalers[0].loss_scale() == 4.0


# --- §6 the scaler used directly (apex.amp.scaler.LossScaler) ------------------------------


def test_loss_scaler_used_directly_like_apex_tests():
    """§1 / §6: LossScaler(loss_scale) with loss_scale(), clear_overflow_state(),
    unscale(model_grads, master_grads, scale) and update_scale() as apex's tests used it."""
    scaler = LossScaler("dynamic", scale_factor=4.0)  # the factor is ignored
    grad = torch.full((2,), 2.0 * 65536)
    scaler.clear_overflow_state()
    scaler.unscale([grad], [grad], scaler.loss_scale())
    assert torch.equal(grad, torch.full((2,), 2.0))
    assert scaler.update_scale() is False and scaler._unskipped == 1
    bad = torch.tensor([1.0, float("nan")])
    scaler.clear_overflow_state()
    scaler.unscale([bad], [bad], scaler.loss_scale())
    assert scaler._has_overflow is True
    assert scaler.update_scale() is True
    assert (scaler.loss_scale(), scaler._unskipped) == (32768.0, 0)
    # an overflow stays reported until the next clear_overflow_state, as in apex
    assert scaler.update_scale() is True
    scaler.clear_overflow_state()
    assert scaler.update_scale() is False


def test_loss_scaler_init_scale_and_out_of_place_unscale():
    scaler = LossScaler("dynamic", init_scale=1024.0)
    assert scaler.loss_scale() == 1024.0
    half = torch.full((3,), 2048.0, dtype=torch.float16)
    out = torch.empty(3)
    scaler.clear_overflow_state()
    scaler.unscale([half], [out], None)
    assert out.dtype == torch.float32 and torch.equal(out, torch.full((3,), 2.0))
    assert torch.equal(half, torch.full((3,), 2048.0, dtype=torch.float16))


# --- §7.2 load_state_dict -----------------------------------------------------------------


def test_load_state_dict_stops_walking_at_the_first_surplus_entry():
    """§7.2 step 3: after the surplus line nothing more is inspected, so an unexpected key
    behind it is not reported; one before it is, after the entries were applied."""
    _init("O1", num_losses=1)
    state = collections.OrderedDict([
        ("foo", 1),
        ("loss_scaler7", {"loss_scale": 2, "unskipped": 5}),
        ("loss_scaler0", {"loss_scale": 4.0, "unskipped": 6}),
        ("bar", 2),
    ])
    with captured_lines() as lines, pytest.raises(RuntimeError) as err:
        amp.load_state_dict(state)
    assert str(err.value) == 'Error(s) in loading state_dict. Unexpected key(s) in state_dict: "foo". '
    assert lines == [
        "Warning: state_dict contains 4 entries, while 1 loss_scalers are used",
        "Skipping loss_scaler[1], since num_losses was set to 1",
    ]
    assert dict(amp.state_dict()) == {"loss_scaler0": {"loss_scale": 2, "unskipped": 5}}


def test_load_state_dict_lines_ignore_verbosity_and_rank(monkeypatch):
    """§7.2: plain prints (every rank, any verbosity)."""
    _init("O1", num_losses=2, verbosity=0)
    monkeypatch.setattr(amp_state_module, "_distributed_rank_and_size", lambda: (1, 2))
    with captured_lines() as lines:
        amp.load_state_dict({"loss_scaler0": {"loss_scale": 2.0, "unskipped": 1}})
    assert lines == ["Warning: state_dict contains 1 entries, while 2 loss_scalers are used"]


# --- rank-0 printing ------------------------------------------------------------------------


def test_rank_one_prints_only_the_overflow_line(monkeypatch):
    """§3.5 / §5.5: initialize's lines are rank-0 only, the overflow line prints on every
    rank (as in [api/distributed_rank0_printing])."""
    monkeypatch.setattr(amp_state_module, "_distributed_rank_and_size", lambda: (1, 2))
    model, opt = _model_and_sgd()
    with captured_lines() as lines:
        model, opt = amp.initialize(model, opt, opt_level="O1")
        opt.zero_grad()
        _backward(model, opt, inject=float("inf"))
        opt.step()
    assert lines == [OVERFLOW.format(0, 32768.0)]


# --- §3.9 step 4: the state-dict hook upcasts Half entries only -----------------------------


@pytest.mark.parametrize("level, cast, expected", [
    ("O3", None, {torch.float32, torch.int64}),
    ("O2", None, {torch.float32, torch.int64}),
    ("O0", torch.float64, {torch.float64, torch.int64}),
    ("O2", torch.bfloat16, {torch.bfloat16, torch.float32, torch.int64}),
])
def test_model_state_dict_upcasts_only_half(level, cast, expected):
    """apex's hook replaced Half tensors by fp32 copies; other cast types are left alone."""
    torch.manual_seed(1234)
    model = LoopNet()
    kwargs = {} if cast is None else {"cast_model_type": cast}
    with captured_lines():
        amp.initialize(model, opt_level=level, verbosity=0, **kwargs)
    assert {v.dtype for v in model.state_dict().values()} == expected


def test_loss_scaler_unscale_is_a_no_op_until_the_overflow_is_cleared():
    """§6 (direct use): after update_scale() reported an overflow, apex's unscale did nothing
    until clear_overflow_state(); unscale_python is the same operation with an explicit scale."""
    scaler = LossScaler("dynamic")
    bad = torch.tensor([float("inf")])
    scaler.clear_overflow_state()
    scaler.unscale([bad], [bad], None)
    assert scaler.update_scale() is True
    grad = torch.full((2,), 4.0)
    scaler.unscale([grad], [grad], None)
    assert torch.equal(grad, torch.full((2,), 4.0))
    scaler.clear_overflow_state()
    scaler.unscale_python([grad], [grad], 2.0)
    assert torch.equal(grad, torch.full((2,), 2.0))
    assert scaler.update_scale() is False


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
def test_exception_in_the_block_skips_the_exit_work(level):
    """§5.2 step 7: not a ``finally`` — an exception inside the block leaves the scaler, the
    flags and the step alone; a later skip restores exactly the step that was there."""
    model, opt = _init(level, loss_scale="dynamic")
    step_before = vars(opt).get("step")
    with pytest.raises(KeyError):
        _backward_raising(model, opt)
    assert opt._amp_stash.already_patched is False
    assert opt._amp_stash.params_have_scaled_gradients is False
    assert dict(amp.state_dict())["loss_scaler0"] == {"loss_scale": 65536.0, "unskipped": 0}
    _backward(model, opt, inject=float("inf"))
    assert opt._amp_stash.already_patched is True
    with captured_lines():
        opt.step()
    assert vars(opt).get("step") == step_before


def _backward_raising(model, opt):
    with amp.scale_loss(model(torch.ones(2, 4)).float().sum(), opt) as scaled:
        scaled.backward()
        model.fc1.weight.grad.view(-1)[0] = float("inf")
        raise KeyError("inside the block")
