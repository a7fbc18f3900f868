"""Regenerate the docs content that comes from real runs and write it into the pages.

Each piece lives in its page between ``<!-- generated: NAME ... -->`` markers
(``generated_blocks.py``), so the pages read completely on GitHub and the Sphinx build needs
no generation step:

* ``apex-script-source``, ``walkthrough-*``, ``twofiles-*`` (``docs/migrate/index.md``): the
  sample script and the real ``apexcompat-migrate --diff`` output (``migrate_walkthrough.py``);
* ``rule-reference`` (``docs/migrate/rules.md``): from the rules' own examples
  (``rule_reference.py``);
* ``scale-trajectory`` (``docs/shim/loss-scaler.md``): a real 5000-step O2 run
  (``plot_scale_trajectory.py``), whose plot is written to ``docs/images/`` and committed;
* ``o1-dtype-table`` (``docs/differences.md``): apex's recorded O1 dtypes against a measurement
  on the CPU (``o1_dtype_table.py``); exact only on the torch and machine it names;
* ``doctor-cases`` (``docs/troubleshooting.md``): the overflow doctor's reports on five real
  training runs (``doctor_cases.py``, which also checks that stdout is unchanged);
* ``support-matrix-table`` (``docs/support-matrix.md``): the results of the last tox matrix
  run, committed in ``docs/data/matrix-results.tsv`` (``.ci/matrix`` with
  ``MATRIX_RESULTS=docs/data/matrix-results.tsv`` appends to it), rendered by
  ``.ci/matrix-table.py``.

    python docs/scripts/generate.py                 # rewrite every block (and the plot)
    python docs/scripts/generate.py --check         # exit 1 naming each stale block
    python docs/scripts/generate.py --only rules    # one source (see SOURCES)

``tests/docs/test_generated_blocks.py`` runs ``--check`` for every source.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, List, Optional

SCRIPTS = Path(__file__).resolve().parent
DOCS = SCRIPTS.parent
REPO_ROOT = DOCS.parent
PLOT = DOCS / "images" / "scale_trajectory.png"
sys.path.insert(0, str(SCRIPTS))

from generated_blocks import COMMAND, fenced, find_blocks, replace_blocks  # noqa: E402


def _run(cmd: List[str]) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env.setdefault("CUDA_VISIBLE_DEVICES", "")  # the CPU measurements are the CPU's
    subprocess.run(cmd, cwd=REPO_ROOT, env=env, check=True)


def apex_script(workdir: Path) -> Dict[str, str]:
    lines = (REPO_ROOT / "examples" / "apex_script" / "train.py").read_text(encoding="utf-8").splitlines()
    body = "\n".join(lines[lines.index('"""', 1) + 2:])  # without the module docstring and the blank line after it
    return {"apex-script-source": fenced(body, "python")}


def walkthrough(workdir: Path) -> Dict[str, str]:
    from migrate_walkthrough import outputs

    return {name.replace(".", "-"): fenced(text, "diff" if name.endswith(".diff") else "text")
            for name, text in outputs().items()}


def rules(workdir: Path) -> Dict[str, str]:
    from rule_reference import render

    return {"rule-reference": render()}


def scale_trajectory(workdir: Path) -> Dict[str, str]:
    # its own process: the run sets up apexcompat.amp's global state
    _run([sys.executable, str(SCRIPTS / "plot_scale_trajectory.py"), "--out-dir", str(workdir)])
    return {"scale-trajectory": (workdir / "scale_trajectory.inc").read_text(encoding="utf-8")}


def o1_dtypes(workdir: Path) -> Dict[str, str]:
    py, script = sys.executable, str(SCRIPTS / "o1_dtype_table.py")
    plain, fixups = workdir / "o1_cpu.json", workdir / "o1_cpu_fixups.json"
    # one process each: the fix-ups are a process-wide switch
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(_run, [[py, script, "measure", "--device", "cpu", "--out", str(plain)],
                             [py, script, "measure", "--device", "cpu", "--cpu-fixups", "--out", str(fixups)]]))
    table = workdir / "o1_dtypes.md"
    _run([py, script, "table",
          "--column", f"apexcompat CUDA={DOCS / 'data' / 'o1_dtypes_cuda.json'}",
          "--column", f"apexcompat CPU={plain}", "--column", f"apexcompat CPU + fix-ups={fixups}",
          "--out", str(table)])
    return {"o1-dtype-table": table.read_text(encoding="utf-8")}


def doctor_cases(workdir: Path) -> Dict[str, str]:
    # its own process: five training runs, each with and without APEXCOMPAT_DIAGNOSE=1
    out = workdir / "doctor_cases.md"
    _run([sys.executable, str(SCRIPTS / "doctor_cases.py"), "docs", "--out", str(out)])
    return {"doctor-cases": out.read_text(encoding="utf-8")}


def support_matrix(workdir: Path) -> Dict[str, str]:
    proc = subprocess.run([sys.executable, str(REPO_ROOT / ".ci" / "matrix-table.py"),
                           str(DOCS / "data" / "matrix-results.tsv")],
                          cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    return {"support-matrix-table": proc.stdout}


def _this_torch_and_machine() -> str:
    import torch

    return f"torch {torch.__version__} on {platform.machine()}"


@dataclass(frozen=True)
class Source:
    """One generator: the blocks it fills, and what the comparison with a fresh run assumes."""

    produce: Callable[[Path], Dict[str, str]]
    #: for measurements: the text a committed block must contain for a fresh run to be comparable
    measured_on: Optional[Callable[[], str]] = None


SOURCES: Dict[str, Source] = {
    "apex-script": Source(apex_script),
    "walkthrough": Source(walkthrough),
    "rules": Source(rules),
    "scale-trajectory": Source(scale_trajectory),
    "o1-dtypes": Source(o1_dtypes, measured_on=_this_torch_and_machine),
    "support-matrix": Source(support_matrix),
    "doctor": Source(doctor_cases),
}


def pages() -> List[Path]:
    return [REPO_ROOT / "README.md", *sorted(p for p in DOCS.rglob("*.md") if "_build" not in p.parts)]


def _label(page: Path) -> str:
    return str(page.relative_to(REPO_ROOT)) if page.is_relative_to(REPO_ROOT) else str(page)


def produce(names: List[str], workdir: Path) -> Dict[str, Dict[str, str]]:
    """``{source: {block: content}}`` from fresh runs, the sources side by side."""
    for name in names:
        (workdir / name).mkdir()
    with ThreadPoolExecutor(len(names)) as pool:
        futures = {name: pool.submit(SOURCES[name].produce, workdir / name) for name in names}
        return {name: future.result() for name, future in futures.items()}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a block is stale")
    parser.add_argument("--only", nargs="+", choices=sorted(SOURCES), default=sorted(SOURCES))
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        fresh = produce(args.only, Path(tmp))
        if not args.check and "scale-trajectory" in fresh:
            PLOT.parent.mkdir(exist_ok=True)
            shutil.copyfile(Path(tmp) / "scale-trajectory" / "scale_trajectory.png", PLOT)
    contents = {block: text for blocks in fresh.values() for block, text in blocks.items()}
    source_of = {block: name for name, blocks in fresh.items() for block in blocks}
    found, stale = set(), []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        committed = find_blocks(text)
        found.update(committed)
        if args.check:
            for name, block in committed.items():
                if name not in contents or block.content == contents[name]:
                    continue
                measured_on = SOURCES[source_of[name]].measured_on
                if measured_on and measured_on() not in block.content:
                    print(f"not checked: {name} in {_label(page)} was measured elsewhere "
                          f"(this is {measured_on()})")
                    continue
                stale.append(f"{_label(page)}: block {name} is stale; "
                             f"refresh it with `{COMMAND} --only {source_of[name]}`")
        else:
            new = replace_blocks(text, contents)
            if new != text:
                page.write_text(new, encoding="utf-8")
                print(f"{_label(page)}: updated")
    missing = sorted(set(contents) - found)
    unknown = sorted(found - set(contents)) if set(args.only) == set(SOURCES) else []
    if missing or unknown:
        print(f"no page has a block for: {missing}; no generator for the blocks: {unknown}", file=sys.stderr)
        return 1
    for line in stale:
        print(line, file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
