"""Two gloo processes on 127.0.0.1: rank 0 prints initialize's block and the overflow line,
rank 1 only the overflow line (api/distributed_rank0_printing)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO_ROOT, golden_files
from _golden_replay import expected_stdout

WORKER = textwrap.dedent(
    """
    import os, sys, warnings
    import torch
    import torch.distributed as dist
    sys.path.insert(0, os.environ["REPLAY_DIR"])
    from _golden_replay import LoopNet
    from apexcompat import amp

    dist.init_process_group("gloo", rank=int(os.environ["RANK"]), world_size=2)
    torch.manual_seed(1234)
    model = LoopNet()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model, opt = amp.initialize(model, opt, opt_level="O1")
    g = torch.Generator().manual_seed(1000)
    x, y = torch.randn(16, 4, generator=g), torch.randn(16, 2, generator=g)
    opt.zero_grad()
    with amp.scale_loss(torch.nn.functional.mse_loss(model(x), y), opt) as scaled:
        scaled.backward()
        model.fc1.weight.grad.view(-1)[0] = float("inf")
    opt.step()
    dist.barrier()
    dist.destroy_process_group()
    sys.stderr.write("WARNINGS %d\\n" % len([w for w in caught if "apex" in str(w.message)]))
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_distributed_rank0_printing():
    path = golden_files("api").get("distributed_rank0_printing")
    if path is None:
        pytest.fail("golden trace api/distributed_rank0_printing is missing")
    result = json.loads(path.read_text(encoding="utf-8"))["result"]
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), WORLD_SIZE="2",
               REPLAY_DIR=os.path.dirname(__file__), PYTHONPATH=str(REPO_ROOT))
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER], env=dict(env, RANK=str(rank)),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for rank in (0, 1)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for rank, (proc, (out, err)) in enumerate(zip(procs, outputs)):
        assert proc.returncode == 0, err
        # gloo itself prints "[Gloo] Rank 0 is connected to 1 peer ranks..." on some torch
        # releases (2.8-2.10); that is torch's line, not one of amp's.
        lines = [line for line in out.splitlines() if not line.startswith("[Gloo] ")]
        assert lines == expected_stdout(result[f"rank{rank}"]), f"rank {rank}"
        assert "WARNINGS 0" in err  # no deprecation warning (spec §12)
