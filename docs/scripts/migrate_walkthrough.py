"""Run ``apexcompat-migrate --diff`` on the sample repositories ``examples/apex_script`` and
``examples/apex_two_files`` and return its real output for the walkthrough page
(``docs/migrate/index.md``, written there by ``docs/scripts/generate.py``).

The sample is copied to a scratch directory first (the tool is run the way a user runs it,
from the repository root, so the diff has relative paths), once per target.  The outputs are
named ``<prefix>-<target>.diff`` (stdout) and ``<prefix>-<target>.report`` (stderr: the
findings and the summary line, then the exit status); prefixes: ``walkthrough`` for
apex_script, ``twofiles`` for apex_two_files.  Run on its own, the script prints them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict

REPO_ROOT = Path(__file__).resolve().parents[2]
#: (sample folder under examples/, output name prefix, targets)
SAMPLES = [("apex_script", "walkthrough", ("native", "shim")), ("apex_two_files", "twofiles", ("native",))]


def migrate_diff(sample: str, target: str, workdir: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["NO_COLOR"] = "1"  # plain text whatever the terminal
    return subprocess.run(
        [sys.executable, "-m", "migrate", "--diff", "--to", target, "--output-format", "text", f"examples/{sample}"],
        cwd=workdir, env=env, capture_output=True, text=True, timeout=300,
    )


def outputs() -> Dict[str, str]:
    """``{"<prefix>-<target>.diff": stdout, "<prefix>-<target>.report": stderr + exit status}``."""
    result: Dict[str, str] = {}
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
                result[f"{prefix}-{target}.diff"] = proc.stdout
                result[f"{prefix}-{target}.report"] = proc.stderr.strip() + f"\n(exit status {proc.returncode})\n"
    return result


if __name__ == "__main__":
    for name, text in outputs().items():
        print(f"==> {name}\n{text}")
