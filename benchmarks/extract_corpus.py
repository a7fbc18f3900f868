"""Write each manifest entry's commit out of its fetched mirror into ROOT, as
``benchmarks/migrate_corpus.py`` reads it.

    python benchmarks/extract_corpus.py ROOT [--manifest benchmarks/corpus.toml]
        [--mirrors /work/.mirror] [--only NAME|GROUP]

A mirror is the bare git directory the ``fetch`` tool brings (``MIRRORS/OWNER+NAME/repo``,
or its ``.git``).  ``git archive`` stops at the first blob a snapshot lacks (some large
files are left out of the stored snapshots), so the tree is written blob by blob instead,
leaving those out; a missing ``.py`` file is reported.  Entries sharing a ``checkout`` are
written once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from migrate_corpus import HERE, load_manifest  # noqa: E402


def git_dir(mirrors: Path, github: str) -> Path:
    base = mirrors / github.replace("/", "+") / "repo"
    return base / ".git" if (base / ".git").is_dir() else base


def write_tree(git: Path, commit: str, target: Path) -> list:
    """``commit``'s files under ``target``; the paths whose blobs the snapshot lacks."""
    command = ["git", f"--git-dir={git}"]
    rows = subprocess.run(command + ["ls-tree", "-r", "-z", commit], capture_output=True, check=True).stdout
    entries = []
    for row in rows.split(b"\0"):
        if row:
            meta, path = row.split(b"\t", 1)
            mode, kind, obj = meta.split()
            if kind == b"blob":
                entries.append((mode, obj, os.fsdecode(path)))
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    proc = subprocess.Popen(command + ["cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def feed() -> None:  # written from a thread: the pipe would fill both ways otherwise
        proc.stdin.write(b"".join(obj + b"\n" for _m, obj, _p in entries))
        proc.stdin.close()

    threading.Thread(target=feed, daemon=True).start()
    missing = []
    for mode, _obj, path in entries:
        header = proc.stdout.readline().split()
        if header[1] == b"missing":
            missing.append(path)
            continue
        data = proc.stdout.read(int(header[2]))
        proc.stdout.read(1)
        out = target / path
        out.parent.mkdir(parents=True, exist_ok=True)
        if mode == b"120000":
            try:
                os.symlink(os.fsdecode(data), out)
            except OSError:
                pass
            continue
        out.write_bytes(data)
        if mode == b"100755":
            out.chmod(0o755)
    proc.wait()
    return missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--manifest", type=Path, default=HERE / "corpus.toml")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--only", action="append", default=[], metavar="NAME")
    args = parser.parse_args()
    done = set()
    status = 0
    for entry in load_manifest(args.manifest):
        if args.only and entry.name not in args.only and entry.group not in args.only:
            continue
        folder = entry.checkout or entry.name
        if folder in done:
            continue
        done.add(folder)
        git = git_dir(args.mirrors, entry.github)
        if not git.is_dir():
            print(f"{entry.name}: no mirror of {entry.github} at {git} (fetch it first)")
            status = 1
            continue
        if (args.root / folder).exists():  # a checkout an earlier entry (or run) wrote
            print(f"{folder}: already there, kept")
            continue
        missing = write_tree(git, entry.commit, args.root / folder)
        lost = [p for p in missing if p.endswith(".py")]
        print(f"{folder}: {entry.github}@{entry.commit[:12]}, {len(missing)} blob(s) missing"
              + (f", of them .py: {', '.join(lost)}" if lost else ""))
        status |= bool(lost)
    return status


if __name__ == "__main__":
    sys.exit(main())
