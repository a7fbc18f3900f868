"""The generators behind the docs' generated fragments, and the strict site build itself.

CI builds the site with ``docs/build.sh`` in its own stage; the full-build test here is for
developers who installed the ``docs`` extra (skipped, with a message, otherwise)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = REPO_ROOT / "docs" / "scripts"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_script_{name}", SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_scale_trajectory_run_follows_apex_rule():
    plot = _load("plot_scale_trajectory")
    records = plot.run(steps=20, spike_step=15)
    events = plot.events(records)
    # the fp16 gradients fit from scale 16 on: 12 halvings from 65536, then the corrupt batch
    assert [e["step"] for e in events] == list(range(12)) + [15]
    assert [e["scale"] for e in events] == [65536.0 / 2 ** (i + 1) for i in range(12)] + [8.0]
    assert events[0]["printed"] == "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0"
    assert records[14]["unskipped"] == 3 and records[15]["unskipped"] == 0
    table = plot.markdown_table(records, 15)
    assert "| 15 | overflow: step skipped, scale halved | 16.0 | 8.0 |" in table


def test_scale_trajectory_plot_renders(tmp_path: Path):
    pytest.importorskip("matplotlib", reason="matplotlib is in the docs extra")
    plot = _load("plot_scale_trajectory")
    records = plot.run(steps=20, spike_step=15)
    plot.plot(records, tmp_path / "p.png", 15)
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rule_reference_lists_every_code_and_example():
    reference = _load("rule_reference").render()
    from migrate.codes import DRIVER_CODES
    from migrate.rules import ALL_RULES

    codes = set(DRIVER_CODES)
    for rule in ALL_RULES:
        codes.update(rule.CODES)
        for example in [*rule.EXAMPLES, *rule.NOOP_EXAMPLES]:
            assert f"**{example.id}**" in reference
            assert example.before.rstrip("\n") in reference
            if example.after is not None:
                assert example.after.rstrip("\n") in reference
    for code in codes:
        assert f"| `{code}` |" in reference


def test_o1_dtype_table_marks_agreement():
    measured = {"torch": "2.x", "device": "cpu",
                "results": {"F.linear(f32,f32w)": "torch.float16", "torch.sum(f16)": "torch.float16"}}
    table = _load("o1_dtype_table").table([("CUDA", None), ("CPU", measured)])
    assert "| `F.linear(f32,f32w)` | float16 | not measured | float16 ✓ |" in table
    assert "| `torch.sum(f16)` | float32 | not measured | float16 |" in table
    assert "- CUDA: not measured." in table


@pytest.mark.slow
def test_strict_docs_build(tmp_path: Path):
    missing = [m for m in ("sphinx", "myst_parser", "furo", "matplotlib") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"docs extra not installed ({', '.join(missing)}): pip install -e '.[docs]'; CI builds via docs/build.sh")
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-E", "-q", "-b", "html",
         str(REPO_ROOT / "docs"), str(tmp_path / "html")],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "html" / "shim" / "loss-scaler.html").exists()
