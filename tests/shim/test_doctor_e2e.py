"""The overflow doctor end to end (issue 10 acceptance a-e): each case is a real CPU
training loop through ``apexcompat.amp`` (``docs/scripts/doctor_cases.py``), run in a fresh
interpreter with and without ``APEXCOMPAT_DIAGNOSE=1``.  The doctor's reports are on stderr;
stdout (apex's lines) must be byte-identical between the two runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "docs" / "scripts" / "doctor_cases.py"
_spec = importlib.util.spec_from_file_location("doctor_cases", SCRIPT)
cases = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("doctor_cases", cases)  # dataclasses look their module up
_spec.loader.exec_module(cases)

_runs: dict = {}


def both(name: str):
    """(default run, diagnose run) of one case; stdout compared byte for byte."""
    if name not in _runs:
        pair = cases.run_pair(name)
        _runs[name] = (pair[False], pair[True])
    default, diagnosed = _runs[name]
    assert diagnosed.stdout == default.stdout
    assert "Gradient overflow.  Skipping step" in default.stdout or name == "healthy"
    return default, cases.doctor_lines(diagnosed.stderr)


def test_a_overflowing_layer_parameters_are_named():
    default, report = both("grad")
    assert "step 0, loss scaler 0: gradient overflow at loss scale 65536.0 (the loss is finite): 2 of 2 parameters" in report
    assert "    head.weight  float16  [1x16]  " in report
    assert "    head.bias  float16  [1]  " in report
    assert "encoder." not in report.split("localisation")[0]  # frozen: no gradient, not named
    assert "before scaling" not in report
    assert "apexcompat doctor" not in default.stderr  # recovers: no collapse warning


def test_b_nan_in_one_batch_is_the_loss():
    default, report = both("nan")
    assert default.stdout.count("Gradient overflow.  Skipping step") == 1
    assert report.splitlines()[0] == (
        "apexcompat doctor: step 6, loss scaler 0: the loss is nan before scaling: lowering the "
        "loss scale cannot fix this. Look at this step's inputs and labels and at the forward "
        "pass (log, sqrt or division of 0, an fp16 activation above 65504)."
    )
    assert "the step after the overflow at step 6 was clean" in report
    assert "collapsed" not in report and "gradient overflow at" not in report


def test_c_forward_overflow_names_the_module():
    _, report = both("forward")
    assert "step 0, loss scaler 0: the loss is nan before scaling" in report
    assert ("first module with a non-finite forward output: encoder.act (Exp; inputs float16, "
            "outputs float16): forward output is inf") in report


def test_d_healthy_run_only_the_probe():
    default, report = both("healthy")
    assert default.stdout.count("Gradient overflow.  Skipping step") == 2  # steps 2000 and 4001
    assert report == (
        "apexcompat doctor: step 2000, loss scaler 0: overflow after the scale grew to 131072.0 "
        "(at step 1999, after 2000 clean steps): this is the scaler's periodic probe, normal; "
        "the scale goes back to 65536.0. (Said once; later probes are not reported.)"
    )
    assert default.stderr.strip() == ""


def test_e_collapse_report_and_default_warning():
    default, report = both("collapse")
    assert ("loss scaler 0 has collapsed: 17 skipped steps in a row (steps 0-16), loss scale "
            "65536.0 -> 0.5; last clean step: none yet.") in report
    assert "first non-finite gradient in the backward pass: encoder.act (SqrtOfZero" in report
    advice = report.split("What to try, in order:")[1]
    assert advice.index("encoder.act") < advice.index("APEXCOMPAT_HALF_DTYPE=bfloat16") < advice.index(
        "APEXCOMPAT_OPT_LEVEL=O1") < advice.index("learning rate") < advice.index("clip_grad_norm_")
    warning = cases.doctor_lines(default.stderr)
    assert warning.count("apexcompat doctor:") == 1
    assert "loss scaler 0 is collapsing: 17 skipped steps in a row" in warning
    assert "Run with APEXCOMPAT_DIAGNOSE=1" in warning


@pytest.mark.parametrize("name", ["grad", "nan", "forward", "collapse"])
def test_default_mode_stderr_has_no_reports(name):
    default, _ = both(name)
    lines = cases.doctor_lines(default.stderr).splitlines()
    assert all("is collapsing" in line for line in lines if line.startswith("apexcompat doctor"))
