"""End to end: ``apexcompat-migrate --dtype bfloat16`` on the e2e apex scripts, trained on the CPU.

A copy of e2e/scripts/ is migrated by the real CLI with ``--to native --dtype bfloat16`` (then
again: a no-op). Three layouts run, in one e2e/runner.py process, with ``autocast("cuda")``
mapped to the CPU so that the migrated bfloat16 autocast really computes in bfloat16:
``s1_main_train`` (initialize behind ``--fp16``, the scaler threaded into ``train()`` as the
switch), ``s2_class_trainer`` (the switch on ``self``) and ``s5_clip_checkpoint`` (O2, clipping,
``amp.state_dict()`` under ``'amp'``). Each trains fully (the loss decreases), resumes from a
checkpoint the ORIGINAL script wrote through apex (fake apex: apexcompat.amp, fp16 loss
scaling), and resumes from a checkpoint of its own.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Dict, List

import pytest

from test_e2e_scripts import FAKE_APEX, SCRIPTS_DIR, _cli, _flatten, _metric, _rel_diff, _run_process

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not hasattr(torch.amp, "GradScaler"), reason="needs torch >= 2.3 (CPU autocast map)")

STEPS = 24
LAYOUTS = {
    "s1_main_train": ["--fp16"],
    "s2_class_trainer": [],
    "s5_clip_checkpoint": [],
}
# bfloat16 keeps 8 significant bits (fp16: 11): 24 steps of bf16 matmuls move the weights away
# from an fp32 run by ||a - b|| / ||b|| = 3.6e-3 (s1, s2) and 5.9e-3 (s5), measured (``-s``
# prints them); a migration mistake moves them far more (the fp16 e2e test measured 1e-1 and up)
BF16_REL = 2e-2


def _migrate(directory: Path) -> dict:
    proc = subprocess.run(
        [*_cli(), "--allow-no-vcs", "--to", "native", "--dtype", "bfloat16", "--output-format", "json", "-j", "1", "."],
        cwd=directory, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def bf16(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("e2e_bf16")
    work, migrated = root / "work", root / "bf16"
    work.mkdir()
    shutil.copytree(SCRIPTS_DIR, migrated, ignore=shutil.ignore_patterns("__pycache__"))
    first = _migrate(migrated)
    texts = {p.name: p.read_text() for p in migrated.glob("*.py")}
    second = _migrate(migrated)
    runs: List[dict] = []

    def add(group: str, name: str, variant: str, argv: List[str]) -> None:
        orig = group == "orig"
        runs.append({
            "id": f"{group}:{name}:{variant}",
            "script": str((SCRIPTS_DIR if orig else migrated) / f"{name}.py"),
            "cwd": str(work),
            "argv": argv + ["--params-out", str(work / f"{group}-{name}-{variant}.params.pt")],
            "env": {}, "blocked": [] if orig else ["apex", "apexcompat"],
            "sys_path": [str(FAKE_APEX)] if orig else [],
            "cuda_amp_on_cpu": not orig and variant != "fp32-host",
        })

    half = STEPS // 2
    for name, amp_args in LAYOUTS.items():
        apex_ckpt, own_ckpt = work / f"apex-{name}.ckpt.pt", work / f"bf16-{name}.ckpt.pt"
        add("orig", name, "amp-half", amp_args + ["--steps", str(half), "--ckpt-out", str(apex_ckpt)])
        add("bf16", name, "full", amp_args + ["--steps", str(STEPS)])
        add("bf16", name, "fp32-host", amp_args + ["--steps", str(STEPS)])  # autocast("cuda") off on a CPU host
        add("bf16", name, "resumed-from-apex", amp_args + ["--steps", str(half), "--resume", str(apex_ckpt)])
        add("bf16", name, "half", amp_args + ["--steps", str(half), "--ckpt-out", str(own_ckpt)])
        add("bf16", name, "resumed", amp_args + ["--steps", str(half), "--resume", str(own_ckpt)])
    results = _run_process(runs, work, "bf16")
    return {"work": work, "first": first, "second": second, "texts": texts, "runs": results}


def _ok(bf16: dict, run_id: str) -> dict:
    result = bf16["runs"][run_id]
    assert result["ok"], f"{run_id} failed:\n{result['error']}\n--- stdout ---\n{result['stdout']}"
    return result


def _params(bf16: dict, group: str, name: str, variant: str) -> Dict[str, "torch.Tensor"]:
    _ok(bf16, f"{group}:{name}:{variant}")
    return _flatten(torch.load(bf16["work"] / f"{group}-{name}-{variant}.params.pt"))


def test_migration_is_clean_and_a_second_run_is_a_no_op(bf16):
    summary = bf16["first"]["summary"]
    assert summary["internal_errors"] == 0 and summary["parse_failures"] == 0, summary
    assert bf16["second"]["summary"]["files_changed"] == 0
    codes = {(Path(f["path"]).stem, f["code"]) for f in bf16["first"]["findings"]}
    for name in LAYOUTS:
        assert (name, "APX231") in codes, name  # the scaler was removed ...
        assert (name, "APX232") not in codes, name  # ... not kept
    manual = [f for f in bf16["first"]["findings"] if f["needs_manual_work"] and Path(f["path"]).stem in LAYOUTS]
    assert manual == []


@pytest.mark.parametrize("name", LAYOUTS)
def test_migrated_script_has_bf16_autocast_and_no_loss_scaling(bf16, name):
    text = re.sub(r'"""[\s\S]*?"""', "", bf16["texts"][f"{name}.py"])  # code, not docstrings
    assert 'torch.autocast("cuda", dtype=torch.bfloat16' in text
    assert not re.search(r"GradScaler|scaler|scale_loss|torch\.float16|\bamp\.", text), text
    assert re.search(r"^\s*loss\.backward\(\)$", text, re.M), text
    assert not re.search(r"^\s*(from|import)\s+apex", text, re.M)


@pytest.mark.parametrize("name", LAYOUTS)
def test_bf16_runs_train_and_resume(bf16, name):
    metric = "loss"
    full = _metric(_ok(bf16, f"bf16:{name}:full")["stdout"], metric)
    assert len(full) == STEPS
    assert sum(full[-4:]) < 0.7 * sum(full[:4]), full
    # resuming from a checkpoint apex wrote (loss scale 65536 under 'amp'): it loads, and the
    # run goes on from the trained weights
    from_apex = _metric(_ok(bf16, f"bf16:{name}:resumed-from-apex")["stdout"], metric)
    assert len(from_apex) == STEPS // 2 and from_apex[0] < 0.7 * full[0], (from_apex, full)
    # resuming from its own checkpoint gives the uninterrupted run's weights
    resumed = _params(bf16, "bf16", name, "resumed")
    torch.testing.assert_close(resumed, _params(bf16, "bf16", name, "full"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", LAYOUTS)
def test_bfloat16_autocast_really_ran(bf16, name, capsys):
    """The CPU-mapped run computes in bfloat16: its weights differ from the same script run on a
    CPU host (where autocast("cuda") switches itself off: fp32), by bfloat16 rounding only."""
    measured = _rel_diff(_params(bf16, "bf16", name, "full"), _params(bf16, "bf16", name, "fp32-host"))
    with capsys.disabled():
        print(f"\n{name}: ||bf16 run - fp32 run|| / ||fp32 run|| = {measured:.3g}")
    assert 0 < measured <= BF16_REL
