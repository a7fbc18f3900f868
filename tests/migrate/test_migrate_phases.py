"""benchmarks/migrate_phases.py: its tables name the phases, the rules and the files, and
the engine is as it was after the run (the timers are taken off)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from migrate import engine

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "migrate_phases.py"

TRAIN = """import torch
from apex import amp


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for data, target in loader:
        loss = torch.nn.functional.mse_loss(model(data), target)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""


def _load():
    spec = importlib.util.spec_from_file_location("migrate_phases", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_phases_tables_and_timers_taken_off(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    before = (engine.migrate_source, engine.resolve_scopes, engine._run_rules, engine._shared)
    assert _load().main([str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert "scope analysis" in err and "re-parse" in err
    assert "InitializeRule                       1     1" in err
    assert "train.py changed by InitializeRule" in err
    assert (engine.migrate_source, engine.resolve_scopes, engine._run_rules, engine._shared) == before
    assert (tmp_path / "train.py").read_text() == TRAIN  # --check writes nothing
