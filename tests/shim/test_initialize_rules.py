"""``amp.initialize`` rules beyond the recorded traces: order of errors, option validation
corners, argument forms, the product decisions of spec §12, device and half-dtype choice."""

from __future__ import annotations

import warnings

import pytest
import torch
import torch.nn as nn

from apexcompat import _devices, amp
from apexcompat.amp._amp_state import _amp_state
from apexcompat.amp.frontend import Properties, opt_levels


def net():
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2))


def lines(capsys):
    out = capsys.readouterr().out
    return out.split("\n")[:-1] if out else []


OPTION_LINES_O1 = [
    "enabled                : True",
    "opt_level              : O1",
    "cast_model_type        : None",
    "patch_torch_functions  : True",
    "keep_batchnorm_fp32    : None",
    "master_weights         : None",
    "loss_scale             : dynamic",
]


# --- order of operations (spec §3.2) -------------------------------------------------------


def test_bad_opt_level_wins_over_bad_arguments_and_prints_nothing(capsys):
    with pytest.raises(RuntimeError, match=r"^Unexpected optimization level 01\. "):
        amp.initialize((net(),), (1, 2), opt_level="01", loss_scale="x")
    assert lines(capsys) == []


def test_override_error_wins_over_argument_errors(capsys):
    with pytest.raises(ValueError, match="could not convert string to float: 'x'"):
        amp.initialize((net(),), (1, 2), opt_level="O1", loss_scale="x")
    assert len(lines(capsys)) == 11


def test_optimizer_form_is_checked_before_models(capsys):
    with pytest.raises(TypeError, match="^optimizers must be"):
        amp.initialize((net(),), (1, 2), opt_level="O1")
    assert lines(capsys)[-7:] == OPTION_LINES_O1


@pytest.mark.parametrize("enabled", [False, None, 0])
def test_disabled_returns_arguments_untouched(enabled, capsys):
    model = net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O2", verbosity=0)
    scalers = _amp_state.loss_scalers
    models = [net()]
    result = amp.initialize(models, [optimizer], enabled=enabled, opt_level="bogus", verbosity=3)
    assert result[0] is models and result[1][0] is optimizer and len(result) == 2
    assert lines(capsys) == []
    assert _amp_state.verbosity == 3
    assert _amp_state.opt_properties.enabled is False
    assert _amp_state.opt_properties.opt_level is None
    assert _amp_state.loss_scalers is scalers  # not reset by a disabled call
    assert "forward" not in vars(models[0])


def test_truthy_enabled_override_is_printed_as_given(capsys):
    amp.initialize(net(), opt_level="O0", enabled=1)
    out = lines(capsys)
    assert out[3] == "enabled                : True"
    assert out[12] == "enabled                : 1"


# --- option validation (spec §3.4) ---------------------------------------------------------


def test_properties_start_blank_and_reject_unknown_reads():
    props = Properties()
    assert props.options == {
        "enabled": False,
        "opt_level": None,
        "cast_model_type": None,
        "patch_torch_functions": False,
        "keep_batchnorm_fp32": None,
        "master_weights": None,
        "loss_scale": 1.0,
    }
    with pytest.raises(AttributeError):
        props.nonexistent  # noqa: B018


@pytest.mark.parametrize(
    "value, stored",
    [("dynamic", "dynamic"), ("128.0", 128.0), (1024, 1024.0), (2.5, 2.5), (True, 1.0)],
)
def test_loss_scale_normalisation(value, stored):
    props = opt_levels["O2"](Properties())
    props.loss_scale = value
    assert props.loss_scale == stored and type(props.loss_scale) is type(stored)


def test_hard_override_keep_bn_o1_warns_then_still_asserts(capsys):
    _amp_state.hard_override = True
    props = opt_levels["O1"](Properties())
    props.keep_batchnorm_fp32 = "False"
    assert props.keep_batchnorm_fp32 is False
    with pytest.raises(AssertionError, match="found keep_batchnorm_fp32=yes$"):
        props.keep_batchnorm_fp32 = "yes"
    out = lines(capsys)
    assert out == [
        "Warning:  With opt_level O1, batchnorm functions are automatically patched to run in "
        "FP32, so keep_batchnorm_fp32 should be None. keep_batchnorm_fp32 was False",
        "Warning:  With opt_level O1, batchnorm functions are automatically patched to run in "
        "FP32, so keep_batchnorm_fp32 should be None. keep_batchnorm_fp32 was yes",
    ]


def test_hard_override_warning_ignores_verbosity(capsys):
    _amp_state.hard_override = True
    amp.initialize(net(), opt_level="O1", cast_model_type=torch.float16, verbosity=0)
    assert lines(capsys) == [
        "Warning:  O1 inserts casts around Torch functions rather than model weights, so with "
        "O1, the model weights themselves should remain FP32. If you wish to cast the model to "
        "a different type, use opt_level='O2' or 'O3'. cast_model_type was torch.float16"
    ]


@pytest.mark.parametrize("level", ["O0", "O2", "O3"])
def test_patch_torch_functions_false_is_fine_everywhere(level):
    amp.initialize(net(), opt_level=level, patch_torch_functions=False, verbosity=0)
    assert _amp_state.opt_properties.patch_torch_functions is False


@pytest.mark.parametrize("level, blank_line", [("O0", True), ("O1", True), ("O2", True), ("O3", False)])
def test_selected_line_and_blank_line(level, blank_line, capsys):
    amp.initialize(net(), opt_level=level)
    out = lines(capsys)
    assert out[0].startswith(f"Selected optimization level {level}:  ")
    assert (out[1] == "") is blank_line
    assert len(out) == (19 if blank_line else 18)


def test_rank0_printing_uses_rank(monkeypatch, capsys):
    import sys

    state_module = sys.modules["apexcompat.amp._amp_state"]  # the name amp._amp_state is the object
    monkeypatch.setattr(state_module, "_distributed_rank_and_size", lambda: (1, 2))
    amp.initialize(net(), opt_level="O2")
    assert lines(capsys) == []


# --- argument checks (spec §3.7, §3.8) ------------------------------------------------------


def fp16_optimizer_class(module: str):
    cls = type("FP16_Optimizer", (), {"__init__": lambda self, opt: None})
    cls.__module__ = module
    return cls


@pytest.mark.parametrize(
    "module, shown",
    [
        ("apex.fp16_utils.fp16_optimizer", "apex.fp16_utils.FP16_Optimizer"),
        ("apex.fp16_utils", "apex.fp16_utils.FP16_Optimizer"),
        ("apex.contrib.optimizers.fp16_optimizer", "apex.optimizers.FP16_Optimizer"),
        ("apex.optimizers.fp16_optimizer", "apex.optimizers.FP16_Optimizer"),
    ],
)
@pytest.mark.parametrize("as_list", [False, True])
def test_fp16_optimizer_recognised_by_qualified_name(module, shown, as_list):
    model = net()
    legacy = fp16_optimizer_class(module)(torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(RuntimeError) as info:
        amp.initialize(model, [legacy] if as_list else legacy, verbosity=0)
    assert str(info.value) == (
        f"An incoming optimizer is an instance of {shown}. The optimizer(s) passed to "
        "amp.initialize() must be bare \ninstances of either ordinary Pytorch optimizers, or "
        "Apex fused \noptimizers.\n"
    )


def test_lookalike_fp16_optimizer_is_not_rejected_as_legacy():
    model = net()
    lookalike = fp16_optimizer_class("mytools.fp16_utils")(None)
    with pytest.raises(TypeError, match="^optimizers must be"):
        amp.initialize(model, lookalike, verbosity=0)


def test_dataparallel_inside_a_list_is_rejected():
    with pytest.raises(RuntimeError, match="instance of torch.nn.parallel.DataParallel"):
        amp.initialize([net(), nn.DataParallel(net())], verbosity=0)


def test_half_buffer_message_names_the_buffer_with_the_cpu_type():
    model = net()
    model[1].running_mean = model[1].running_mean.half()
    with pytest.raises(RuntimeError) as info:
        amp.initialize(model, opt_level="O1", verbosity=0)
    assert str(info.value) == (
        "Found buffer 1.running_mean with type torch.HalfTensor, expected torch.FloatTensor.\n"
        "When using amp.initialize, you do not need to call .half() on your model\n"
        "before passing it, no matter what optimization level you choose."
    )


def test_bfloat16_params_pass_the_fp16_check():
    model = net().to(torch.bfloat16)
    amp.initialize(model, opt_level="O0", verbosity=0)
    assert model[0].weight.dtype == torch.float32  # O0 casts to fp32


def test_empty_optimizer_list_keeps_its_identity():
    model, empty = net(), []
    result = amp.initialize(model, empty, verbosity=0)
    assert result[0] is model and result[1] is empty


# --- product decisions (spec §12) -----------------------------------------------------------


def test_cpu_model_is_accepted():
    # apex refused it ("...located on a CUDA device...", trace initialize/err_cpu_model);
    # apexcompat runs every opt level on the CPU.
    model = net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    returned = amp.initialize(model, optimizer, opt_level="O2", verbosity=0)
    assert returned == (model, optimizer)


def test_cudnn_switch_is_ignored_for_cpu_models(monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "enabled", False)
    amp.initialize(net(), opt_level="O1", verbosity=0)
    assert _amp_state.opt_properties.enabled is True


def test_cudnn_switch_is_enforced_for_cuda_models(monkeypatch, capsys):
    monkeypatch.setattr(torch.backends.cudnn, "enabled", False)
    monkeypatch.setattr(_devices, "model_device_type", lambda models: "cuda")
    with pytest.raises(RuntimeError, match=r"^Amp requires torch.backends.cudnn.enabled = True$"):
        amp.initialize(net(), opt_level="O4")
    assert lines(capsys) == []


def test_no_deprecation_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        amp.initialize(net(), opt_level="O2", verbosity=0)


def test_output_goes_through_the_apexcompat_logger():
    import logging

    class Collect(logging.Handler):
        def __init__(self) -> None:
            super().__init__()
            self.messages: list = []

        def emit(self, record: logging.LogRecord) -> None:
            self.messages.append(record.getMessage())

    collect = Collect()
    logger = logging.getLogger("apexcompat")
    logger.addHandler(collect)
    try:
        amp.initialize(net(), opt_level="O3")
    finally:
        logger.removeHandler(collect)
    assert collect.messages[0] == "Selected optimization level O3:  Pure FP16 training."
    assert len(collect.messages) == 18


# --- device and half dtype (spec §12 "Devices") ---------------------------------------------


def test_model_device_type():
    assert _devices.model_device_type(net()) == "cpu"
    assert _devices.model_device_type([net(), net()]) == "cpu"
    expected_empty = "cuda" if torch.cuda.is_available() else "cpu"
    assert _devices.model_device_type(nn.ReLU()) == expected_empty
    assert _devices.model_device_type(nn.Linear(2, 2, device="meta")) == expected_empty


def test_half_dtype_for_devices():
    assert _devices.half_dtype_for("cuda") is torch.float16
    assert _devices.half_dtype_for(torch.device("cuda", 1)) is torch.float16
    from apexcompat import _compat

    cpu_fp16 = _compat.cpu_float16_autocast_supported() and _compat.cpu_half_matmul_supported()
    assert _devices.half_dtype_for("cpu") is (torch.float16 if cpu_fp16 else torch.bfloat16)


def test_cpu_without_float16_falls_back_to_bfloat16_once(monkeypatch):
    from apexcompat import _compat

    monkeypatch.setattr(_compat, "cpu_float16_autocast_supported", lambda: False)
    monkeypatch.setattr(_devices, "_warned_cpu_bfloat16", False)
    with pytest.warns(UserWarning, match="torch.bfloat16"):
        assert _devices.half_dtype_for("cpu") is torch.bfloat16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _devices.half_dtype_for("cpu") is torch.bfloat16

    model = net()
    amp.initialize(model, opt_level="O2", verbosity=0)
    assert model[0].weight.dtype == torch.bfloat16 and model[1].weight.dtype == torch.float32
    assert model(torch.randn(3, 4)).dtype == torch.float32
    assert model.state_dict()["0.weight"].dtype == torch.float32
    # the print-out and the options still say what apex said
    assert _amp_state.opt_properties.cast_model_type is torch.float16


# --- calling twice (spec §3.11) ---------------------------------------------------------------


def test_second_initialize_replaces_every_scaler():
    first_model, second_model = net(), net()
    first = torch.optim.SGD(first_model.parameters(), lr=0.1)
    amp.initialize(first_model, first, opt_level="O1", num_losses=2, verbosity=0)
    old = list(_amp_state.loss_scalers)
    old[0]._loss_scale = 8.0
    second = torch.optim.SGD(second_model.parameters(), lr=0.1)
    amp.initialize(second_model, second, opt_level="O1", loss_scale=64, verbosity=0)
    new = _amp_state.loss_scalers
    assert len(new) == 1 and new[0] is not old[0]
    assert new[0].loss_scale() == 64.0 and new[0]._unskipped == 0
    assert amp.state_dict() == {"loss_scaler0": {"loss_scale": 64.0, "unskipped": 0}}


def test_same_optimizer_twice_is_refused():
    model = net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    with pytest.raises(RuntimeError, match="should only be passed through amp.initialize once"):
        amp.initialize(model, optimizer, opt_level="O1", verbosity=0)


def test_old_optimizer_uses_the_new_scalers():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    other = nn.Linear(4, 2)
    amp.initialize(other, torch.optim.SGD(other.parameters(), lr=0.1), opt_level="O1",
                   loss_scale=128.0, verbosity=0)
    loss = model(torch.randn(3, 4)).float().sum()
    with amp.scale_loss(loss, optimizer) as scaled:
        assert scaled.item() == pytest.approx(loss.item() * 128.0, rel=1e-3)
        scaled.backward()


def test_docstring_example_runs():
    import textwrap

    doc = amp.initialize.__doc__
    example = doc.split("Example::", 1)[1].split("\n\n    Call it once", 1)[0]
    namespace: dict = {}
    exec(compile(textwrap.dedent(example), "<initialize docstring>", "exec"), namespace)
    assert namespace["optimizer"] is not None
    assert "forward" not in vars(namespace["model"])  # O1 leaves the model alone
