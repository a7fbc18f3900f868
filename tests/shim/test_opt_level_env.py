"""``APEXCOMPAT_OPT_LEVEL`` (and ``amp.set_opt_level_override``): a real script run in a
subprocess at each level; the banner shows the level used, stderr says what was
overridden, invalid values name the valid ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import apexcompat
from apexcompat import amp
from _golden_replay import LoopNet, captured_lines

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """\
import torch
import torch.nn.functional as F
import apexcompat
from apexcompat import amp

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
model, optimizer = amp.initialize(model, optimizer, opt_level="O2", keep_batchnorm_fp32=True)
g = torch.Generator().manual_seed(1)
x = torch.randn(64, 4, generator=g)
y = x[:, :2] * 2 - x[:, 2:]
losses = []
for step in range(40):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x).float(), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    losses.append(loss.item())
print("weight dtype", model[0].weight.dtype)
print("loss", losses[0], "->", losses[-1])
"""


def _run(tmp_path, **env_vars):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("APEXCOMPAT_")}
    env.update(env_vars, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)


BRIEFS = {
    "O0": "O0:  Pure FP32 training.",
    "O1": "O1:  Insert automatic casts around Pytorch functions and Tensor methods.",
    "O2": "O2:  FP16 training with FP32 batchnorm and FP32 master weights.",
    "O3": "O3:  Pure FP16 training.",
}
WEIGHT = {"O0": torch.float32, "O1": torch.float32, "O2": torch.float16, "O3": torch.float16}


@pytest.mark.parametrize("level", ["O0", "O1", "O2", "O3"])
def test_env_opt_level_overrides_the_script(level, tmp_path):
    result = _run(tmp_path, APEXCOMPAT_OPT_LEVEL=level)
    assert result.returncode == 0, result.stderr
    out = result.stdout.splitlines()
    assert out[0] == "Selected optimization level " + BRIEFS[level]
    final = result.stdout.split("After processing overrides, optimization options are:\n")[1]
    assert f"opt_level              : {level}\n" in final
    assert f"weight dtype {WEIGHT[level]}" in out
    first, last = (float(v) for v in out[-1].split()[1::2])
    assert last < 0.5 * first
    err = result.stderr.splitlines()
    if level == "O2":
        assert "apexcompat: APEXCOMPAT_OPT_LEVEL=O2: the script already uses opt_level 'O2'" in err
    else:
        assert f"apexcompat: APEXCOMPAT_OPT_LEVEL={level}: opt_level overridden from 'O2' (the script's) to '{level}'" in err
    # keep_batchnorm_fp32=True is valid at O0, O2 and O3; apex refuses it at O1
    dropped = "apexcompat: keep_batchnorm_fp32=True dropped: it is not valid at the forced opt_level 'O1'"
    assert (dropped in err) == (level == "O1")
    assert len([line for line in err if line.startswith("apexcompat:")]) == 1 + (level == "O1")


def test_without_env_the_script_level_is_used_and_stderr_is_quiet(tmp_path):
    result = _run(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Selected optimization level " + BRIEFS["O2"]
    assert "apexcompat:" not in result.stderr


def test_env_opt_level_and_bfloat16_together(tmp_path):
    result = _run(tmp_path, APEXCOMPAT_OPT_LEVEL="O3", APEXCOMPAT_HALF_DTYPE="bfloat16")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "Selected optimization level O3:  Pure BF16 training."
    assert "weight dtype torch.bfloat16" in result.stdout
    assert "Gradient overflow" not in result.stdout
    assert "apexcompat: APEXCOMPAT_HALF_DTYPE=bfloat16: O3 casts the model to torch.bfloat16" in result.stderr


INVALID = (
    "APEXCOMPAT_OPT_LEVEL={!r} is not an opt level: valid values are "
    "'O0', 'O1', 'O2', 'O3' (the letter O, not the number zero)"
)


def test_invalid_env_opt_level_stops_the_script(tmp_path):
    result = _run(tmp_path, APEXCOMPAT_OPT_LEVEL="O4")
    assert result.returncode != 0
    assert "ValueError: " + INVALID.format("O4") in result.stderr


@pytest.mark.parametrize("value", ["00", "fast", "O 1"])
def test_invalid_env_opt_level_names_valid_values(value, monkeypatch):
    monkeypatch.setenv("APEXCOMPAT_OPT_LEVEL", value)
    with pytest.raises(ValueError) as err, captured_lines():
        amp.initialize(LoopNet(), opt_level="O1")
    assert str(err.value) == INVALID.format(value)


def test_set_opt_level_override_from_python(capsys):
    apexcompat.set_opt_level_override("o3")
    with captured_lines() as lines:
        model = amp.initialize(LoopNet(), opt_level="O1")
    assert lines[0] == "Selected optimization level " + BRIEFS["O3"]
    assert model.fc1.weight.dtype == torch.float16
    assert "apexcompat: set_opt_level_override=O3: opt_level overridden from 'O1' (the script's) to 'O3'" in (
        capsys.readouterr().err
    )
    with pytest.raises(ValueError, match="valid values are 'O0', 'O1', 'O2', 'O3'"):
        apexcompat.set_opt_level_override("O5")
