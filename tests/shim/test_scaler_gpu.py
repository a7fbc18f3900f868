"""CUDA checks of the loss-scaling path: the fused unscale kernel on the device, one
found-inf flag per device, fp16 grads, O2 masters on the GPU.  Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from apexcompat import _unscale, amp
from apexcompat.amp import _amp_state
from _golden_replay import LoopNet, captured_lines

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def test_unscale_kernel_on_device_one_flag():
    grads = [torch.ones(3, device="cuda"), torch.ones(2, device="cuda", dtype=torch.float16)]
    grads[1][0] = float("inf")
    found = _unscale.FoundInf()
    _unscale.unscale_into(grads, grads, 0.25, found)
    assert list(found._flags) == [torch.device("cuda", torch.cuda.current_device())]
    assert found.any()
    assert grads[0].tolist() == [0.25] * 3 and grads[1][1].item() == 0.25


@pytest.mark.parametrize("opt_level", ["O1", "O2", "O3"])
def test_training_with_overflow_on_cuda(opt_level):
    torch.manual_seed(1234)
    model = LoopNet().cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with captured_lines() as printed:
        model, opt = amp.initialize(model, opt, opt_level=opt_level, loss_scale="dynamic")
        for i in range(6):
            g = torch.Generator().manual_seed(1000 + i)
            x, y = torch.randn(16, 4, generator=g).cuda(), torch.randn(16, 2, generator=g).cuda()
            opt.zero_grad()
            with amp.scale_loss(torch.nn.functional.mse_loss(model(x).float(), y), opt) as scaled:
                scaled.backward()
                if i == 3:
                    model.fc1.weight.grad.view(-1)[0] = float("nan")
            opt.step()
    lines = [line for line in printed if line.startswith("Gradient overflow.")]
    assert lines, printed
    assert _amp_state.loss_scalers[0].loss_scale() < 65536.0
    assert all(torch.isfinite(p).all() for p in model.parameters())
    if opt_level == "O2":
        masters = list(amp.master_params(opt))
        assert all(m.is_cuda and m.dtype == torch.float32 for m in masters)


def test_o2_weight_memory_on_device():
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.Linear(1024, 1024)).cuda()
    fp32_bytes = torch.cuda.memory_allocated() - base
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with captured_lines():
        model, opt = amp.initialize(model, opt, opt_level="O2", verbosity=0)
    opt.zero_grad()  # creates the masters
    torch.cuda.synchronize()
    total = torch.cuda.memory_allocated() - base
    assert 1.4 * fp32_bytes <= total <= 1.6 * fp32_bytes  # fp16 model + fp32 masters
