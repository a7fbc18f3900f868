"""The overflow doctor on five real CPU training runs through ``apexcompat.amp``.

Each case is a complete small training loop that goes wrong in one typical way:

  a  ``grad``     a badly initialised head (weights x300) on a frozen encoder: its fp16 gradient overflows
  b  ``nan``      one input batch contains a NaN
  c  ``forward``  a module whose fp16 forward output exceeds 65504
  d  ``healthy``  5,000 healthy steps: only the scaler's periodic probe overflows
  e  ``collapse`` a module whose backward turns finite gradients into NaN on every step

``python doctor_cases.py run CASE`` runs one case in this process (stdout: apex's lines;
stderr: the doctor, when ``APEXCOMPAT_DIAGNOSE=1``).  ``python doctor_cases.py docs --out F``
runs every case twice in subprocesses, with and without ``APEXCOMPAT_DIAGNOSE=1``, checks
that stdout is byte-identical, and writes the doctor's reports as Markdown for
``docs/troubleshooting.md``.  The tests (``tests/shim/test_doctor_e2e.py``) use :func:`run_pair`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

import torch

from apexcompat import amp

REPO_ROOT = Path(__file__).resolve().parents[2]


class Exp(torch.nn.Module):
    """``exp`` of the input: above 65504 in fp16 once the input exceeds about 11."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


class SqrtOfZero(torch.nn.Module):
    """Returns its input unchanged, plus ``sqrt(0 * x**2)``: a finite forward, and a NaN
    input gradient (the derivative of sqrt at 0 is inf, times 0)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.sqrt(x.pow(2) * 0.0)


class Net(torch.nn.Module):
    """encoder (fc1 -> act -> fc2) -> head; ``act`` chosen by the case."""

    def __init__(self, act: Optional[torch.nn.Module] = None) -> None:
        super().__init__()
        self.encoder = torch.nn.Sequential()
        self.encoder.add_module("fc1", torch.nn.Linear(8, 16))
        self.encoder.add_module("act", act if act is not None else torch.nn.ReLU())
        self.encoder.add_module("fc2", torch.nn.Linear(16, 16))
        self.head = torch.nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.encoder(x)))


class Scorer(torch.nn.Module):
    """A weighted sum of the features plus a bias (elementwise ops only: fp16 matrix
    multiplies are slow on many CPUs, and this case runs 5,000 steps)."""

    def __init__(self, features: int) -> None:
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(features) * 0.5)
        self.bias = torch.nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * self.weight).sum(-1, keepdim=True) + self.bias


def _train(model, opt_level: str, steps: int, batch: Callable[[int], torch.Tensor],
           loss_of: Callable[[torch.Tensor], torch.Tensor], lr: float = 1e-3) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    for step in range(steps):
        loss = loss_of(model(batch(step)))
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def case_grad() -> None:
    torch.manual_seed(0)
    model = Net()
    model.encoder.requires_grad_(False)  # fine-tuning the head of a pretrained encoder
    with torch.no_grad():
        model.head.weight.mul_(300.0)  # a badly initialised head
    data = torch.randn(32, 8)
    _train(model, "O2", 30, lambda step: data, lambda out: out.float().pow(2).mean(), lr=1e-7)


def case_nan() -> None:
    torch.manual_seed(0)
    model = Net()
    batches = torch.randn(10, 32, 8)
    batches[6, 3, 1] = float("nan")  # one corrupt sample in batch 6
    target = torch.randn(32, 1)
    _train(model, "O1", 10, lambda step: batches[step],
           lambda out: torch.nn.functional.mse_loss(out.float(), target))


def case_forward() -> None:
    torch.manual_seed(0)
    model = Net(act=Exp())
    with torch.no_grad():
        model.encoder.fc1.bias.fill_(12.0)  # exp(12) = 162755 > 65504
    data = torch.randn(32, 8) * 0.01
    _train(model, "O2", 4, lambda step: data, lambda out: out.float().mean())


def case_healthy() -> None:
    torch.manual_seed(0)
    model = Scorer(4)
    data = torch.randn(16, 4)
    # d(loss)/d(bias) = 0.75: 0.75 * 65536 fits in fp16, 0.75 * 131072 does not, so each
    # growth of the scale (every 2000 clean steps) overflows once and is undone.
    _train(model, "O2", 5000, lambda step: data, lambda out: out.float().mean() * 0.75, lr=1e-6)


def case_collapse() -> None:
    torch.manual_seed(0)
    model = Net(act=SqrtOfZero())
    data = torch.randn(32, 8)
    _train(model, "O2", 25, lambda step: data, lambda out: out.float().pow(2).mean())


CASES: Dict[str, Callable[[], None]] = {
    "grad": case_grad,
    "nan": case_nan,
    "forward": case_forward,
    "healthy": case_healthy,
    "collapse": case_collapse,
}


@dataclass
class Outcome:
    stdout: str
    stderr: str


def _start(name: str, diagnose: bool) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "APEXCOMPAT_DIAGNOSE"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")
    if diagnose:
        env["APEXCOMPAT_DIAGNOSE"] = "1"
    return subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "run", name],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def run_pair(name: str) -> Dict[bool, Outcome]:
    """Run one case in two fresh interpreters side by side, without and with
    ``APEXCOMPAT_DIAGNOSE=1``; keyed by whether the doctor was on."""
    procs = {flag: _start(name, flag) for flag in (False, True)}
    out: Dict[bool, Outcome] = {}
    for flag, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"case {name} failed:\n{stdout}\n{stderr}")
        out[flag] = Outcome(stdout, stderr)
    return out


def doctor_lines(stderr: str) -> str:
    """The doctor's reports in ``stderr`` (other warnings, e.g. torch's, left out)."""
    out: List[str] = []
    keep = False
    for line in stderr.splitlines():
        if line.startswith("apexcompat doctor: "):
            keep = True
        elif not line.startswith("    "):
            keep = False
        if keep:
            out.append(line)
    return "\n".join(out)


_TITLES = {
    "grad": "(a) A layer whose weights are too large: its fp16 gradient overflows",
    "nan": "(b) One input batch contains a NaN",
    "forward": "(c) An fp16 activation above 65504",
    "healthy": "(d) A healthy 5,000-step run",
    "collapse": "(e) A collapse",
}


def markdown(outcomes: Dict[str, Dict[bool, Outcome]]) -> str:
    parts = []
    for name, title in _TITLES.items():
        runs = outcomes[name]
        skipped = sum("Gradient overflow." in line for line in runs[False].stdout.splitlines())
        parts += [
            f"### {title}", "",
            f"`{name}` in `docs/scripts/doctor_cases.py`; {skipped} skipped "
            f"step{'' if skipped == 1 else 's'}. With "
            "`APEXCOMPAT_DIAGNOSE=1`, stderr:", "",
            "```text", doctor_lines(runs[True].stderr) or "(nothing)", "```", "",
        ]
        default = doctor_lines(runs[False].stderr)
        if default:
            parts += ["Without the variable, stderr:", "", "```text", default, "```", ""]
    return "\n".join(parts)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("case", choices=sorted(CASES))
    docs = sub.add_parser("docs")
    docs.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "run":
        CASES[args.case]()
        return 0
    outcomes = {name: run_pair(name) for name in _TITLES}
    for name, runs in outcomes.items():
        if runs[False].stdout != runs[True].stdout:
            print(f"doctor_cases: stdout of {name} differs with APEXCOMPAT_DIAGNOSE=1", file=sys.stderr)
            return 1
    args.out.write_text(markdown(outcomes), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
