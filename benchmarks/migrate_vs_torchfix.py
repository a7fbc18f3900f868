"""``apexcompat-migrate --check -j 2`` against TorchFix 0.7.0 on the same large real tree.

One command: ``python benchmarks/migrate_vs_torchfix.py TREE`` (TREE: a checkout with a few
thousand ``.py`` files, e.g. NVIDIA/DeepLearningExamples).  TorchFix runs from a virtual
environment of its own (created once under ``--venv``, default
``~/.cache/apexcompat-bench/torchfix-0.7.0``, with ``pip install torchfix==0.7.0``), so neither
tool sees the other's dependencies.  Each tool runs ``--repeat`` times, interleaved, in fresh
processes; the best wall time of each and the ratio are printed, with CPU seconds beside them.

The answer must stay an answer: the tree's files are hashed before and after and must be
unchanged, and ``apexcompat-migrate --check`` must exit 1 when the tree holds apex code.
The issue's target is a ratio >= 20.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import subprocess
import sys
import time
import venv
from pathlib import Path
from typing import List, Optional, Tuple

TORCHFIX = "torchfix==0.7.0"


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


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


def timed(cmd: List[str], cwd: Path) -> Tuple[float, float, int]:
    """Wall and CPU seconds and the exit status of one run in a fresh process."""
    cpu = children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, children_cpu() - cpu, proc.returncode


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--venv", type=Path, default=Path.home() / ".cache" / "apexcompat-bench" / "torchfix-0.7.0")
    args = parser.parse_args(argv)
    tree = args.tree.resolve()
    files = sum(1 for p in tree.rglob("*.py") if ".git" not in p.parts)
    before = tree_digest(tree)
    torchfix = torchfix_venv(args.venv)
    ours = [sys.executable, "-m", "migrate", "--check", "--quiet", "-j", "2", "."]
    theirs = [str(torchfix), "-j", "2", "."]
    env_note = f"{os.cpu_count()} CPUs, load average %.1f" % os.getloadavg()[0]
    print(f"tree: {tree} ({files} .py files), {env_note}")
    runs = {"apexcompat-migrate --check -j 2": [], "torchfix -j 2 (0.7.0)": []}
    statuses = set()
    for _ in range(args.repeat):
        wall, cpu, status = timed(ours, tree)
        statuses.add(status)
        runs["apexcompat-migrate --check -j 2"].append((wall, cpu))
        wall, cpu, _ = timed(theirs, tree)
        runs["torchfix -j 2 (0.7.0)"].append((wall, cpu))
    if tree_digest(tree) != before:
        raise SystemExit("the tree changed: a check must not write")
    if statuses != {1}:
        raise SystemExit(f"apexcompat-migrate --check exited {sorted(statuses)}, expected 1 (work pending)")
    print(f"{'run':<36} {'best wall':>10} {'CPU':>9}")
    best = {}
    for label, results in runs.items():
        best[label] = min(results)
        print(f"{label:<36} {best[label][0]:9.2f}s {best[label][1]:8.2f}s")
    ratio = best["torchfix -j 2 (0.7.0)"][0] / best["apexcompat-migrate --check -j 2"][0]
    print(f"ratio torchfix / apexcompat-migrate (wall): {ratio:.1f}x (target >= 20x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
