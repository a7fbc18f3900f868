"""How fast is ``apexcompat-migrate --check`` on a big repository?

Two commands:

``python benchmarks/migrate_speed.py`` generates a tree of ``--files`` Python files (default
3,000; ``--apex`` of them, default 100, are apex training scripts, the rest ordinary modules
of realistic sizes) inside a fresh git repository in a temporary folder, then times
``apexcompat-migrate --check`` in fresh processes: the first run (cold), then ``-j 1`` and
``-j 2`` (best of ``--repeat``, taken in turn).  Prints wall time, files/s and CPU time for
each, and the machine's speed just before it (``probe_seconds``).
Target: <= 3 s wall for 3,000 files with ~100 apex files on 2 cores.

``python benchmarks/migrate_speed.py --tree TREE`` compares ``apexcompat-migrate --check -j 2``
with TorchFix 0.7.0 (``torchfix -j 2 .``) on a large real tree (e.g. a checkout of
NVIDIA/DeepLearningExamples), interleaved, ``--repeat`` times each, and prints the best wall
times and their ratio (target >= 20).  TorchFix runs from a virtual environment of its own
(made once under ``--venv`` with ``pip install torchfix==0.7.0``), so neither tool sees the
other's dependencies.  Both tools start from compiled bytecode, as an installed package does
(pip compiles a wheel's modules; ``compile_bytecode`` does it for ours first, where
``PYTHONDONTWRITEBYTECODE`` or an editable install left none).  The answer must stay an
answer: every run of ours must exit 1 with the same findings, and the tree's files must be
unchanged afterwards.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Dict, List, Optional, Tuple

TORCHFIX = "torchfix==0.7.0"

ORDINARY_FUNCTION = '''

def {name}(values, scale={k}, offset=0.{k}):
    """Return the scaled values; part {k} of the pipeline."""
    result = []
    for index, value in enumerate(values):
        if value is None:
            continue  # missing entries are skipped
        result.append((value + offset) * scale + index % {m})
    return result
'''

ORDINARY_CLASS = '''

class {name}(nn.Module):
    """A small block ({k} channels)."""

    def __init__(self, channels={k}):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.BatchNorm2d(channels)

    def forward(self, x):
        return torch.relu(self.norm(self.conv(x))) + x
'''

APEX_SCRIPT = '''"""Training script {k} (apex mixed precision)."""
import argparse
import hashlib
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from apex import amp
from apex.parallel import DistributedDataParallel as DDP
from apex.optimizers import FusedAdam


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--epochs", type=int, default={k})
    parser.add_argument("--local_rank", type=int, default=0)
    parser.add_argument("--clip", type=float, default=1.0)
    return parser.parse_args()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(32, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def train(args, model, optimizer, loader, epoch):
    model.train()
    for step, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        output = model(data)
        loss = F.cross_entropy(output, target)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.clip)
        optimizer.step()
        if step % 10 == 0:
            print("epoch", epoch, "step", step, "loss", loss.item())


def main():
    args = parse_args()
    model = Net().cuda()
    optimizer = FusedAdam(model.parameters(), lr=args.lr)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    model = DDP(model, delay_allreduce=True)
    loader = [(torch.randn(8, 32).cuda(), torch.randint(0, 10, (8,)).cuda())]
    for epoch in range(args.epochs):
        train(args, model, optimizer, loader, epoch)
        torch.save({{"model": model.state_dict(), "amp": amp.state_dict()}}, "ckpt.pt")
{helpers}

if __name__ == "__main__":
    main()
'''


def ordinary_module(rng: random.Random, k: int) -> str:
    parts = [
        f'"""Module {k}: data helpers and layers."""\nimport math\nimport os\n\nimport torch\nimport torch.nn as nn\n'
    ]
    for i in range(rng.randint(2, 25)):  # 30 to 350 lines, like most modules of a repo
        template = ORDINARY_CLASS if i % 4 == 3 else ORDINARY_FUNCTION
        parts.append(
            template.format(
                name=f"part_{k}_{i}" if template is ORDINARY_FUNCTION else f"Block{k}x{i}", k=k % 97 + 1, m=i + 2
            )
        )
    return "".join(parts)


def apex_module(rng: random.Random, k: int) -> str:
    helpers = "".join(
        ORDINARY_FUNCTION.format(name=f"helper_{k}_{i}", k=i + 1, m=i + 2) for i in range(rng.randint(2, 12))
    )
    return APEX_SCRIPT.format(k=k, helpers=helpers)


def generate(root: str, files: int, apex: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    apex_indices = set(rng.sample(range(files), apex))
    for k in range(files):
        folder = os.path.join(root, f"pkg{k // 50:03d}")
        os.makedirs(folder, exist_ok=True)
        text = apex_module(rng, k) if k in apex_indices else ordinary_module(rng, k)
        with open(os.path.join(folder, f"mod{k:05d}.py"), "w", encoding="utf-8") as fh:
            fh.write(text)
    with open(os.path.join(root, ".gitignore"), "w") as fh:
        fh.write("outputs/\n*.log\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(["git", "init", "-q", root], check=True)
    subprocess.run(git + ["-C", root, "add", "-A"], check=True)
    subprocess.run(git + ["-C", root, "commit", "-q", "-m", "tree"], check=True)


def command() -> List[str]:
    script = shutil.which("apexcompat-migrate")
    return [script] if script else [sys.executable, "-m", "migrate"]


def compile_bytecode() -> str:
    """Compile the ``migrate`` package the command imports to bytecode, as ``pip install``
    does for a wheel (TorchFix's venv has its bytecode from its install): otherwise, where
    ``PYTHONDONTWRITEBYTECODE`` is set, every run compiles ~100 modules from source first.
    Returns the package's folder."""
    import compileall

    found = subprocess.run(
        [sys.executable, "-c", "import migrate, os; print(os.path.dirname(migrate.__file__))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    compileall.compile_dir(found, quiet=1)
    return found


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_run(root: str, extra: List[str], timeout: float, expect: int = 1) -> Tuple[float, float]:
    """Wall and CPU seconds (the process and its workers) of one ``--check`` run in a
    fresh process (``inf`` past ``timeout``).  CPU time says what the run costs when the
    machine is shared; wall time what a user waits on an idle one."""
    cpu = children_cpu()
    start = time.perf_counter()
    # its own session, so that a timeout also stops the worker processes it started
    proc = subprocess.Popen(
        command() + ["--check", "--quiet", *extra, root],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return float("inf"), float("inf")
    elapsed = time.perf_counter() - start
    if proc.returncode != expect:
        # the tree holds apex files: anything but "there is work" (1; 0 when no rule runs) is
        # no answer: a crash, or an installed command that no longer finds its package
        said = stderr.decode(errors="replace")
        raise SystemExit(f"apexcompat-migrate exited {proc.returncode}, not {expect}: {said}")
    return elapsed, children_cpu() - cpu


def probe_seconds() -> float:
    """Wall seconds of a fixed pure-Python workload in this process: how fast the machine is
    right now (a shared or throttled one runs the same work up to twice as slowly from one
    minute to the next), printed beside each best run so that a slow phase of the machine is
    told apart from a slow tool."""
    start = time.perf_counter()
    total = 0
    for number in range(6_000_000):
        total += number * number % 7
    return time.perf_counter() - start


def load_average() -> str:
    try:
        return "load average %.1f %.1f %.1f" % os.getloadavg()
    except (AttributeError, OSError):
        return "load average unknown"


def tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        if ".git" not in path.parts:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def torchfix_venv(where: Path) -> Path:
    """The ``torchfix`` executable of a virtual environment of its own (made once)."""
    exe = where / "bin" / "torchfix"
    if not exe.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(where)
        subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", TORCHFIX], check=True)
    return exe


def timed_check(cmd: List[str], cwd: Path) -> Tuple[float, float, int, str]:
    """Wall and CPU seconds, exit status and stdout of one run in a fresh process."""
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return time.perf_counter() - start, children_cpu() - cpu, proc.returncode, proc.stdout


def against_torchfix(tree: Path, repeat: int, venv_dir: Path) -> int:
    files = sum(1 for p in tree.rglob("*.py") if ".git" not in p.parts)
    before = tree_digest(tree)
    torchfix = torchfix_venv(venv_dir)
    print(f"bytecode compiled for {compile_bytecode()} (as an install does; TorchFix's has its own)")
    ours_label, theirs_label = "apexcompat-migrate --check -j 2", "torchfix -j 2 (0.7.0)"
    ours = command() + ["--check", "--output-format", "json", "-j", "2", "."]
    theirs = [str(torchfix), "-j", "2", "."]
    print(f"tree: {tree} ({files} .py files), {os.cpu_count()} CPUs, {load_average()}")
    runs: dict = {ours_label: [], theirs_label: []}
    answers = set()
    for _ in range(repeat):
        wall, cpu, status, out = timed_check(ours, tree)
        report = json.loads(out)
        answers.add((status, json.dumps(report["findings"], sort_keys=True), tuple(report["summary"]["changed_files"])))
        runs[ours_label].append((wall, cpu))
        wall, cpu, _, _ = timed_check(theirs, tree)
        runs[theirs_label].append((wall, cpu))
    if tree_digest(tree) != before:
        raise SystemExit("the tree changed: a check must not write")
    if len(answers) != 1:
        raise SystemExit("apexcompat-migrate --check gave different answers on the same tree")
    status, findings, changed = answers.pop()
    if status != 1:
        raise SystemExit(f"apexcompat-migrate --check exited {status}, expected 1 (work pending)")
    print(f"answer (same in every run): exit 1, {len(json.loads(findings))} findings, {len(changed)} files to rewrite")
    print(f"{'run':<36} {'best wall':>10} {'CPU':>9}")
    best = {label: min(results) for label, results in runs.items()}
    for label, (wall, cpu) in best.items():
        print(f"{label:<36} {wall:9.2f}s {cpu:8.2f}s")
    ratio = best[theirs_label][0] / best[ours_label][0]
    print(f"ratio torchfix / apexcompat-migrate (wall): {ratio:.1f}x (target >= 20x)")
    print(f"(after the runs: {load_average()})")
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--apex", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", metavar="DIR", help="generate into DIR and keep it")
    parser.add_argument("--timeout", type=float, default=600, help="give up on a run after this many seconds")
    parser.add_argument("--tree", type=Path, help="compare with TorchFix 0.7.0 on this real tree instead")
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path.home() / ".cache" / "apexcompat-bench" / "torchfix-0.7.0",
        help="TorchFix's own virtual environment (made when missing)",
    )
    args = parser.parse_args(argv)
    if args.tree is not None:
        return against_torchfix(args.tree.resolve(), args.repeat, args.venv)
    root = args.keep or tempfile.mkdtemp(prefix="apexcompat-bench-")
    try:
        generate(root, args.files, args.apex)
        print(f"bytecode compiled for {compile_bytecode()} (as an install does)")
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(root) if ".git" not in d for f in fs)
        print(
            f"tree: {args.files} files ({args.apex} use apex), {size / 1e6:.1f} MB, "
            f"{os.cpu_count()} CPUs, {load_average()}"
        )
        rows = [("cold (fresh process, default -j)", (probe_seconds(), *time_run(root, [], args.timeout)))]
        # the driver alone: walk, read and prefilter every file, no rule enabled
        probe = probe_seconds()
        driver = time_run(root, ["--select", "APX0"], args.timeout, expect=0)
        rows.append(("driver only (--select APX0: no rule runs)", (probe, *driver)))
        # -j 1 and -j 2 in turn, so that both meet the machine's fast and slow minutes alike
        runs: Dict[int, List[Tuple[float, float, float]]] = {1: [], 2: []}
        for _ in range(args.repeat):
            for jobs in runs:
                probe = probe_seconds()
                runs[jobs].append((probe, *time_run(root, ["-j", str(jobs)], args.timeout)))
        for jobs, timed in runs.items():
            rows.append((f"-j {jobs} (best of {args.repeat})", min(timed, key=lambda run: run[1])))
        print(f"{'run':<44} {'wall':>9} {'files/s':>8} {'CPU':>9} {'probe':>7}")
        for label, (probe, wall, cpu) in rows:
            print(f"{label:<44} {wall:8.2f}s {args.files / wall:8.0f} {cpu:8.2f}s {probe:6.2f}s")
        probes = [row[1][0] for row in rows[:2]] + [run[0] for timed in runs.values() for run in timed]
        print(
            f"probe: a fixed pure-Python workload timed just before the run ({min(probes):.2f}-{max(probes):.2f} s "
            "over all runs): the machine's speed at the time, smaller is faster"
        )
        driver_cpu = rows[1][1][2]
        rules_cpu = rows[2][1][2] - driver_cpu
        if args.apex and rules_cpu < float("inf"):
            per_file = rules_cpu / args.apex
            print(
                f"rules: {per_file:.2f} CPU s per apex file; on an idle 2-core machine -j 2 would take about "
                f"{driver_cpu + rules_cpu / 2:.1f} s wall for this tree"
            )
        print(f"(after the runs: {load_average()})")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
