"""Replays of every ``golden/scaler`` trace: scale, skip and counter after every step, the
overflow lines, and (through ``amp.initialize``) the complete stdout, byte for byte."""

from __future__ import annotations

import json

import pytest

from conftest import golden_params
from _golden_replay import (
    expected_stdout,
    frontend_available,
    minimal_initialize,
    replay_scaler_direct,
    replay_scaler_frontend,
    typed,
)


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _assert_rows(rows, trace):
    assert trace["columns"] == ["step", "scale_before", "skipped", "scale_after", "unskipped_after"]
    assert len(rows) == len(trace["rows"]) == trace.get("num_steps", len(rows))
    for got, want in zip(rows, trace["rows"]):
        assert typed(got) == typed(want), f"step {want[0]}: got {got}, apex {want}"


@golden_params("scaler")
def test_scaler_trace_direct(golden_path):
    """The events fed straight into LossScaler.  Where apex did not check the direct path
    against the front end (``checked_against_direct_LossScaler`` false, e.g. the static 1.0
    short-cut of scale_loss never calls update_scale, so its counter stays 0) only the
    scale and skip columns are compared."""
    trace = _load(golden_path)
    rows, log_lines = replay_scaler_direct(trace)
    if trace.get("checked_against_direct_LossScaler", True):
        _assert_rows(rows, trace)
    else:
        assert len(rows) == len(trace["rows"])
        for got, want in zip(rows, trace["rows"]):
            assert typed(got[:4]) == typed(want[:4]), f"step {want[0]}: got {got}, apex {want}"
    assert log_lines == trace["log_lines"]


@golden_params("scaler")
def test_scaler_trace_full_stdout(golden_path):
    """Through ``amp.initialize``: the whole stdout is apex's."""
    trace = _load(golden_path)
    if frontend_available():
        from apexcompat import amp

        initialize = amp.initialize
    else:  # keeps the scaler/scale_loss part testable on its own
        initialize = minimal_initialize
    rows, log_lines, printed = replay_scaler_frontend(trace, initialize)
    if not frontend_available():
        pytest.fail("amp.initialize (frontend.py) is still a placeholder; trajectory matched")
    _assert_rows(rows, trace)
    assert log_lines == trace["log_lines"]
    assert printed == expected_stdout(trace)
