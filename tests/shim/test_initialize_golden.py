"""Replay of every ``initialize/`` golden trace: the call is rebuilt from the trace's ``call``
record (kwargs, argument forms, setup) and everything the trace recorded is compared.

Two setups name behaviour apexcompat changes on purpose (spec §12, docs "differences"):

* ``no_shims``: apex rejected CPU models ("...located on a CUDA device..."); apexcompat
  accepts them. On a CPU run the trace's print-out must match and the call must succeed.
* ``cudnn_off``: apex demanded ``torch.backends.cudnn.enabled`` for every model; apexcompat
  only for CUDA models. A CPU model must be accepted; the trace itself is replayed with the
  model's device reported as CUDA, where the error and print-out must be apex's.

The traces were recorded with shims that made CPU tensors report ``torch.cuda.<Kind>Tensor``;
messages are compared after mapping that spelling to the device really used.
"""

from __future__ import annotations

import contextlib
import re
import warnings

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from apexcompat import _devices, amp
from apexcompat.amp._amp_state import _amp_state

from conftest import golden_params, load_golden  # noqa: F401  (tests/ is on sys.path)

KNOWN_SETUPS = {
    "hard_override",
    "allow_incoming",
    "half_model",
    "double_model",
    "cudnn_off",
    "dataparallel",
    "ddp",
    "twice",
    "preexisting_attr",
    "no_shims",
    "bf16_model",
    "apex_ddp",
}
CUDA_DEVICE_REJECTION = "located on a CUDA device"


class GoldenNet(nn.Module):
    """The traces' model: Linear(4,8) -> BatchNorm1d(8) -> relu -> Linear(8,2)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x))))


class FP16_Optimizer:  # noqa: N801  (apex's class name is what is recognised)
    """Stands in for apex's legacy wrapper; recognised by its qualified name."""

    def __init__(self, optimizer) -> None:
        self.optimizer = optimizer


FP16_Optimizer.__module__ = "apex.fp16_utils.fp16_optimizer"


class ApexDistributedDataParallel(nn.Module):
    """Stands in for apex.parallel.DistributedDataParallel, which apex's check let through."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)


ApexDistributedDataParallel.__module__ = "apex.parallel.distributed"
ApexDistributedDataParallel.__qualname__ = "DistributedDataParallel"


def device() -> torch.device:
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def localise(text: str, device_type: str) -> str:
    """Map the recording shims' ``torch.cuda.XTensor`` to the legacy name on our device."""
    if device_type == "cuda":
        return text
    return re.sub(r"torch\.cuda\.(\w+Tensor)", r"torch.\1", text)


def decode_value(value):
    """Trace kwargs write dtypes as strings ("torch.float16")."""
    if isinstance(value, str):
        match = re.fullmatch(r"torch\.(\w+)", value)
        if match and isinstance(getattr(torch, match.group(1), None), torch.dtype):
            return getattr(torch, match.group(1))
    return value


def encode_value(value):
    if isinstance(value, torch.dtype):
        return str(value)
    return value


def same_value(actual, expected) -> bool:
    """Equal and of the same type (``128`` and ``128.0`` differ, as in the traces)."""
    return type(actual) is type(expected) and actual == expected


def arrange(form: str, objects: list):
    forms = {
        "single": lambda: objects[0],
        "list1": lambda: [objects[0]],
        "list2": lambda: [objects[0], objects[1]],
        "tuple": lambda: (objects[0],),
        "none": lambda: None,
        "empty_list": lambda: [],
        "fp16_optimizer": lambda: FP16_Optimizer(objects[0]),
    }
    if form not in forms:
        pytest.fail(f"trace uses an argument form this replay does not know: {form!r}")
    return forms[form]()


def flat(arg) -> list:
    if arg is None:
        return []
    if isinstance(arg, (list, tuple)):
        return list(arg)
    return [arg]


def describe(value, models_in: list, optimizers_in: list):
    """The trace's description of a return value."""
    if isinstance(value, tuple):
        return {"tuple": [describe(v, models_in, optimizers_in) for v in value]}
    if isinstance(value, list):
        return {"list": [describe(v, models_in, optimizers_in) for v in value]}
    if isinstance(value, nn.Module):
        return {"kind": "model", "same_object_as_input": any(value is m for m in models_in)}
    return {"kind": "optimizer", "same_object_as_input": any(value is o for o in optimizers_in)}


@contextlib.contextmanager
def ddp_process_group(tmp_path):
    import torch.distributed as dist

    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'pg'}", rank=0, world_size=1
    )
    try:
        yield
    finally:
        dist.destroy_process_group()


@contextlib.contextmanager
def cudnn_disabled():
    before = torch.backends.cudnn.enabled
    torch.backends.cudnn.enabled = False
    try:
        yield
    finally:
        torch.backends.cudnn.enabled = before


class Replay:
    """One trace's call, rebuilt and run; keeps what is needed for the comparisons."""

    def __init__(self, trace: dict, tmp_path) -> None:
        self.trace = trace
        call = trace["call"]
        self.kwargs = {k: decode_value(v) for k, v in call["kwargs"].items()}
        self.setup = set(call["setup"].split("+")) if call.get("setup") else set()
        unknown = self.setup - KNOWN_SETUPS
        if unknown:
            pytest.fail(f"trace uses a setup this replay does not know: {sorted(unknown)}")
        # "no_shims": the trace's model was a plain CPU model, seen as one.
        self.device = torch.device("cpu") if "no_shims" in self.setup else device()
        torch.manual_seed(0)
        self.all_models = [GoldenNet().to(self.device) for _ in range(2)]
        for model in self.all_models:
            if "half_model" in self.setup:
                model.half()
            if "double_model" in self.setup:
                model.double()
            if "bf16_model" in self.setup:
                model.bfloat16()
        self.models_arg = arrange(call["models"], self.all_models)
        owners = flat(self.models_arg) or self.all_models
        self.all_optimizers = [
            torch.optim.SGD(owners[i % len(owners)].parameters(), lr=0.01) for i in range(2)
        ]
        self.optimizers_arg = arrange(call["optimizers"], self.all_optimizers)
        if "preexisting_attr" in self.setup:
            # The trace's message names the attribute its optimizer already had.
            match = re.search(r"already has (\w+) defined", trace["error"]["message"])
            for optimizer in self.all_optimizers:
                setattr(optimizer, match.group(1) if match else "_amp_lazy_init", None)
        self.tmp_path = tmp_path
        self.result = None
        self.error = None

    @contextlib.contextmanager
    def environment(self):
        with contextlib.ExitStack() as stack:
            if "hard_override" in self.setup:
                _amp_state.hard_override = True
            if "allow_incoming" in self.setup:
                _amp_state.allow_incoming_model_not_fp32 = True
            if "cudnn_off" in self.setup:
                stack.enter_context(cudnn_disabled())
            if "ddp" in self.setup:
                stack.enter_context(ddp_process_group(self.tmp_path))
            yield

    def wrap_models(self):
        if "dataparallel" in self.setup:
            return self._wrap(nn.DataParallel)
        if "ddp" in self.setup:
            return self._wrap(nn.parallel.DistributedDataParallel)
        if "apex_ddp" in self.setup:
            return self._wrap(ApexDistributedDataParallel)
        return self.models_arg

    def _wrap(self, wrapper):
        if isinstance(self.models_arg, nn.Module):
            return wrapper(self.models_arg)
        return type(self.models_arg)(wrapper(m) for m in self.models_arg)

    def run(self):
        with self.environment(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            models = self.wrap_models()
            self.models_passed = flat(models)
            calls = 2 if "twice" in self.setup else 1
            for _ in range(calls):
                try:
                    self.result = amp.initialize(models, self.optimizers_arg, **self.kwargs)
                except Exception as exc:  # noqa: BLE001  (compared with the trace)
                    self.error = exc
                    break
        self.warnings = list(caught)
        return self


def expected_stdout(trace: dict) -> list:
    return trace.get("stdout_without_fallback_lines", trace["stdout"])


def check_success(replay: Replay, trace: dict) -> None:
    assert replay.error is None, f"{type(replay.error).__name__}: {replay.error}"
    models_in = replay.models_passed
    optimizers_in = flat(replay.optimizers_arg)
    assert describe(replay.result, models_in, optimizers_in) == trace["returned"]

    props = _amp_state.opt_properties
    for name, expected in trace["properties_after"].items():
        actual = encode_value(getattr(props, name))
        assert same_value(actual, expected), (name, actual, expected)

    if "scalers" in trace:
        scalers = _amp_state.loss_scalers
        assert len(scalers) == len(trace["scalers"])
        for scaler, expected in zip(scalers, trace["scalers"]):
            assert same_value(scaler.loss_scale(), expected["loss_scale"])
            assert same_value(scaler._unskipped, expected["unskipped"])
        for scaler, expected in zip(scalers, trace["scaler_settings"]):
            assert scaler.dynamic is expected["dynamic"]
            assert same_value(scaler._min_loss_scale, expected["min"])
            assert same_value(scaler._max_loss_scale, expected["max"])
            assert same_value(scaler._scale_seq_len, expected["window"])

    params = [{n: str(p.dtype) for n, p in m.named_parameters()} for m in models_in]
    buffers = [{n: str(b.dtype) for n, b in m.named_buffers()} for m in models_in]
    assert params == trace["model_param_dtypes_after"]
    assert buffers == trace["model_buffer_dtypes_after"]
    assert ["forward" in vars(m) for m in models_in] == trace["forward_patched"]


def check_error(replay: Replay, trace: dict, device_type: str) -> None:
    assert replay.error is not None, "expected an error, the call succeeded"
    expected = trace["error"]
    assert type(replay.error).__name__ == expected["type"]
    message = str(replay.error) if not isinstance(replay.error, KeyError) else replay.error.args[0]
    assert message == localise(expected["message"], device_type)


def stdout_lines(capsys) -> list:
    out = capsys.readouterr().out
    assert out == "" or out.endswith("\n")
    return out.split("\n")[:-1] if out else []


def no_deprecation_warning(replay: Replay) -> None:
    # spec §12: apex's DeprecatedFeatureWarning is not emitted.
    assert not [w for w in replay.warnings if "apex.amp is deprecated" in str(w.message)]


KNOWN_TRACE_KEYS = {
    "call", "description", "error", "forward_patched", "group", "harness",
    "model_buffer_dtypes_after", "model_param_dtypes_after", "properties_after", "returned",
    "scaler_settings", "scalers", "scenario", "status", "stdout", "stdout_by_phase",
    "stdout_without_fallback_lines", "warnings",
}
KNOWN_CALL_KEYS = {"kwargs", "models", "optimizers", "setup"}


@golden_params("initialize")
def test_initialize_trace(golden_path, capsys, tmp_path, monkeypatch):
    trace = load_golden("initialize", golden_path.stem)
    # A record this replay would silently ignore fails instead.
    assert set(trace) <= KNOWN_TRACE_KEYS, sorted(set(trace) - KNOWN_TRACE_KEYS)
    assert set(trace["call"]) <= KNOWN_CALL_KEYS, sorted(set(trace["call"]) - KNOWN_CALL_KEYS)
    assert trace["status"] in ("ok", "error"), trace["status"]
    replay = Replay(trace, tmp_path)
    device_type = replay.device.type
    capsys.readouterr()

    dropped_device_check = (
        "no_shims" in replay.setup
        and device_type != "cuda"
        and trace["status"] == "error"
        and CUDA_DEVICE_REJECTION in trace["error"]["message"]
    )
    if "cudnn_off" in replay.setup and device_type != "cuda":
        # Our decision: cuDNN is irrelevant to a CPU model, so the call goes through ...
        replay.run()
        assert replay.error is None, f"{type(replay.error).__name__}: {replay.error}"
        assert stdout_lines(capsys)[0].startswith("Selected optimization level")
        # ... and with the model on CUDA apex's check and output are kept.
        from apexcompat.amp._amp_state import reset_state

        reset_state()
        replay = Replay(trace, tmp_path)
        monkeypatch.setattr(_devices, "model_device_type", lambda models: "cuda")
        device_type = "cuda"

    replay.run()
    assert stdout_lines(capsys) == [localise(x, device_type) for x in expected_stdout(trace)]
    no_deprecation_warning(replay)
    if dropped_device_check:
        # apex refused the CPU model after printing; apexcompat accepts it (spec §12).
        assert replay.error is None, f"{type(replay.error).__name__}: {replay.error}"
        assert _amp_state.opt_properties.enabled is True
        assert len(_amp_state.loss_scalers) == replay.kwargs.get("num_losses", 1)
    elif trace["status"] == "ok":
        check_success(replay, trace)
    else:
        check_error(replay, trace, device_type)
