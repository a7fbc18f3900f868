"""Helpers shared by the driver tests: run the command line in a subprocess with the
driver's own toy rules (see ``toyrules.py``), and build small git repositories."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent.parent
TOY_RULES = "toyrules:ToyRule,toyrules:BrokenRule,toyrules:CrashRule"
GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "init.defaultBranch=main", "-c", "core.autocrlf=false"]


def toy_env(rules: Optional[str] = TOY_RULES) -> Dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(HERE), str(REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    if rules:
        env["APEXCOMPAT_MIGRATE_RULES"] = rules
    else:
        env.pop("APEXCOMPAT_MIGRATE_RULES", None)
    # the settings git would otherwise pick up from the machine
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["HOME"] = str(HERE)  # no user-level git config or global excludes
    return env


def run_cli(
    args: Sequence[str],
    cwd: Path,
    stdin: bytes = b"",
    rules: Optional[str] = TOY_RULES,
    in_process: bool = True,
) -> subprocess.CompletedProcess:
    """Run the command line with ``args`` in ``cwd``: ``migrate.cli.main`` in this process
    (fast; same code as the console script) or ``python -m migrate`` in a subprocess."""
    if not in_process:
        cmd: List[str] = [sys.executable, "-m", "migrate", *args]
        return subprocess.run(cmd, cwd=cwd, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=toy_env(rules))
    from migrate.cli import main

    saved_env = dict(os.environ)
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_cwd = os.getcwd()
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    try:
        os.environ.clear()
        os.environ.update(toy_env(rules))
        os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        sys.stdout, sys.stderr = out, err
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's own usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        out.flush()
        err.flush()
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    return subprocess.CompletedProcess(list(args), code, out.buffer.getvalue(), err.buffer.getvalue())


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(GIT + list(args), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=toy_env(None), check=True)
    return proc.stdout.decode()


def make_repo(root: Path, files: Dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "initial")
    return root
