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


class _Lines(list):
    """Lines printed so far inside ``captured_lines``; ``since(mark)`` gives the newer ones."""

    def __init__(self, buf: io.StringIO) -> None:
        super().__init__()
        self._buf = buf

    def mark(self) -> int:
        return len(self._buf.getvalue())

    def since(self, mark: int) -> List[str]:
        return self._buf.getvalue()[mark:].splitlines()


@contextlib.contextmanager
def captured_lines():
    """Collect everything printed (the amp logger writes to the current sys.stdout); the
    list is filled when the block exits, ``mark``/``since`` read it while inside."""
    buf = io.StringIO()
    lines = _Lines(buf)
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


# --- api ------------------------------------------------------------------------------------


def load_state_dict_trace_names() -> List[str]:
    """Every api trace of the load kind (``loaded``/``loaded_keys`` + ``scalers_after``),
    held-back ones included; their replay reads the scaler count off ``scalers_after``."""
    import json

    from conftest import golden_files

    names = []
    for name, path in golden_files("api").items():
        with open(path, encoding="utf-8") as fh:
            result = json.load(fh).get("result")
        if isinstance(result, dict) and "scalers_after" in result and (
            "loaded" in result or "loaded_keys" in result
        ):
            names.append(name)
    return names


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
        model, optimizer = initialize(model, optimizer, opt_level=settings["opt_level"],
                                      **settings["initialize_kwargs"])
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
            mark = printed.mark()
            optimizer.step()
            step_lines = printed.since(mark)
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
    verbosity = kwargs.get("verbosity", 1)
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
        if skipped and verbosity > 0:  # the line amp's patched step() would maybe-print
            log_lines.append(
                [step, f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scaler.loss_scale()}"]
            )
        rows.append([step, before, skipped, scaler.loss_scale(), scaler._unskipped])
    return rows, log_lines


# --- the loops group -------------------------------------------------------------------------

KNOWN_MODEL = (
    "fc1=Linear(4,8) -> bn=BatchNorm1d(8) -> relu -> fc2=Linear(8,2); "
    "weights from torch.manual_seed(1234) right before construction"
)
_DATA = re.compile(
    r"^iteration i: g=torch\.Generator\(\)\.manual_seed\((\d+)\+i\); x=randn\((\d+),(\d+),g\); "
    r"y=randn\((\d+),(\d+),g\)\*([0-9.eE+-]+)$"
)
# Arguments may hold one level of parentheses (``betas=(0.9, 0.999)``).
_OPTIMIZER = re.compile(r"torch\.optim\.(\w+)\(((?:[^()]|\([^()]*\))*)\)")
_MODULE_NAMES = ("fc1", "bn", "fc2")
_ZERO_GRAD = "optimizer.zero_grad() at the start of every optimizer step (first micro-batch of a group)"
_KNOWN_SETTINGS = {
    "opt_level", "initialize_kwargs", "optimizer", "two_optimizers", "model", "data", "loss",
    "passes", "accumulate", "delay_unscale_on_non_final_micro_batches", "injections",
    "injection_note", "iterations_without_step_call", "zero_grad",
}
_INJECT = {"inf": float("inf"), "-inf": float("-inf"), "nan": float("nan")}


class LoopNet(torch.nn.Module):
    """The loops model: fc1=Linear(4,8) -> bn=BatchNorm1d(8) -> relu -> fc2=Linear(8,2)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(4, 8)
        self.bn = torch.nn.BatchNorm1d(8)
        self.fc2 = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(torch.relu(self.bn(self.fc1(x))))


#: fc1's bias feeds a training-mode BatchNorm, which subtracts each channel's batch mean: its
#: gradient is zero in exact arithmetic and rounding noise (~1e-8) in practice.  Adam turns
#: that noise into steps of about lr whose sign follows the machine's summation order (an H100
#: host's CPU ended 0.004 away from the trace after four Adam steps, every other parameter
#: within the golden tolerance), so the replays compare it within that drift instead.
NOISE_DRIVEN_PARAM = "fc1.bias"
#: the largest step of Adam-type optimizers, in units of lr: |m_hat / sqrt(v_hat)| stays below
#: (1 - beta1) / sqrt(1 - beta2) ~ 3.2 with the default betas
_ADAPTIVE_STEP_BOUND = 3.2
_ADAPTIVE = ("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "Adagrad", "RMSprop", "Adadelta")


def noise_drift_per_step(settings: dict) -> float:
    """How far one optimizer step may move ``NOISE_DRIVEN_PARAM`` away from the trace: about
    lr for an adaptive optimizer, nothing measurable for SGD (its step is lr * noise)."""
    drift = 0.0
    for name, args in _OPTIMIZER.findall(settings["optimizer"]):
        if name in _ADAPTIVE:
            lr = _parse_kwargs(args).get("lr", 1e-3)
            drift = max(drift, _ADAPTIVE_STEP_BOUND * float(lr))
    return drift


def noise_slots(model: torch.nn.Module, optimizers: List[torch.optim.Optimizer]) -> List[List[int]]:
    """Per optimizer, the positions of ``NOISE_DRIVEN_PARAM`` among its parameters (and so
    among ``amp.master_params(optimizer)``, which follow the same order)."""
    noisy = dict(model.named_parameters())[NOISE_DRIVEN_PARAM]
    return [
        [j for j, p in enumerate(q for group in opt.param_groups for q in group["params"]) if p is noisy]
        for opt in optimizers
    ]


def build_model(settings: dict) -> LoopNet:
    if settings["model"] != KNOWN_MODEL:
        raise UnsupportedScenario(f"unknown model {settings['model']!r}")
    torch.manual_seed(1234)
    return LoopNet()


def _parse_kwargs(text: str) -> Dict[str, Any]:
    import ast

    call = ast.parse(f"f({text})", mode="eval").body
    if call.args:
        raise UnsupportedScenario(f"positional optimizer arguments in {text!r}")
    return {kw.arg: ast.literal_eval(kw.value) for kw in call.keywords}


def build_optimizers(settings: dict, model: torch.nn.Module, trace_iterations: List[dict]):
    """One optimizer over all params, or (``two_optimizers``) consecutive slices of the
    model's params whose sizes are read off the trace's per-optimizer ``master_params``."""
    specs = _OPTIMIZER.findall(settings["optimizer"])
    if not specs or (len(specs) > 1 and not settings.get("two_optimizers")) or len(specs) > 2:
        raise UnsupportedScenario(f"unknown optimizer {settings['optimizer']!r}")
    makers = [(getattr(torch.optim, name), _parse_kwargs(args)) for name, args in specs]
    cls, kwargs = makers[0]
    params = list(model.parameters())
    if not settings.get("two_optimizers"):
        return cls(params, **kwargs), False
    named_split = _split_by_module_names(settings["optimizer"], model)
    if named_split is not None:
        if len(named_split) != 2:
            raise UnsupportedScenario(f"cannot match {settings['optimizer']!r} to two optimizers")
        (cls_a, kw_a), (cls_b, kw_b) = makers[0], makers[-1]
        return [cls_a(named_split[0], **kw_a), cls_b(named_split[1], **kw_b)], True
    sizes = None
    for it in trace_iterations:
        if it.get("master_params"):
            sizes = [len(group) for group in it["master_params"]]
            break
    if sizes is None:
        named = dict(model.named_parameters())
        first = [named[n] for n in ("fc1.weight", "fc1.bias", "bn.weight", "bn.bias")]
        sizes = [len(first), len(params) - len(first)]
    if sum(sizes) != len(params) or len(sizes) != 2:
        raise UnsupportedScenario(f"cannot split params into optimizers of sizes {sizes}")
    (cls_a, kw_a), (cls_b, kw_b) = makers[0], makers[-1]
    return [cls_a(params[: sizes[0]], **kw_a), cls_b(params[sizes[0]:], **kw_b)], True


def _split_by_module_names(text: str, model: torch.nn.Module):
    """When the optimizer text names the modules each optimizer owns (e.g. "SGD(...) on
    fc1+bn, Adam(...) on fc2" or "fc1+bn: SGD(...); fc2: Adam(...)"), the param lists in
    the optimizers' order; None when it names no module."""
    spans = [m.span() for m in _OPTIMIZER.finditer(text)]
    if not re.search(r"\b(fc1|bn|fc2)\b", text):
        return None
    cuts = [0] + [end for _, end in spans[:-1]] + [len(text)]
    readings = [
        # names written after each optimizer (up to the next one) ...
        [text[end:(spans[k + 1][0] if k + 1 < len(spans) else len(text))] for k, (_, end) in enumerate(spans)],
        # ... or before it (since the previous one)
        [text[cuts[k]:start] for k, (start, _) in enumerate(spans)],
    ]
    for segments in readings:
        groups = [set(re.findall(r"\b(fc1|bn|fc2)\b", seg)) for seg in segments]
        disjoint = sum(len(g) for g in groups) == len(set().union(*groups))
        if all(groups) and disjoint and set().union(*groups) == set(_MODULE_NAMES):
            named = dict(model.named_parameters())
            return [[p for name, p in named.items() if name.split(".")[0] in g] for g in groups]
    raise UnsupportedScenario(f"cannot split params as described by {text!r}")


def _loss_fn(settings: dict):
    text = settings["loss"]
    per_pass = text.startswith("pass k: ")
    expr = text[len("pass k: "):] if per_pass else text
    code = compile(expr, "<loss>", "eval")
    functional = torch.nn.functional
    allowed = {"mse_loss": functional.mse_loss, "l1_loss": functional.l1_loss,
               "smooth_l1_loss": functional.smooth_l1_loss, "F": functional, "torch": torch}

    def loss(out, y, k):
        return eval(code, {"__builtins__": {}}, dict(allowed, out=out, y=y, k=k))

    return loss


def _data(settings: dict, i: int):
    match = _DATA.match(settings["data"])
    if not match:
        raise UnsupportedScenario(f"unknown data generator {settings['data']!r}")
    base, xa, xb, ya, yb, scale = match.groups()
    g = torch.Generator().manual_seed(int(base) + i)
    x = torch.randn(int(xa), int(xb), generator=g)
    y = torch.randn(int(ya), int(yb), generator=g) * float(scale)
    return x, y


def _flat(t: torch.Tensor) -> List[float]:
    return [float(v) for v in t.detach().float().reshape(-1).tolist()]


def _param_record(model) -> Dict[str, List[float]]:
    return {name: _flat(p) for name, p in model.named_parameters()}


def _injection(settings: dict, i: int, k: int, n_passes: int):
    inj = settings.get("injections") or {}
    for key in (f"{i}.{k}",) + ((str(i),) if n_passes == 1 or k == 0 else ()):
        if key in inj:
            kind, target = inj[key]
            if kind not in _INJECT:
                raise UnsupportedScenario(f"unknown injection kind {kind!r}")
            return _INJECT[kind], target
    return None


def check_loop_settings(settings: dict) -> None:
    unknown = set(settings) - _KNOWN_SETTINGS
    if unknown:
        raise UnsupportedScenario(f"unknown settings keys {sorted(unknown)}")
    if settings.get("zero_grad", _ZERO_GRAD) != _ZERO_GRAD:
        raise UnsupportedScenario(f"unknown zero_grad policy {settings['zero_grad']!r}")
    for key in settings.get("injections") or {}:
        if not re.match(r"^\d+(\.\d+)?$", key):
            raise UnsupportedScenario(f"unknown injection key {key!r}")


def run_loop(settings: dict, plan: List[dict], initialize, model=None, optimizers=None,
             iterations=None, restore: Optional[dict] = None, save_after: Optional[int] = None) -> dict:
    """Run the training loop of a loops trace.  ``plan`` is the trace's iteration list (used
    for the number of passes and each pass's loss_id/delay flag, cross-checked against the
    settings).  ``restore`` = saved state dicts to load right after initialize."""
    check_loop_settings(settings)
    if model is None:
        model = build_model(settings)
        optimizers, two = build_optimizers(settings, model, plan)
    opt_list = optimizers if isinstance(optimizers, list) else [optimizers]
    record: Dict[str, Any] = {"iterations": [], "initial_params": _param_record(model)}
    record["noise_slots"] = noise_slots(model, opt_list)
    passed_model, passed_optimizers = model, optimizers
    with captured_lines() as printed:
        model, optimizers = initialize(model, optimizers, opt_level=settings["opt_level"],
                                       **settings["initialize_kwargs"])
        record["returned_same_model_object"] = model is passed_model
        if isinstance(optimizers, list):
            same = [a is b for a, b in zip(optimizers, passed_optimizers)]
            record["returned_same_optimizer_object"] = same
        else:
            record["returned_same_optimizer_object"] = optimizers is passed_optimizers
        opt_list = optimizers if isinstance(optimizers, list) else [optimizers]
        record["after_initialize_param_dtypes"] = {n: str(p.dtype) for n, p in model.named_parameters()}
        record["after_initialize_params"] = _param_record(model)
        record["after_initialize_scalers"] = scaler_states() if hasattr(_amp_state, "loss_scalers") else None
        if restore is not None:
            model.load_state_dict(restore["model"])
            for opt, sd in zip(opt_list, restore["optimizers"]):
                opt.load_state_dict(sd)
            amp.load_state_dict(restore["amp"])
            record["scalers_after_load"] = scaler_states()
            record["master_params_after_load"] = [_flat(p) for opt in opt_list for p in amp.master_params(opt)]
        accumulate = settings.get("accumulate", 1)
        delay_non_final = settings.get("delay_unscale_on_non_final_micro_batches", False)
        no_step = set(settings.get("iterations_without_step_call") or [])
        loss_of = _loss_fn(settings)
        named = dict(model.named_parameters())
        enabled = settings["initialize_kwargs"].get("enabled", True)
        for planned in plan:
            i = planned["iteration"]
            if iterations is not None and i not in iterations:
                continue
            first_micro = i % accumulate == 0
            last_micro = i % accumulate == accumulate - 1
            if first_micro:
                for opt in opt_list:
                    opt.zero_grad()
            x, y = _data(settings, i)
            out = model(x)
            it_rec: Dict[str, Any] = {"iteration": i, "passes": [], "output_dtype": str(out.dtype)}
            n_passes = len(planned["passes"])
            if settings["passes"] == "single" and n_passes != 1:
                raise UnsupportedScenario("'single' passes but the trace has several")
            for k, planned_pass in enumerate(planned["passes"]):
                loss_id = planned_pass["loss_id"]
                delay = bool(delay_non_final and not last_micro)
                if delay != planned_pass["delay_unscale"]:
                    raise UnsupportedScenario(f"iteration {i}: delay_unscale does not follow the settings")
                loss = loss_of(out, y, k)
                inj = _injection(settings, i, k, n_passes)
                if inj is not None and inj[1] == "loss":
                    loss = loss * inj[0]
                scale_used = _amp_state.loss_scalers[loss_id].loss_scale() if enabled else None
                with amp.scale_loss(loss, optimizers, loss_id=loss_id, delay_unscale=delay) as scaled:
                    scaled.backward(retain_graph=k < n_passes - 1)
                    if inj is not None and inj[1] != "loss":
                        if inj[1] not in named:
                            raise UnsupportedScenario(f"unknown injection target {inj[1]!r}")
                        named[inj[1]].grad.view(-1)[0] = inj[0]
                pass_rec = {
                    "loss_id": loss_id,
                    "loss": float(loss.detach()),
                    "scale_used": scale_used,
                    "yielded": {"dtype": str(scaled.dtype), "is_loss_object": scaled is loss,
                                "value": float(scaled.detach())},
                    "delay_unscale": delay,
                    "injected": _injected_record(settings, i, k, n_passes),
                }
                if enabled:
                    pass_rec["scalers_after"] = scaler_states()
                it_rec["passes"].append(pass_rec)
            step_called = last_micro and i not in no_step
            it_rec["step_called"] = step_called
            it_rec["step_was_patched_to_skip"] = [
                bool(getattr(getattr(opt, "_amp_stash", None), "already_patched", False)) for opt in opt_list
            ]
            mark = printed.mark()
            if step_called:
                for opt in opt_list:
                    opt.step()
            step_lines = printed.since(mark)
            it_rec["lines_printed_by_step"] = list(step_lines)
            if enabled:
                it_rec["scalers_after_step"] = scaler_states()
            it_rec["params"] = _param_record(model)
            it_rec["master_params"] = [[_flat(p) for p in amp.master_params(opt)] for opt in opt_list]
            record["iterations"].append(it_rec)
            if save_after is not None and i == save_after:
                record["checkpoint"] = _save_checkpoint(model, opt_list)
        record["model"], record["optimizers"] = model, opt_list
    record["stdout"] = printed
    record["final_amp_state_dict"] = dict(amp.state_dict()) if enabled else None
    return record


def _injected_record(settings: dict, i: int, k: int, n_passes: int) -> Optional[list]:
    inj = settings.get("injections") or {}
    for key in (f"{i}.{k}",) + ((str(i),) if n_passes == 1 or k == 0 else ()):
        if key in inj:
            return list(inj[key])
    return None


def _save_checkpoint(model, opt_list) -> dict:
    """torch.save / torch.load round trip of the three state dicts (as a script would)."""
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizers": [o.state_dict() for o in opt_list],
                "amp": amp.state_dict()}, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)
