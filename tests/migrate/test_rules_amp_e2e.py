"""End to end: realistic apex.amp scripts (``amp_scripts.py``) are migrated with ``--to
native`` and ``--to shim`` and both results are run on this machine.

The scripts choose their device at run time (``torch.device("cuda" if ... else "cpu")``),
so the migrated autocast and GradScaler follow it: on a CPU-only host the native O1 script
trains with CPU float16 autocast and an enabled CPU GradScaler, as the shim's O1 does there.
Each native run is compared with the original through ``apexcompat.amp``: at O0 exactly
(pure fp32: steps, updates, accumulation boundaries, clipping and checkpoints kept their
meaning), at O1 within mixed-precision tolerance (autocast's op lists are not apex's).  A
checkpoint written by the original (apex format, via the shim) must resume in the native
script; the emitted ``load_scaler_state`` helper is checked on an enabled scaler.
"""

from __future__ import annotations

import functools
import types
import warnings
from pathlib import Path
from typing import Dict, List

import pytest
import torch

from apexcompat.amp._amp_state import reset_state
from migrate.engine import migrate_source
from migrate.settings import Settings

from amp_scripts import CLIP_AND_CHECKPOINT, SCRIPTS


@functools.lru_cache(maxsize=None)
def migrated(source: str, target: str) -> str:
    result = migrate_source(source.encode(), "train.py", Settings(target=target))
    assert result.parse_error is None and getattr(result, "internal_error", None) is None
    return result.new.decode()


def run_script(source: str, argv: List[str], name: str) -> Dict[str, list]:
    module = types.ModuleType(name)
    try:
        with warnings.catch_warnings():
            # autocast("cuda")/GradScaler("cuda") warn that CUDA is missing and disable themselves
            warnings.simplefilter("ignore", UserWarning)
            exec(compile(source, f"<{name}>", "exec"), module.__dict__)
            return module.main(argv)
    finally:
        reset_state()  # the shim's O1 autocast region must not leak into the next run


def assert_same_params(a: List[torch.Tensor], b: List[torch.Tensor], tol: float) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert torch.allclose(x, y, rtol=tol, atol=tol), (x - y).abs().max()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_native_migration_trains_like_the_original(name: str) -> None:
    source, argv_o1, argv_o0 = SCRIPTS[name]
    native = migrated(source, "native")
    shim = migrated(source, "shim")
    assert "import apex" not in native and "from apex" not in native  # apexcompat included
    assert "from apexcompat import amp" in shim and "from apex " not in shim
    assert migrated(native, "native") == native  # idempotent
    native_run = run_script(native, argv_o1, name + "_native")
    losses = native_run["losses"]
    assert sum(losses[-5:]) < sum(losses[:5]), losses
    reference = run_script(shim, argv_o1, name + "_shim")
    assert_same_params(native_run["params"], reference["params"], 5e-2)
    native_fp32 = run_script(native, argv_o0, name + "_native_fp32")
    reference_fp32 = run_script(shim, argv_o0, name + "_shim_fp32")
    assert_same_params(native_fp32["params"], reference_fp32["params"], 1e-5)


@pytest.mark.slow
def test_apex_checkpoint_resumes_in_the_native_script(tmp_path: Path) -> None:
    apex_ckpt = tmp_path / "apex.pt"
    native_ckpt = tmp_path / "native.pt"
    shim = migrated(CLIP_AND_CHECKPOINT, "shim")
    native = migrated(CLIP_AND_CHECKPOINT, "native")
    first = run_script(shim, ["--fp16", "--save", str(apex_ckpt)], "ckpt_shim")
    assert "loss_scaler0" in torch.load(apex_ckpt)["amp"]  # written in apex's format
    resumed = run_script(native, ["--fp16", "--resume", str(apex_ckpt), "--save", str(native_ckpt)], "ckpt_native")
    assert resumed["losses"][-1] < first["losses"][0]
    # and the native script resumes from its own checkpoint (GradScaler's format)
    assert "scale" in torch.load(native_ckpt)["amp"]
    again = run_script(native, ["--fp16", "--resume", str(native_ckpt)], "ckpt_native_again")
    assert len(again["losses"]) > 0
    # the shim and the native script resume the same way from the apex checkpoint
    shim_resumed = run_script(shim, ["--fp16", "--resume", str(apex_ckpt)], "ckpt_shim_resume")
    native_resumed = run_script(native, ["--fp16", "--resume", str(apex_ckpt)], "n2")
    assert_same_params(native_resumed["params"], shim_resumed["params"], 5e-2)


def _helper() -> types.ModuleType:
    native = migrated(CLIP_AND_CHECKPOINT, "native")
    start = native.index("def load_scaler_state")
    end = native.index("\ndef ", start + 1)
    module = types.ModuleType("helper")
    exec(native[start:end], module.__dict__)
    return module


@pytest.mark.skipif(not hasattr(torch.amp, "GradScaler"), reason="torch.amp.GradScaler('cpu') needs torch >= 2.3")
def test_load_scaler_state_reads_every_format() -> None:
    load_scaler_state = _helper().load_scaler_state
    scaler = torch.amp.GradScaler("cpu", growth_interval=100)
    load_scaler_state(scaler, {"loss_scaler0": {"loss_scale": 1024.0, "unskipped": 7}})
    assert scaler.get_scale() == 1024.0
    assert scaler.state_dict()["_growth_tracker"] == 7
    assert scaler.state_dict()["growth_interval"] == 100  # the scaler's own settings are kept
    load_scaler_state(scaler, {})  # a disabled scaler's checkpoint: nothing to load, no error
    assert scaler.get_scale() == 1024.0
    other = torch.amp.GradScaler("cpu", init_scale=8.0)
    load_scaler_state(scaler, other.state_dict())  # GradScaler's own format
    assert scaler.get_scale() == 8.0
    disabled = torch.amp.GradScaler("cpu", enabled=False)
    load_scaler_state(disabled, {"loss_scaler0": {"loss_scale": 2.0, "unskipped": 0}})
    assert disabled.state_dict() == {}
