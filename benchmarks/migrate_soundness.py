"""Is ``apexcompat-migrate --to native`` safe on large trees it was not written for?

One command: ``python benchmarks/migrate_soundness.py [--stdlib] TREE ...`` copies each tree
(and, with ``--stdlib``, the running CPython's standard library) into a temporary folder,
migrates the copy in place (``--to native -j 2``), and checks what a user relies on:

* no internal error (a rule that raised, or an output that did not compile and was refused);
* every ``.py`` file that compiled before still compiles after;
* a second run changes nothing (the migration is idempotent).

Prints one row per tree and exits 1 when any check fails.  The originals are never touched;
``site-packages`` folders are left out (the standard library folder holds the installed ones).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings
from pathlib import Path
from typing import Dict, List, Optional, Tuple


def command() -> List[str]:
    script = shutil.which("apexcompat-migrate")
    return [script] if script else [sys.executable, "-m", "migrate"]


def python_files(root: Path) -> List[Path]:
    return sorted(p for p in root.rglob("*.py") if ".git" not in p.parts and p.is_file() and not p.is_symlink())


def compiles(path: Path) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # old escapes and `is` with a literal are not our business
        try:
            compile(path.read_bytes(), str(path), "exec")
        except (SyntaxError, ValueError):
            return False
    return True


def migrate(root: Path) -> Tuple[dict, float]:
    start = time.perf_counter()
    proc = subprocess.run(
        command() + ["--to", "native", "--allow-no-vcs", "--output-format", "json", "-j", "2", "."],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"apexcompat-migrate exited {proc.returncode} on {root}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout)["summary"], elapsed


def check_tree(name: str, source: Path, scratch: Path) -> Dict[str, object]:
    copy = scratch / name
    shutil.copytree(
        source,
        copy,
        symlinks=True,
        ignore=shutil.ignore_patterns(".git", "__pycache__", "site-packages", "dist-packages"),
    )
    files = python_files(copy)
    compiled_before = {p for p in files if compiles(p)}
    first, seconds = migrate(copy)
    broken = sorted(str(p.relative_to(copy)) for p in compiled_before if not compiles(p))
    second, _ = migrate(copy)
    return {
        "tree": name,
        "py files": len(files),
        "rewritten": first["files_changed"],
        "internal errors": first["internal_errors"],
        "stopped compiling": len(broken),
        "second run rewrote": second["files_changed"],
        "seconds": round(seconds, 1),
        "broken": broken[:5],
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trees", nargs="*", type=Path)
    parser.add_argument("--stdlib", action="store_true", help="also the running CPython's standard library")
    args = parser.parse_args(argv)
    sources = [(p.resolve().name, p.resolve()) for p in args.trees]
    if args.stdlib:
        sources.insert(
            0, (f"cpython-{sys.version_info[0]}.{sys.version_info[1]}-stdlib", Path(sysconfig.get_paths()["stdlib"]))
        )
    if not sources:
        parser.error("give at least one TREE or --stdlib")
    columns = ["tree", "py files", "rewritten", "internal errors", "stopped compiling", "second run rewrote", "seconds"]
    print(f"{os.cpu_count()} CPUs; " + " | ".join(columns))
    failed = False
    with tempfile.TemporaryDirectory(prefix="apexcompat-soundness-") as scratch:
        for name, source in sources:
            row = check_tree(name, source, Path(scratch))
            print(" | ".join(str(row[c]) for c in columns))
            bad = row["internal errors"] or row["stopped compiling"] or row["second run rewrote"]
            if bad:
                failed = True
                if row["broken"]:
                    print(f"  stopped compiling: {', '.join(row['broken'])}")  # type: ignore[arg-type]
            shutil.rmtree(Path(scratch) / name, ignore_errors=True)
    print("FAILED" if failed else "all checks hold")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
