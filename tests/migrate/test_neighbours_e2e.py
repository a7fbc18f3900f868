"""End to end for helper M3's families: small apex-era scripts (FP16_Optimizer with a static
scale, apex DDP at world size 1 with gloo, FusedLayerNorm/FusedAdam) are migrated with the
rule alone, then run on CPU: they must train (loss decreasing) with no apex import left."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Type

import pytest

from migrate.engine import migrate_source
from migrate.rules.base import Rule
from migrate.rules.ddp import DistributedDataParallelRule
from migrate.rules.fp16_optimizer import FP16OptimizerRule
from migrate.rules.fused import FusedKernelsRule
from migrate.settings import Settings

pytest.importorskip("torch")

FP16_OPTIMIZER_SCRIPT = textwrap.dedent(
    """
    import torch
    from apex.fp16_utils import FP16_Optimizer

    torch.manual_seed(0)
    N, D_in, D_out = 64, 32, 4
    x = torch.randn(N, D_in, dtype=torch.half)
    y = torch.randn(N, D_out).half()

    model = torch.nn.Linear(D_in, D_out).half()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    optimizer = FP16_Optimizer(optimizer, static_loss_scale=128.0)

    loss_fn = torch.nn.MSELoss()
    losses = []
    for t in range(60):
        optimizer.zero_grad()
        y_pred = model(x)
        loss = loss_fn(y_pred.float(), y.float())
        optimizer.backward(loss)
        optimizer.clip_master_grads(5.0)
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0], losses
    print("ok", losses[0], losses[-1])
    """
)

DDP_SCRIPT = textwrap.dedent(
    """
    import os

    import torch
    import torch.distributed as dist
    from apex.parallel import DistributedDataParallel as DDP
    from apex.optimizers import FusedAdam
    from apex.normalization import FusedLayerNorm


    def main():
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29533")
        dist.init_process_group("gloo", rank=0, world_size=1)
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(16, 16), FusedLayerNorm(16), torch.nn.Linear(16, 1))
        model = DDP(model, delay_allreduce=True)
        optimizer = FusedAdam(model.parameters(), lr=1e-2)
        x, y = torch.randn(32, 16), torch.randn(32, 1)
        losses = []
        for _ in range(40):
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert isinstance(model, DDP)
        assert losses[-1] < 0.5 * losses[0], losses
        dist.destroy_process_group()
        print("ok", losses[0], losses[-1])


    main()
    """
)


def _migrate(source: str, *rules: Type[Rule]) -> str:
    text = source.encode()
    for rule in rules:
        result = migrate_source(text, "script.py", Settings(), rules=[rule])
        assert result.parse_error is None
        text = result.new
    return text.decode()


def _run(tmp_path: Path, code: str) -> str:
    assert "import apex" not in code and "from apex" not in code
    path = tmp_path / "script.py"
    path.write_text(code)
    with socket.socket() as probe:  # the DDP script's store: a port no other test's run is on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", MASTER_PORT=str(port))
    command = [sys.executable, "-W", "ignore", str(path)]
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.slow
def test_fp16_optimizer_static_scale_script_trains_on_cpu(tmp_path: Path) -> None:
    code = _migrate(FP16_OPTIMIZER_SCRIPT, FP16OptimizerRule)
    assert "torch.amp.GradScaler(\"cuda\", init_scale=128.0" in code
    assert "scaler.unscale_(optimizer)" in code and "with torch.autocast(" in code
    assert ".half()" not in code and "torch.half" not in code
    assert _run(tmp_path, code).startswith("ok")


@pytest.mark.slow
def test_apex_ddp_world_size_one_gloo_script_trains_on_cpu(tmp_path: Path) -> None:
    code = _migrate(DDP_SCRIPT, DistributedDataParallelRule, FusedKernelsRule)
    assert "torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)" in code
    assert "torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)" in code
    assert _run(tmp_path, code).startswith("ok")
