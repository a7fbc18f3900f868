"""Which modules O2/O3 cast (spec §3.9): replay of ``api/O2_module_kinds``, lazy and RNN
modules, optimizer state recast, and the memory the cast really saves."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn as nn

from apexcompat import amp

from conftest import golden_files, load_golden


class Kinds(nn.Module):
    """One of each module kind the trace lists, in the trace's order."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.bn1 = nn.BatchNorm1d(4)
        self.bn2 = nn.BatchNorm2d(4)
        self.bn3 = nn.BatchNorm3d(4)
        self.bn_noaffine = nn.BatchNorm1d(4, affine=False)
        self.sync_bn = nn.SyncBatchNorm(4)
        self.inorm = nn.InstanceNorm1d(4, affine=True)
        self.ln = nn.LayerNorm(4)
        self.gn = nn.GroupNorm(2, 4)
        self.emb = nn.Embedding(10, 4)


def kinds_configs():
    if "O2_module_kinds" not in golden_files("api"):
        return []
    return list(load_golden("api", "O2_module_kinds")["result"])


def config_kwargs(name: str) -> dict:
    """``O2_default`` / ``O3_keep_bn_true`` -> initialize kwargs."""
    match = re.fullmatch(r"(O\d)_(?:default|keep_bn_(true|false))", name)
    if match is None:
        pytest.fail(f"module-kinds config this replay does not know: {name}")
    kwargs = {"opt_level": match.group(1), "verbosity": 0}
    if match.group(2):
        kwargs["keep_batchnorm_fp32"] = match.group(2) == "true"
    return kwargs


def dtypes(named):
    return {name: str(t.dtype) for name, t in named}


@pytest.mark.parametrize("config", kinds_configs())
def test_module_kinds_trace(config):
    expected = load_golden("api", "O2_module_kinds")["result"][config]
    model = Kinds()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, **config_kwargs(config))
    assert dtypes(model.named_parameters()) == expected["params"]
    assert dtypes(model.named_buffers()) == expected["buffers"]


class LazyNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.LazyLinear(6)
        self.bn = nn.LazyBatchNorm1d()

    def forward(self, x):
        return self.bn(self.lin(x))


def test_lazy_modules_materialise_in_the_right_dtype():
    model = LazyNet()
    amp.initialize(model, opt_level="O2", verbosity=0)
    out = model(torch.randn(5, 3))
    assert out.dtype == torch.float32
    assert model.lin.weight.dtype == torch.float16
    assert model.bn.weight.dtype == torch.float32
    assert model.bn.running_mean.dtype == torch.float32


def test_rnn_is_cast_and_runs():
    model = nn.GRU(4, 5, batch_first=True)
    amp.initialize(model, opt_level="O2", verbosity=0)
    assert {p.dtype for p in model.parameters()} == {torch.float16}
    out, hidden = model(torch.randn(2, 3, 4))
    assert out.dtype == torch.float32 and hidden.dtype == torch.float32


def test_existing_optimizer_state_is_recast():
    torch.manual_seed(0)
    model = nn.Linear(4, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.randn(3, 4)).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
    amp.initialize(model, optimizer, opt_level="O3", verbosity=0)
    state = optimizer.state[model.weight]
    assert state["exp_avg"].dtype == torch.float16
    assert state["exp_avg_sq"].dtype == torch.float16


def test_parameters_keep_their_identity():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    before = list(model.parameters())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O2", verbosity=0)
    assert all(a is b for a, b in zip(before, model.parameters()))
    assert all(a is b for a, b in zip(before, optimizer.param_groups[0]["params"]))


def test_existing_grads_are_cast_with_their_params():
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4))
    model(torch.randn(3, 4)).sum().backward()
    amp.initialize(model, opt_level="O2", verbosity=0)
    assert model[0].weight.grad.dtype == torch.float16
    assert model[1].weight.grad.dtype == torch.float32


def test_state_dict_is_fp32_for_submodules_too():
    model = nn.Sequential(nn.Linear(4, 4), nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)))
    amp.initialize(model, opt_level="O3", verbosity=0)
    assert model[1][0].weight.dtype == torch.float16
    for sd in (model.state_dict(), model[1].state_dict(), model[1][0].state_dict()):
        assert {v.dtype for k, v in sd.items() if "num_batches" not in k} == {torch.float32}
    # exact upcasts of the fp16 values
    assert torch.equal(model.state_dict()["1.0.weight"], model[1][0].weight.float())


def test_fp32_state_dict_loads_back_into_a_half_model():
    torch.manual_seed(0)
    reference = nn.Linear(4, 4)
    model = nn.Linear(4, 4)
    amp.initialize(model, opt_level="O3", verbosity=0)
    model.load_state_dict(reference.state_dict())
    assert model.weight.dtype == torch.float16
    assert torch.equal(model.weight, reference.weight.half())


# --- memory: O2/O3 really hold half-precision weights --------------------------------------


def big_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(256, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, 256), nn.Linear(256, 8)
    )


def tensor_bytes(tensors) -> int:
    seen, total = set(), 0
    for t in tensors:
        if t.untyped_storage().data_ptr() not in seen:
            seen.add(t.untyped_storage().data_ptr())
            total += t.numel() * t.element_size()
    return total


def train_one_step(model, optimizer) -> None:
    x, y = torch.randn(16, 256), torch.randn(16, 8)
    loss = torch.nn.functional.mse_loss(model(x).float(), y)
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    optimizer.step()


@pytest.mark.parametrize("level", ["O1", "O2", "O3"])
def test_weight_memory_per_level(level):
    fp32_model = big_model()
    fp32_bytes = tensor_bytes(fp32_model.parameters())
    bn_bytes = tensor_bytes(fp32_model[1].parameters())

    model = big_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level=level, verbosity=0)
    weight_bytes = tensor_bytes(model.parameters())
    if level == "O1":
        assert weight_bytes == fp32_bytes
    elif level == "O2":  # half weights, batchnorm kept fp32
        assert weight_bytes == (fp32_bytes - bn_bytes) // 2 + bn_bytes
    else:
        assert weight_bytes == fp32_bytes // 2

    train_one_step(model, optimizer)
    stepped = tensor_bytes(amp.master_params(optimizer))
    if level == "O2":
        # fp32 masters exist now (created lazily); the model itself stays half
        assert stepped == fp32_bytes
        assert tensor_bytes(model.parameters()) == weight_bytes
    else:  # no second copy of the weights
        assert stepped == weight_bytes


class CustomEntries(nn.Module):
    """Writes a state-dict entry of its own besides its parameters."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.table = torch.zeros(3)

    def _apply(self, fn, recurse=True):
        self.table = fn(self.table)
        return super()._apply(fn, recurse)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "table"] = self.table


def test_state_dict_hook_covers_custom_entries():
    model = nn.Sequential(CustomEntries())
    amp.initialize(model, opt_level="O3", verbosity=0)
    assert model[0].table.dtype == torch.float16
    assert {k: v.dtype for k, v in model.state_dict().items()} == {
        "0.lin.weight": torch.float32,
        "0.lin.bias": torch.float32,
        "0.table": torch.float32,
    }
