"""The examples the README and the docs run: the shim training loop, and the apex-style
script of the migration demo, before (through an ``apex`` alias of the shim) and after
``apexcompat-migrate --to native`` / ``--to shim``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = REPO_ROOT / "examples"


def _env(*extra_paths: Path) -> dict:
    env = dict(os.environ)
    paths = [str(p) for p in extra_paths] + [str(REPO_ROOT)]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths + [env.get("PYTHONPATH", "")]))
    env["CUDA_VISIBLE_DEVICES"] = ""
    return env


def _run(args, cwd: Path, env: dict) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _losses(stdout: str):
    return [float(x) for x in re.findall(r"loss (\d+\.\d+)", stdout)]


def test_train_cifar_like_trains_saves_and_resumes(tmp_path: Path):
    script = str(EXAMPLES / "train_cifar_like.py")
    common = ["--opt-level", "O2", "--image-size", "8", "--batch-size", "16", "--log-every", "4"]
    out = _run([script, *common, "--steps", "8", "--checkpoint", "ck.pt"], tmp_path, _env())
    assert out.startswith("Selected optimization level O2:  FP16 training with FP32 batchnorm and FP32 master weights.\n")
    assert "loss_scale             : dynamic" in out
    assert re.search(r"step +8 +loss \d+\.\d+ +avg \d+\.\d+ +loss scale 65536\.0", out), out
    assert "saved ck.pt" in out
    resumed = _run([script, *common, "--steps", "4", "--resume", "ck.pt"], tmp_path, _env())
    assert "resumed from ck.pt at step 8" in resumed
    assert re.search(r"step +12 ", resumed), resumed


def _apex_alias(tmp_path: Path) -> Path:
    """A directory with an ``apex`` package whose ``amp`` is the shim: runs unmigrated scripts."""
    alias = tmp_path / "apex_alias"
    (alias / "apex").mkdir(parents=True)
    (alias / "apex" / "__init__.py").write_text("from apexcompat import amp  # noqa: F401\n")
    return alias


def test_apex_script_runs_as_written_through_an_apex_alias(tmp_path: Path):
    out = _run([str(EXAMPLES / "apex_script" / "train.py"), "--epochs", "2", "--checkpoint", "apex.pt"],
               tmp_path, _env(_apex_alias(tmp_path)))
    losses = _losses(out)
    assert len(losses) == 2 and losses[1] < losses[0], out
    assert (tmp_path / "apex.pt").exists()


@pytest.mark.parametrize("target", ["native", "shim"])
def test_apex_script_migrates_runs_and_resumes_an_apex_checkpoint(tmp_path: Path, target: str):
    sample = tmp_path / "apex_script"
    shutil.copytree(EXAMPLES / "apex_script", sample, ignore=shutil.ignore_patterns("__pycache__"))
    # a checkpoint written by the original, apex-style script
    _run([str(sample / "train.py"), "--epochs", "1", "--checkpoint", "apex.pt"], tmp_path, _env(_apex_alias(tmp_path)))

    proc = subprocess.run([sys.executable, "-m", "migrate", "--to", target, "apex_script"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    migrated = (sample / "train.py").read_text()
    assert not re.search(r"^\s*(from apex[. ]|import apex\b)", migrated, re.M), migrated
    if target == "shim":
        assert "from apexcompat import amp" in migrated
    else:
        assert not re.search(r"^\s*(from|import) apexcompat", migrated, re.M) and "GradScaler" in migrated

    env = _env()  # no apex alias: the migrated script must not need apex
    fresh = _losses(_run([str(sample / "train.py"), "--epochs", "2"], tmp_path, env))
    assert len(fresh) == 2 and fresh[1] < fresh[0]
    resumed = _losses(_run([str(sample / "train.py"), "--epochs", "1", "--resume", "apex.pt"], tmp_path, env))
    assert len(resumed) == 1 and resumed[0] < fresh[0]
