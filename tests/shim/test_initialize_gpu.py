"""``amp.initialize`` on a real CUDA device: apex's CUDA-side messages and checks, and the
device memory O2/O3 weights really take. Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch
import torch.nn as nn

from apexcompat import amp

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def cuda_net(width: int = 1024) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(width, width), nn.BatchNorm1d(width), nn.ReLU(), nn.Linear(width, width)
    ).cuda()


def test_half_model_message_is_apexs_cuda_text():
    model = cuda_net(8).half()
    with pytest.raises(RuntimeError) as info:
        amp.initialize(model, opt_level="O2", verbosity=0)
    assert str(info.value).startswith(
        "Found param 0.weight with type torch.cuda.HalfTensor, expected torch.cuda.FloatTensor.\n"
    )


def test_cudnn_disabled_is_refused_for_cuda_models(monkeypatch):
    monkeypatch.setattr(torch.backends.cudnn, "enabled", False)
    with pytest.raises(RuntimeError, match="^Amp requires torch.backends.cudnn.enabled = True$"):
        amp.initialize(cuda_net(8), opt_level="O1", verbosity=0)


@pytest.mark.parametrize("level", ["O2", "O3"])
def test_cast_levels_run_in_fp16_on_cuda(level):
    model = cuda_net(64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level=level, verbosity=0)
    assert model[0].weight.dtype == torch.float16
    out = model(torch.randn(8, 64, device="cuda"))
    assert out.dtype == torch.float32
    loss = out.float().pow(2).mean()
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    optimizer.step()
    assert torch.isfinite(model[0].weight).all()


def allocated_after_initialize(level: str) -> int:
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    base = torch.cuda.memory_allocated()
    model = cuda_net()
    amp.initialize(model, opt_level=level, verbosity=0)
    torch.cuda.synchronize()
    used = torch.cuda.memory_allocated() - base
    del model
    return used


def test_device_memory_of_weights_o1_o2_o3():
    o1 = allocated_after_initialize("O1")
    o2 = allocated_after_initialize("O2")
    o3 = allocated_after_initialize("O3")
    # the fp32 originals are freed by the cast; batchnorm (tiny) stays fp32 at O2
    assert o3 <= 0.52 * o1
    assert o2 <= 0.52 * o1
