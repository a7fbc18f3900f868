"""O1 on a CUDA device (marked ``gpu``; skipped without CUDA): the dtypes spec §12 lists as
comparable on CUDA, parity with the hand-written native loop, and CPU tensors left alone."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F

from apexcompat import _compat, amp
from conftest import golden_files
from test_o1_op_dtypes import initialize_o1, probe

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]

#: spec §12: the api/O1_op_dtypes entries a CUDA run must reproduce.
CUDA_COMPARABLE = [
    "F.linear(f32,f32w)", "torch.mm(f32,f32)", "torch.matmul(f32,f32)", "f32 @ f32",
    "torch.addmm", "F.conv2d",
    "F.softmax(f16)", "F.log_softmax(f16)", "F.layer_norm(f16)", "F.mse_loss(f16,f16)",
    "F.cross_entropy(f16)", "torch.exp(f16)", "f16.exp()", "torch.log(f16)", "torch.sum(f16)",
    "f16.sum()", "f16.pow(2)", "f16 ** 2", "torch.cumsum(f16)", "torch.norm(f16)",
    "F.relu(f16)", "torch.sigmoid(f16)", "torch.tanh(f16)",
    "torch.add(f16,f32)", "f16 + f32", "f16 * f32", "torch.cat([f16,f32])",
    "torch.stack([f16,f32])", "torch.addcmul(f16,f32,f32)",
    "inside amp.disable_casts(): F.linear(f32,f32w)",
]


def test_cuda_o1_dtypes_of_section_12():
    expected = json.loads(golden_files("api")["O1_op_dtypes"].read_text())["result"]
    initialize_o1("cuda")
    got = {key: probe(key, "cuda") for key in CUDA_COMPARABLE}
    assert got == {key: expected[key] for key in CUDA_COMPARABLE}


def test_cpu_tensors_are_left_alone_under_cuda_o1():
    initialize_o1("cuda")
    assert torch.mm(torch.rand(2, 2), torch.rand(2, 2)).dtype == torch.float32
    assert torch.mm(torch.rand(2, 2, device="cuda"), torch.rand(2, 2, device="cuda")).dtype == torch.float16


def _mlp(seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8)).cuda()


def test_cuda_o1_training_matches_native_loop():
    steps = 10
    gen = torch.Generator(device="cuda").manual_seed(1)
    data = [(torch.rand(16, 32, device="cuda", generator=gen), torch.rand(16, 8, device="cuda", generator=gen))
            for _ in range(steps)]

    native = _mlp(2)
    native_opt = torch.optim.SGD(native.parameters(), lr=0.05)
    scaler = _compat.new_grad_scaler("cuda", init_scale=2.0**16)
    for x, y in data:
        native_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(native(x), y)
        scaler.scale(loss).backward()
        scaler.step(native_opt)
        scaler.update()

    model = _mlp(2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    for x, y in data:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        assert loss.dtype == torch.float32
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

    for got, want in zip(model.parameters(), native.parameters()):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_cuda_eval_after_step_uses_updated_weights():
    model = _mlp(4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    x, y = torch.rand(4, 32, device="cuda"), torch.rand(4, 8, device="cuda")
    for _ in range(3):
        optimizer.zero_grad()
        with amp.scale_loss(F.mse_loss(model(x), y), optimizer) as scaled_loss:
            scaled_loss.backward()
        model(x)  # fills the weight-cast cache with the pre-step weights
        optimizer.step()
        with torch.no_grad():
            got = model(x)
            with amp.disable_casts():
                want = F.linear(F.relu(F.linear(x.half(), model[0].weight.half(), model[0].bias.half())),
                                model[2].weight.half(), model[2].bias.half())
        assert torch.equal(got, want)
