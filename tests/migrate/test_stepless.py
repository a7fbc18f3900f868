"""The stepless route (``migrate/rules/_amp_stepless``): a training amp.initialize of a file
that scales no loss, beside a training file that does, becomes autocast without a GradScaler
only when its optimizers are never stepped and never leave its function; every way out of
the function keeps the refusal."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

TRAIN = """\
import torch
from apex import amp


def train():
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.Adam(net.parameters(), 1e-4)
    net, opt = amp.initialize(net, opt, opt_level="O1")
    loss = net(torch.randn(8, 4).cuda()).pow(2).mean()
    with amp.scale_loss(loss, opt) as scaled_loss:
        scaled_loss.backward()
    opt.step()
"""

#: the evaluation function; ``{params}``, ``{made}`` and ``{after}`` vary per case
EVALUATE = """\
import torch
from apex import amp

{head}
def evaluate({params}):
    net = torch.nn.Linear(4, 4).cuda()
    {made}
    net, opt = amp.initialize(net, opt, opt_level="O1")
    opt.zero_grad()
{after}    with torch.no_grad():
        return net(torch.randn(8, 4).cuda())
"""

FRESH = "opt = torch.optim.SGD(net.parameters(), lr=0.1)"


def codes_for(tmp_path: Path, head: str = "", params: str = "", made: str = FRESH, after: str = "") -> set:
    """The finding codes at the evaluation file's initialize."""
    (tmp_path / "train.py").write_text(TRAIN)
    source = EVALUATE.format(head=head, params=params, made=made, after=textwrap.indent(after, "    "))
    (tmp_path / "evaluate.py").write_text(source)
    line = source.splitlines().index('    net, opt = amp.initialize(net, opt, opt_level="O1")') + 1
    proc = subprocess.run(
        [sys.executable, "-m", "migrate", "--output-format", "json", "--check", "."],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    findings = json.loads(proc.stdout)["findings"]
    return {f["code"] for f in findings if f["path"] == "evaluate.py" and f["line"] == line}


def test_optimizer_only_zeroed_in_its_function_gets_autocast(tmp_path: Path) -> None:
    # one initialize in a file that is no script: the plan's "not proven" note gives way
    assert codes_for(tmp_path) == {"APX229"}


@pytest.mark.parametrize(
    "case",
    [
        dict(params="opt"),  # the caller holds it
        dict(made="opt = make_optimizer(net)"),  # made by code that may keep it
        dict(after="opt.step()\n"),  # stepped
        dict(after="keep(opt)\n"),  # handed on
        dict(after="STORE.append(opt)\n"),  # stored
        dict(head="STORE = None\n", after="global STORE\nSTORE = opt\n"),  # kept in a global
        dict(after="return opt\n"),  # returned
    ],
    ids=["parameter", "made-elsewhere", "stepped", "argument", "stored", "global", "returned"],
)
def test_optimizer_that_may_leave_or_step_keeps_the_refusal(tmp_path: Path, case: dict) -> None:
    assert codes_for(tmp_path, **case) == {"APX220"}
