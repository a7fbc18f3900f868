"""Regenerate every docs fragment that comes from a real run, in parallel (called by
``docs/conf.py`` at the start of each build; runnable on its own).

Outputs go to ``docs/_generated/`` (ignored by git):
the loss-scale plot and worked trajectory (``plot_scale_trajectory.py``), the O1 dtype table
(``o1_dtype_table.py``, CPU measured now, CUDA from ``docs/data/o1_dtypes_cuda.json``), the
migration walkthrough diffs (``migrate_walkthrough.py``) and the rule-code reference
(``rule_reference.py``).  Any failure fails the build: the docs never show stale output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
DOCS = SCRIPTS.parent
REPO_ROOT = DOCS.parent
OUT = DOCS / "_generated"


def jobs():
    py = sys.executable
    cpu_json = OUT / "o1_dtypes_cpu.json"
    cpu_fixups_json = OUT / "o1_dtypes_cpu_fixups.json"
    return {
        "scale trajectory": [[py, str(SCRIPTS / "plot_scale_trajectory.py"), "--out-dir", str(OUT)]],
        "O1 dtype table": [
            [py, str(SCRIPTS / "o1_dtype_table.py"), "measure", "--device", "cpu", "--out", str(cpu_json)],
            [py, str(SCRIPTS / "o1_dtype_table.py"), "measure", "--device", "cpu", "--cpu-fixups",
             "--out", str(cpu_fixups_json)],
            [py, str(SCRIPTS / "o1_dtype_table.py"), "table",
             "--column", f"apexcompat CUDA={DOCS / 'data' / 'o1_dtypes_cuda.json'}",
             "--column", f"apexcompat CPU={cpu_json}",
             "--column", f"apexcompat CPU + fix-ups={cpu_fixups_json}",
             "--out", str(OUT / "o1_dtypes.inc")],
        ],
        "migration walkthrough": [[py, str(SCRIPTS / "migrate_walkthrough.py"), "--out-dir", str(OUT)]],
        "rule reference": [[py, str(SCRIPTS / "rule_reference.py"), "--out", str(OUT / "rules.inc")]],
        "overflow doctor": [[py, str(SCRIPTS / "doctor_cases.py"), "docs", "--out", str(OUT / "doctor_cases.inc")]],
    }


def main() -> int:
    OUT.mkdir(exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")  # the CPU column is the CPU's
    began = time.perf_counter()
    # Each job is a chain of commands; chains run side by side.
    chains = {name: list(cmds) for name, cmds in jobs().items()}
    running = {}
    failed = []
    while chains or running:
        for name in list(chains):
            if name not in running:
                cmd = chains[name].pop(0)
                running[name] = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env)
                if not chains[name]:
                    del chains[name]
        for name, proc in list(running.items()):
            if proc.poll() is not None:
                del running[name]
                if proc.returncode != 0:
                    failed.append(name)
                    chains.pop(name, None)
        time.sleep(0.05)
    print(f"docs/scripts/generate.py: done in {time.perf_counter() - began:.1f}s")
    if failed:
        print("docs/scripts/generate.py: FAILED: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
