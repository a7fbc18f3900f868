"""Run ``apexcompat-migrate --diff`` on the sample repositories ``examples/apex_script`` and
``examples/apex_two_files`` and keep its real output for the walkthrough page
(``docs/migrate/index.md``).

The sample is copied to a scratch directory first (the tool is run the way a user runs it,
from the repository root, so the diff has relative paths), once per target.  Writes
``<prefix>-<target>.diff`` and ``<prefix>-<target>.report`` (the findings and the summary
line) into ``--out-dir`` (prefixes: ``walkthrough`` for apex_script, ``twofiles``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
#: (sample folder under examples/, output name prefix, targets)
SAMPLES = [("apex_script", "walkthrough", ("native", "shim")), ("apex_two_files", "twofiles", ("native",))]


def migrate_diff(sample: str, target: str, workdir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, "-m", "migrate", "--diff", "--to", target, "--output-format", "text", f"examples/{sample}"],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=300,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out-dir", type=Path, default=REPO_ROOT / "docs" / "_generated")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for sample, prefix, targets in SAMPLES:
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copytree(REPO_ROOT / "examples" / sample, Path(tmp) / "examples" / sample,
                            ignore=shutil.ignore_patterns("__pycache__"))
            for target in targets:
                proc = migrate_diff(sample, target, Path(tmp))
                if proc.returncode not in (0, 1) or not proc.stdout.strip():
                    sys.stderr.write(proc.stdout + proc.stderr)
                    raise SystemExit(f"apexcompat-migrate --diff --to {target} failed (exit {proc.returncode}) "
                                     f"or produced no diff for examples/{sample}")
                (args.out_dir / f"{prefix}-{target}.diff").write_text(proc.stdout, encoding="utf-8")
                report = proc.stderr.strip() + f"\n(exit status {proc.returncode})\n"
                (args.out_dir / f"{prefix}-{target}.report").write_text(report, encoding="utf-8")
    print(f"migration walkthrough -> {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
