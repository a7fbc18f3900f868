"""Optimizer processing (spec §4) against the api/ traces: lazy fp32 masters from fp16
values, patched zero_grad/step/add_param_group, state dicts, errors."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
import torch

from apexcompat import amp
from apexcompat.amp._process_optimizer import _process_optimizer
from conftest import golden_files
from _golden_replay import LoopNet, captured_lines


def _trace(name):
    path = golden_files("api").get(name)
    if path is None:
        pytest.fail(f"golden trace api/{name} is missing")
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _setup(opt_level="O2", optimizer="sgd", **kwargs):
    torch.manual_seed(1234)
    model = LoopNet()
    if optimizer == "adam":
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level=opt_level, verbosity=0, **kwargs)
    return model, opt


def _backward(model, opt, i=0):
    g = torch.Generator().manual_seed(1000 + i)
    x, y = torch.randn(16, 4, generator=g), torch.randn(16, 2, generator=g)
    with amp.scale_loss(torch.nn.functional.mse_loss(model(x), y), opt) as scaled:
        scaled.backward()


def test_o2_master_params_lazy():
    want = _trace("O2_master_params_lazy")["result"]
    model, opt = _setup()
    model_params = list(model.parameters())
    before = list(amp.master_params(opt))
    assert [str(p.dtype) for p in before] == want["master_param_dtypes_before_first_zero_grad_or_backward"]
    assert [m is p for m, p in zip(before, model_params)] == want["master_params_are_model_params_before"]
    opt.zero_grad()
    after = list(amp.master_params(opt))
    assert [str(p.dtype) for p in after] == want["master_param_dtypes_after"]
    assert [m is p for m, p in zip(after, model_params)] == want["master_params_are_model_params_after"]
    assert torch.equal(after[0], model.fc1.weight.float()) == want["fc1_master_equals_fp16_model_weight_upcast"]
    assert {n: str(p.dtype) for n, p in model.named_parameters()} == want["model_param_dtypes"]


def test_o2_first_master_from_fp16():
    want = _trace("O2_first_master_from_fp16")["result"]
    torch.manual_seed(1234)
    original = LoopNet().fc1.weight.detach().clone()
    model, opt = _setup()
    _backward(model, opt)
    master = list(amp.master_params(opt))[0]
    assert original.view(-1)[:4].tolist() == want["original_fp32_fc1_weight_first4"]
    assert model.fc1.weight.float().view(-1)[:4].tolist() == want["fp16_model_fc1_weight_first4"]
    assert master.view(-1)[:4].tolist() == want["fp32_master_fc1_weight_first4"]
    assert torch.equal(master, original) == want["master_equals_original"]
    assert torch.equal(master, model.fc1.weight.float()) == want["master_equals_fp16_upcast"]


def test_o2_zero_grad_and_closure():
    want = _trace("O2_zero_grad_and_closure")["result"]
    model, opt = _setup()
    with pytest.raises(TypeError) as err:
        opt.zero_grad(set_to_none=True)
    assert str(err.value) == want["zero_grad_set_to_none_kwarg"]["value"]["message"]
    _backward(model, opt)
    assert {n: str(p.grad.dtype) for n, p in model.named_parameters()} == want["grads_after_backward"]
    assert [str(p.grad.dtype) for p in amp.master_params(opt)] == want["master_grads_after_backward"]
    opt.zero_grad()
    got = {n: ("zeros" if p.grad is not None and not p.grad.any() else repr(p.grad))
           for n, p in model.named_parameters()}
    assert got == want["model_grads_after_zero_grad"]
    master_grads = [None if p.grad is None else "tensor" for p in amp.master_params(opt)]
    assert master_grads == want["master_grads_after_zero_grad"]
    with pytest.raises(RuntimeError) as err:
        opt.step(lambda: None)
    assert str(err.value) == want["step_with_closure"]["value"]["message"]


def test_o2_state_dicts():
    want = _trace("O2_state_dicts")["result"]
    model, opt = _setup(optimizer="adam")
    for i in range(2):
        opt.zero_grad()
        _backward(model, opt, i)
        opt.step()
    assert {n: str(p.dtype) for n, p in model.named_parameters()} == want["model_param_dtypes"]
    msd = model.state_dict()
    assert {k: str(v.dtype) for k, v in msd.items()} == want["model_state_dict_dtypes"]
    equal = all(torch.equal(msd[n], p.float()) for n, p in model.named_parameters())
    assert equal == want["model_state_dict_equals_upcast_fp16_params"]
    osd = opt.state_dict()
    assert [g["params"] for g in osd["param_groups"]] == want["optimizer_state_dict_param_groups_params"]
    state_dtypes = {str(k): {n: str(t.dtype) for n, t in v.items()} for k, v in osd["state"].items()}
    assert state_dtypes == want["optimizer_state_dtypes"]


def test_o2_load_optimizer_state_before_lazy_init():
    want = _trace("O2_load_optimizer_state_before_lazy_init")["result"]
    model, opt = _setup(optimizer="adam")
    for i in range(2):
        opt.zero_grad()
        _backward(model, opt, i)
        opt.step()
    saved = {k: v.clone() if torch.is_tensor(v) else v for k, v in opt.state_dict()["state"][0].items()}
    saved_sd = opt.state_dict()
    model2, opt2 = _setup(optimizer="adam")  # the "second initialize"
    opt2.load_state_dict(saved_sd)
    assert str(opt2.state_dict()["state"][0]["exp_avg"].dtype) == want["exp_avg_dtype_right_after_load"]
    opt2.zero_grad()  # lazy init
    exp_avg = opt2.state_dict()["state"][0]["exp_avg"]
    assert str(exp_avg.dtype) == want["exp_avg_dtype_after_lazy_init"]
    assert torch.equal(exp_avg, saved["exp_avg"]) == want["exp_avg_bitwise_equal_to_saved"]
    assert torch.equal(exp_avg, saved["exp_avg"].half().float()) == want["exp_avg_equal_to_fp16_roundtrip_of_saved"]


def test_o2_add_param_group():
    model, opt = _setup()
    extra16 = torch.nn.Parameter(torch.ones(3, dtype=torch.float16))
    extra32 = torch.nn.Parameter(torch.ones(2))
    with pytest.raises(AssertionError, match="param group must be a dict"):
        opt.add_param_group([extra16])
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {extra16}})
    opt.add_param_group({"params": extra16})
    opt.add_param_group({"params": (extra32,)})
    groups = opt.param_groups
    assert len(groups) == 3
    master16 = groups[1]["params"][0]
    assert master16 is not extra16 and master16.dtype == torch.float32 and master16.requires_grad
    assert groups[2]["params"][0] is extra32
    assert opt._amp_stash.all_fp16_params[-1] is extra16
    assert opt._amp_stash.all_fp32_from_fp16_params[-1] is master16
    # the new fp16 param trains through its master
    opt.zero_grad()
    with amp.scale_loss((extra16.float() * 0.25).sum() + extra32.sum(), opt) as scaled:
        scaled.backward()
    assert torch.equal(master16.grad, torch.full((3,), 0.25))
    opt.step()
    assert torch.equal(extra16, master16.half())


def test_add_param_group_without_masters_classifies():
    model, opt = _setup("O1")
    opt.add_param_group({"params": [torch.nn.Parameter(torch.ones(2, dtype=torch.float16))]})
    assert len(opt._amp_stash.all_fp16_params) == 1
    with pytest.raises(TypeError, match=r"Received torch\.DoubleTensor"):
        opt.add_param_group({"params": [torch.nn.Parameter(torch.ones(2, dtype=torch.float64))]})


def test_bf16_params_are_half_and_other_types_keep_apex_error():
    """bfloat16 is a half type (fp32 masters at O2); float64 still gets apex's TypeError."""
    p = torch.nn.Parameter(torch.ones(2, dtype=torch.bfloat16))
    opt = _process_optimizer(torch.optim.SGD([p], lr=0.1), SimpleNamespace(master_weights=True))
    opt._amp_lazy_init()
    assert opt._amp_stash.all_fp16_params == [p]
    assert opt._amp_stash.all_fp32_from_fp16_params[0].dtype == torch.float32
    q = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
    opt = _process_optimizer(torch.optim.SGD([q], lr=0.1), SimpleNamespace(master_weights=False))
    with pytest.raises(TypeError) as err:
        opt._amp_lazy_init()
    assert str(err.value) == (
        "Optimizer's parameters must be either torch.cuda.FloatTensor or torch.cuda.HalfTensor. "
        "Received torch.DoubleTensor"
    )


def test_optimizer_only_once_and_existing_attributes():
    props = SimpleNamespace(master_weights=False)
    opt = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    _process_optimizer(opt, props)
    with pytest.raises(RuntimeError, match="^A given optimizer should only be passed through amp.initialize once.$"):
        _process_optimizer(opt, props)
    other = torch.optim.SGD([torch.nn.Parameter(torch.ones(1))], lr=0.1)
    other._post_amp_backward = None
    with pytest.raises(RuntimeError, match="^Incoming optimizer already has _post_amp_backward defined.$"):
        _process_optimizer(other, props)


class LARC:
    """A stand-in for apex.parallel.LARC: holds ``.optim`` and forwards the optimizer API
    (initialize recognises LARC by its qualified name, spec §3.7)."""

    def __init__(self, optim):
        self.optim = optim

    @property
    def param_groups(self):
        return self.optim.param_groups

    @property
    def state(self):
        return self.optim.state

    def state_dict(self):
        return self.optim.state_dict()

    def load_state_dict(self, sd):
        self.optim.load_state_dict(sd)

    def zero_grad(self):
        self.optim.zero_grad()

    def add_param_group(self, group):
        self.optim.add_param_group(group)

    def step(self):
        return self.optim.step()


LARC.__module__ = "apex.parallel.LARC"


@pytest.mark.parametrize("opt_level", ["O1", "O2"])
def test_larc_like_wrapper(opt_level):
    torch.manual_seed(1234)
    model = LoopNet()
    larc = LARC(torch.optim.SGD(model.parameters(), lr=0.05))
    with captured_lines():
        model, larc = amp.initialize(model, larc, opt_level=opt_level, verbosity=0)
    for inject in (False, True):
        larc.zero_grad()
        with amp.scale_loss(torch.nn.functional.mse_loss(model(torch.ones(4, 4)), torch.zeros(4, 2)), larc) as scaled:
            scaled.backward()
            if inject:
                model.fc1.weight.grad.view(-1)[0] = float("inf")
        assert larc._amp_stash.already_patched == inject
        larc.step()
    assert all(torch.isfinite(p).all() for p in model.parameters())
