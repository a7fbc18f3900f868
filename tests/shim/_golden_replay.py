"""Helpers shared by the golden-trace replays of the scaler, loops and api groups.

Each replay rebuilds its scenario from the trace's ``settings`` (never from its file name),
so held-back traces of the same kinds run through the same code.  A setting this module
cannot express raises ``UnsupportedScenario`` — the test then fails, it is never skipped.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from types import SimpleNamespace
from typing import Any, Dict, List, Optional, Tuple

import torch

from apexcompat import amp
from apexcompat.amp import _amp_state
from apexcompat.amp._process_optimizer import _process_optimizer
from apexcompat.amp.scaler import LossScaler


class UnsupportedScenario(AssertionError):
    """The trace asks for something the replay does not know how to build."""


# --- comparing -------------------------------------------------------------------------------

_CAST_LOG = re.compile(r"^(Float->Half|Half->Float) \(.*\)$")


def expected_stdout(trace: dict) -> List[str]:
    """What the shim must print: apex's lines minus the fallback-only ones and minus the
    verbosity-2 cast log (spec §12)."""
    return [line for line in trace["stdout_without_fallback_lines"] if not _CAST_LOG.match(line)]


def typed(value: Any) -> Any:
    """A comparable form that keeps int vs float apart (``128`` != ``128.0``) and reads the
    traces' "inf"/"nan" strings as floats."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [typed(v) for v in value]
    return value


def scaler_states() -> List[dict]:
    return [{"loss_scale": s.loss_scale(), "unskipped": s._unskipped} for s in _amp_state.loss_scalers]


@contextlib.contextmanager
def captured_lines():
    """Collect everything printed (the amp logger writes to the current sys.stdout)."""
    buf = io.StringIO()
    lines: List[str] = []
    with contextlib.redirect_stdout(buf):
        yield lines
    lines.extend(buf.getvalue().splitlines())


def float_value(x: Any) -> float:
    if isinstance(x, str):
        return float(x)
    return float(x)


def assert_close(actual: List[float], expected: List[Any], rtol: float, atol: float, what: str) -> None:
    assert len(actual) == len(expected), what
    for i, (a, e) in enumerate(zip(actual, expected)):
        e = float_value(e)
        if math.isnan(e):
            assert math.isnan(a), f"{what}[{i}]: {a} vs nan"
        elif math.isinf(e):
            assert a == e, f"{what}[{i}]: {a} vs {e}"
        else:
            assert abs(a - e) <= atol + rtol * abs(e), f"{what}[{i}]: {a} vs {e}"


# --- initialize ---------------------------------------------------------------------------------


def frontend_available() -> bool:
    """Whether S2's ``amp.initialize`` has replaced its placeholder module."""
    return not (amp.frontend.__doc__ or "").startswith("Placeholder")


def minimal_initialize(model, optimizer, opt_level: str = "O0", **kwargs):
    """Just enough of ``amp.initialize`` for fp32 O0 scaler scenarios (used while the
    front end is not available): properties, optimizer patching, scalers.  Prints nothing."""
    if opt_level != "O0":
        raise UnsupportedScenario(f"minimal_initialize only does O0, not {opt_level}")
    loss_scale = kwargs.pop("loss_scale", 1.0)
    if loss_scale != "dynamic":
        loss_scale = float(loss_scale)
    min_loss_scale = kwargs.pop("min_loss_scale", None)
    max_loss_scale = kwargs.pop("max_loss_scale", 2.0**24)
    num_losses = kwargs.pop("num_losses", 1)
    verbosity = kwargs.pop("verbosity", 1)
    if kwargs:
        raise UnsupportedScenario(f"minimal_initialize: unsupported kwargs {sorted(kwargs)}")
    _amp_state.verbosity = verbosity
    _amp_state.opt_properties = SimpleNamespace(
        enabled=True,
        opt_level="O0",
        cast_model_type=torch.float32,
        patch_torch_functions=False,
        keep_batchnorm_fp32=None,
        master_weights=False,
        loss_scale=loss_scale,
    )
    _amp_state.min_loss_scale = min_loss_scale
    _amp_state.max_loss_scale = max_loss_scale
    optimizers = optimizer if isinstance(optimizer, list) else [optimizer]
    for opt in optimizers:
        _process_optimizer(opt, _amp_state.opt_properties)
    _amp_state.loss_scalers = [
        LossScaler(loss_scale, min_loss_scale=min_loss_scale, max_loss_scale=max_loss_scale)
        for _ in range(num_losses)
    ]
    return model, optimizer


# --- the scaler group ------------------------------------------------------------------------

_EVENT_VALUES = {"C": None, "I": float("inf"), "M": float("-inf"), "N": float("nan")}


def scaler_events(trace: dict) -> List[str]:
    events: List[str] = []
    for code, count in trace["events_run_length"]:
        if code not in _EVENT_VALUES:
            raise UnsupportedScenario(f"unknown event code {code!r}")
        events.extend([code] * count)
    return events


def _preload(state: Optional[dict]) -> None:
    if state is None:
        return
    if any("loss_scaler" in str(k) for k in state):
        amp.load_state_dict(state)
    else:
        amp.load_state_dict({"loss_scaler0": dict(state)})


def _check_scaler_constants(settings: dict) -> None:
    fixed = {"init_scale": 65536.0, "scale_factor": 2.0, "scale_window": 2000}
    for key, value in fixed.items():
        if settings.get(key, value) != value:
            raise UnsupportedScenario(f"amp never changes {key}; trace has {settings[key]!r}")
    if settings.get("opt_level", "O0") != "O0":
        raise UnsupportedScenario("scaler traces run at O0")


def replay_scaler_frontend(trace: dict, initialize) -> Tuple[list, list, List[str]]:
    """The scaler scenario through the front end: a one-parameter model, SGD(lr=0), per step
    zero_grad / scale_loss (event written into the grad) / step.  Returns (rows, log lines,
    all printed lines)."""
    settings = trace["settings"]
    _check_scaler_constants(settings)
    events = scaler_events(trace)
    weight = torch.nn.Parameter(torch.ones(1))
    model = torch.nn.Module()
    model.weight = weight
    optimizer = torch.optim.SGD([weight], lr=0.0)
    rows, log_lines = [], []
    with captured_lines() as printed:
        model, optimizer = initialize(model, optimizer, opt_level=settings["opt_level"], **settings["initialize_kwargs"])
        _preload(settings.get("preloaded_state"))
    for step, code in enumerate(events):
        scaler = _amp_state.loss_scalers[0]
        before = scaler.loss_scale()
        optimizer.zero_grad()
        loss = (weight * 2.0).sum()
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
            if _EVENT_VALUES[code] is not None:
                weight.grad[0] = _EVENT_VALUES[code]
        skipped = optimizer._amp_stash.already_patched
        with captured_lines() as step_lines:
            optimizer.step()
        printed.extend(step_lines)
        log_lines.extend([step, line] for line in step_lines)
        rows.append([step, before, skipped, scaler.loss_scale(), scaler._unskipped])
    return rows, log_lines, printed


def replay_scaler_direct(trace: dict) -> Tuple[list, list]:
    """The same events fed straight into a ``LossScaler`` (unscale one grad, update)."""
    settings = trace["settings"]
    _check_scaler_constants(settings)
    kwargs = dict(settings["initialize_kwargs"])
    loss_scale = kwargs.get("loss_scale", 1.0)
    scaler = LossScaler(
        loss_scale if loss_scale == "dynamic" else float(loss_scale),
        min_loss_scale=kwargs.get("min_loss_scale"),
        max_loss_scale=kwargs.get("max_loss_scale", 2.0**24),
    )
    pre = settings.get("preloaded_state")
    if pre is not None:
        pre = pre.get("loss_scaler0", pre)
        scaler._loss_scale, scaler._unskipped = pre["loss_scale"], pre["unskipped"]
    rows, log_lines = [], []
    for step, code in enumerate(scaler_events(trace)):
        before = scaler.loss_scale()
        grad = torch.full((1,), 2.0 * before)
        if _EVENT_VALUES[code] is not None:
            grad[0] = _EVENT_VALUES[code]
        scaler.clear_overflow_state()
        scaler.unscale([grad], [grad], None, models_are_masters=True)
        skipped = scaler.update_scale()
        if skipped:
            log_lines.append(
                [step, f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scaler.loss_scale()}"]
            )
        rows.append([step, before, skipped, scaler.loss_scale(), scaler._unskipped])
    return rows, log_lines
