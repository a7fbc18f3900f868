"""The patched ``forward`` (spec §3.9): replay of ``api/forward_casting`` plus what apex's
closure could not do (pickling, deepcopy, introspection)."""

from __future__ import annotations

import collections
import copy
import inspect
import io
import re
import sys

import numpy as np
import pytest
import torch
import torch.nn as nn

from apexcompat import amp
from apexcompat.amp.utils import cast_value

from conftest import golden_files, load_golden

Pair = collections.namedtuple("Pair", ["x", "y"])


class CustomBatch:
    """A user batch class with its own ``to``."""

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor

    def to(self, dtype):
        return CustomBatch(self.tensor.to(dtype))


class Probe(nn.Module):
    """Records what reaches ``forward`` and returns a dict of mixed outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.seen = None

    def forward(self, a, b, c, d, e, f, g, h, i, kw=None):
        self.seen = {
            "a_fp32_tensor": str(a.dtype),
            "b_fp64_tensor": str(b.dtype),
            "c_int64_tensor": str(c.dtype),
            "d_list_of_tensors": [str(t.dtype) for t in d],
            "e_dict": {k: str(v.dtype) for k, v in e.items()},
            "f_str": f,
            "g_numpy_dtype": str(g.dtype),
            "h_custom_to": str(h.tensor.dtype),
            "i_python_float": str(i),
            "kw_fp32_tensor": str(kw.dtype),
        }
        return {"out": self.lin(a), "idx": c, "pair": (a, b)}


class PairProbe(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 3)
        self.seen = None

    def forward(self, p):
        self.seen = {"arg_type": type(p).__name__, "x_dtype": str(p.x.dtype)}
        return self.lin(p.x.float())


def probe_arguments():
    x = torch.randn(2, 4)
    args = (
        x,
        torch.randn(2, 4, dtype=torch.float64),
        torch.tensor([1, 2]),
        [torch.randn(2), torch.randn(2)],
        {"k": torch.randn(2)},
        "text",
        np.zeros(2, dtype=np.float32),
        CustomBatch(torch.randn(2)),
        1.5,
    )
    return args, {"kw": torch.randn(2)}


def config_kwargs(name: str) -> dict:
    """``O2`` -> opt_level O2; ``O1_cast_outputs_fp16`` -> plus cast_model_outputs."""
    match = re.fullmatch(r"(O\d)(?:_cast_outputs_(\w+))?", name)
    if match is None:
        pytest.fail(f"forward_casting config this replay does not know: {name}")
    kwargs = {"opt_level": match.group(1), "verbosity": 0}
    if match.group(2):
        kwargs["cast_model_outputs"] = {"fp16": torch.float16, "fp32": torch.float32}[match.group(2)]
    return kwargs


def forward_casting_configs():
    if "forward_casting" not in golden_files("api"):
        return []
    return list(load_golden("api", "forward_casting")["result"])


def dtype_tree(value):
    if isinstance(value, torch.Tensor):
        return str(value.dtype)
    if isinstance(value, (list, tuple)):
        return [dtype_tree(v) for v in value]
    return value


@pytest.mark.parametrize("config", forward_casting_configs())
def test_forward_casting_trace(config):
    expected = load_golden("api", "forward_casting")["result"][config]
    torch.manual_seed(0)
    model = Probe()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, **config_kwargs(config))
    args, kwargs = probe_arguments()
    out = model(*args, **kwargs)
    assert model.seen == expected["inside_forward"]
    returned = {
        "out": str(out["out"].dtype),
        "idx": str(out["idx"].dtype),
        "pair": dtype_tree(out["pair"]),
        "container_type": type(out).__name__,
    }
    assert returned == expected["returned"]


@pytest.mark.parametrize("config", forward_casting_configs())
def test_forward_casting_namedtuple_trace(config):
    expected = load_golden("api", "forward_casting")["result"][config]["namedtuple_argument"]
    model = PairProbe()
    model = amp.initialize(model, **config_kwargs(config))
    arg = Pair(torch.randn(2, 4), torch.randn(2, 4))
    if expected["status"] == "ok":
        model(arg)
        assert model.seen == expected["seen"]
        return
    with pytest.raises(Exception) as info:
        model(arg)
    assert type(info.value).__name__ == expected["error"]["type"]
    message = expected["error"]["message"]
    if sys.version_info < (3, 10):  # older Pythons omit the class name in this message
        message = message.split(".", 1)[1]
    assert str(info.value) == message


def test_cast_value_walks_like_apex():
    t16 = torch.ones(2, dtype=torch.float16)
    casted = cast_value({"a": [t16, (t16, "s")], "b": {t16}, "n": None, "i": 3}, torch.float32)
    assert type(casted) is dict
    assert casted["a"][0].dtype == torch.float32 and type(casted["a"][1]) is tuple
    assert casted["a"][1][1] == "s" and casted["n"] is None and casted["i"] == 3
    assert {t.dtype for t in casted["b"]} == {torch.float32}
    assert cast_value(b"xy", torch.float16) == b"xy"
    ints = torch.arange(3)
    assert cast_value(ints, torch.float16) is ints
    fp32 = torch.ones(2)
    assert cast_value(fp32, torch.float32) is fp32  # no copy when already right


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x, scale: float = 1.0):
        return self.fc2(torch.relu(self.bn(self.fc1(x)))) * scale


def o2_model():
    torch.manual_seed(0)
    model = Net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", verbosity=0)
    return model


def check_patched(model: Net) -> None:
    assert model.forward.module is model
    assert model.fc1.weight.dtype == torch.float16 and model.bn.weight.dtype == torch.float32
    model.eval()
    out = model(torch.randn(3, 4))
    assert out.dtype == torch.float32
    assert {v.dtype for k, v in model.state_dict().items() if "num_batches" not in k} == {
        torch.float32
    }


def test_whole_model_torch_save_roundtrip():
    model = o2_model()
    buffer = io.BytesIO()
    torch.save(model, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=False)
    check_patched(loaded)
    x = torch.randn(3, 4)
    model.eval()
    assert torch.equal(loaded(x), model(x))


def test_deepcopy_rebinds_forward_to_the_copy():
    model = o2_model()
    clone = copy.deepcopy(model)
    check_patched(clone)
    with torch.no_grad():
        clone.fc1.weight.zero_()
    assert not torch.equal(model.fc1.weight, clone.fc1.weight)


def test_signature_of_patched_forward_is_the_models():
    model = o2_model()
    assert list(inspect.signature(model.forward).parameters) == ["x", "scale"]
    assert model(torch.randn(3, 4), scale=2.0).dtype == torch.float32


def test_o1_without_cast_outputs_leaves_forward_alone():
    model = Net()
    amp.initialize(model, opt_level="O1", verbosity=0)
    assert "forward" not in vars(model)


def test_second_cast_wraps_the_first_patch():
    # apex wrapped the already patched forward again; both layers must keep working.
    model = Net()
    amp.initialize(model, opt_level="O0", verbosity=0)
    first = model.forward
    amp.initialize(model, opt_level="O0", cast_model_outputs=torch.float64, verbosity=0)
    assert model.forward.inner is first
    assert model(torch.randn(3, 4)).dtype == torch.float64
