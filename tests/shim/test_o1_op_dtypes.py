"""Replay of ``api/O1_op_dtypes``: the dtype every probed op gives after an O1 initialize.

Each key of the trace is an expression over ``f16`` / ``f32`` tensors (``"torch.exp(f16)"``,
``"f16 ** 2"``, ``"torch.cat([f16,f32])"``, ...); keys that need particular shapes
(``"F.conv2d"``, ``"torch.bmm"``, ...) are built by op name.  Every entry of every variant of
the file is evaluated, outside any ``forward`` (apex's O1 scope is the whole thread).

apexcompat runs O1 on ``torch.autocast``; where autocast has no policy equivalent to apex's
the result legitimately differs.  Those differences are listed below by op name with the
reason (spec §12, ``docs`` behaviour differences); every other entry must match apex.  The
listed device-independent differences are also asserted to still differ, so the list cannot
silently rot.
"""

from __future__ import annotations

import re
import warnings
from typing import Any, Callable, Dict, Optional

import pytest
import torch
import torch.nn.functional as F

from apexcompat import amp
from apexcompat.amp import lists
from apexcompat import _compat
from conftest import golden_files, golden_params, load_golden

# --- known differences, by op name (apex spelling) ------------------------------------------

_APEX_FP32 = set(lists.FP32_FUNCS_FUNCTIONAL) | set(lists.FP32_FUNCS_TENSOR)
_NATIVE_FP32 = set(lists.AUTOCAST_FP32_CUDA)

#: ops autocast runs in half precision that apex's CPU-recorded trace has in float32 (on a
#: CUDA build apex put the bmm family on its fp16 list too; einsum it never touched).
NATIVE_HALF = {"bmm": "autocast fp16 list (apex: only with CUDA >= 9.1; trace is from a CPU build)",
               "baddbmm": "as bmm", "addbmm": "as bmm",
               "einsum": "autocast fp16 list, untouched by apex"}

#: apex fp32-list ops that autocast leaves in their input dtype on every device.
NO_NATIVE_FP32 = {name: "apex fp32 list; no autocast fp32 policy" for name in _APEX_FP32 - _NATIVE_FP32}
NO_NATIVE_FP32["cpu"] = "apex's Tensor.cpu returned fp32 for fp16 CUDA tensors; torch keeps fp16"

#: apex errors with no native counterpart.
APEX_ONLY_ERRORS = {
    "binary_cross_entropy": "apex banned it for fp16 inputs only; CUDA autocast bans it for any "
                            "input with its own error, CPU autocast computes it in fp32",
}

#: CUDA autocast runs these in fp32 as apex did; CPU float16 autocast keeps them in fp16
#: (closed by the opt-in CPU fix-ups, apexcompat._autocast.set_cpu_fp32_fixups).
CPU_ONLY_DIFFERENCES = {name: "CPU fp16 autocast keeps fp16 (CUDA: fp32)" for name in lists.CPU_KEPT_HALF}
#: apex promote ops that CUDA autocast promotes but CPU autocast does not (mixed fp16/fp32
#: inputs raise a dtype-mismatch RuntimeError on CPU).
CPU_ONLY_DIFFERENCES.update({name: "CPU autocast has no promote policy for it (CUDA: promotes)"
                      for name in ("dot", "vdot", "cross", "bilinear", "tensordot")})
#: apex fp16-list ops that CUDA autocast runs in fp16 but CPU autocast leaves in fp32.
CPU_ONLY_DIFFERENCES.update({name: "CPU autocast has no fp16 policy for it (CUDA: fp16)"
                      for name in ("mv", "addmv", "addr")})

_PREFIX_DISABLED = "inside amp.disable_casts():"
# infix operators in trace keys -> the op they call (longest symbols first)
_OPERATORS = ((" ** ", "pow"), (" == ", "eq"), (" != ", "ne"), (" <= ", "le"), (" >= ", "ge"),
              (" @ ", "matmul"), (" + ", "add"), (" - ", "sub"), (" * ", "mul"), (" / ", "div"),
              (" < ", "lt"), (" > ", "gt"))


def op_name(key: str) -> str:
    """The op a trace key probes, in apex's spelling (``"f16 ** 2"`` -> ``"pow"``)."""
    expr = key[len(_PREFIX_DISABLED):].strip() if key.startswith(_PREFIX_DISABLED) else key
    match = re.match(r"^(?:torch|F|torch\.nn\.functional)\.(\w+)", expr) or re.match(r"^f(?:16|32)\w*\.(\w+)\(", expr)
    if match:
        return match.group(1)
    for symbol, name in _OPERATORS:
        if symbol in expr:
            return name
    return expr


def known_difference(key: str, device_type: str) -> Optional[str]:
    """Why ``key`` is expected to differ from apex on ``device_type`` (None: must match)."""
    if key.startswith(_PREFIX_DISABLED):
        return None
    name = op_name(key)
    if name.endswith("_") and not name.startswith("_") and name[:-1] in _APEX_FP32:
        return "apex's in-place error for fp32-list ops on fp16 has no native counterpart"
    if name == "binary_cross_entropy" and device_type != "cuda" and "f16" not in key:
        return None  # fp32 inputs: fine under apex and CPU autocast alike
    for table in (NATIVE_HALF, NO_NATIVE_FP32, APEX_ONLY_ERRORS):
        if name in table:
            return table[name]
    if device_type == "cpu" and name in CPU_ONLY_DIFFERENCES:
        return CPU_ONLY_DIFFERENCES[name]
    return None


# --- probes ----------------------------------------------------------------------------------


def _operands(device: str) -> Dict[str, Any]:
    torch.manual_seed(0)
    return {
        "torch": torch,
        "F": F,
        "f16": (torch.rand(4, 4, device=device) + 0.5).half(),
        "f32": torch.rand(4, 4, device=device) + 0.5,
        "f32w": torch.nn.Parameter(torch.rand(4, 4, device=device)),
    }


def _shaped_probe(name: str, ns: Dict[str, Any], device: str) -> Optional[Callable[[], Any]]:
    """Probes for trace keys that name an op without arguments, or need special shapes."""
    def t(*shape):
        return torch.rand(*shape, device=device)
    f16 = ns["f16"]
    conv = re.match(r"^conv(_transpose)?([123])d$", name)
    if conv:
        dims = int(conv.group(2))
        x, w = t(1, 2, *([5] * dims)), t(2, 2, *([3] * dims))
        return lambda: getattr(F, name)(x, w)
    table = {
        "bmm": lambda: torch.bmm(t(2, 3, 3), t(2, 3, 3)),
        "baddbmm": lambda: torch.baddbmm(t(2, 3, 3), t(2, 3, 3), t(2, 3, 3)),
        "addbmm": lambda: torch.addbmm(t(3, 3), t(2, 3, 3), t(2, 3, 3)),
        "einsum": lambda: torch.einsum("ij,jk->ik", t(3, 3), t(3, 3)),
        "prelu": lambda: torch.prelu(t(2, 3), torch.tensor([0.25], device=device)),
        "addmm": lambda: torch.addmm(t(3, 3), t(3, 3), t(3, 3)),
        "mm": lambda: torch.mm(t(3, 3), t(3, 3)),
        "matmul": lambda: torch.matmul(t(3, 3), t(3, 3)),
        "linear": lambda: F.linear(t(2, 3), t(4, 3)),
        "mv": lambda: torch.mv(t(3, 3), t(3)),
        "addmv": lambda: torch.addmv(t(3), t(3, 3), t(3)),
        "addr": lambda: torch.addr(t(3, 3), t(3), t(3)),
        "conv_tbc": lambda: torch.conv_tbc(t(5, 1, 2), t(3, 2, 4), t(4)),
        "layer_norm": lambda: F.layer_norm(f16, (4,)),
        "group_norm": lambda: F.group_norm(f16[None], 2),
        "cross_entropy": lambda: F.cross_entropy(f16, torch.tensor([0, 1, 2, 3], device=device)),
        "nll_loss": lambda: F.nll_loss(f16, torch.tensor([0, 1, 2, 3], device=device)),
        "interpolate": lambda: F.interpolate(f16[None], scale_factor=2.0),
        "binary_cross_entropy": None,  # built from the key's operand below
    }
    return table.get(name)


def _eval_key(expr: str, ns: Dict[str, Any], device: str) -> Any:
    name = op_name(expr)
    if name == "binary_cross_entropy":
        operand = ns["f16"] if "f16" in expr else ns["f32"]
        inputs = torch.sigmoid(operand)
        return F.binary_cross_entropy(inputs, torch.rand_like(inputs))
    if re.match(r"^f(?:16|32)\.\w+_\(", expr):  # in-place: work on copies
        ns = dict(ns, f16=ns["f16"].clone(), f32=ns["f32"].clone())
    if not expr.endswith(")") and not any(symbol in expr for symbol, _ in _OPERATORS):
        probe = _shaped_probe(name, ns, device)
        if probe is None:
            raise LookupError(f"no probe for trace key {expr!r}")
        return probe()
    probe = _shaped_probe(name, ns, device) if name in {"layer_norm", "group_norm", "cross_entropy",
                                                       "nll_loss", "interpolate"} else None
    if probe is not None:
        return probe()
    return _eval_with_shapes(expr, ns)


#: operand shapes tried in turn for expression keys (2-D first; 1-D for dot/outer-like ops,
#: 3-D for batched matmuls, 3x3 for cross).  Errors apex recorded are errors for every shape.
_SHAPES = ((4, 4), (4,), (2, 4, 4), (3, 3))


def _eval_with_shapes(expr: str, ns: Dict[str, Any]) -> Any:
    first_error: Optional[Exception] = None
    for shape in _SHAPES:
        scope = dict(ns)
        if shape != _SHAPES[0]:
            scope.update(
                f16=(ns["f16"].new_empty(shape).uniform_() + 0.5),
                f32=(ns["f32"].new_empty(shape).uniform_() + 0.5),
                f32w=torch.nn.Parameter(ns["f32"].new_empty(shape).uniform_()),
            )
        try:
            return _eval_expr(expr, scope)
        except (RuntimeError, IndexError, ValueError) as exc:
            first_error = first_error or exc
    assert first_error is not None
    raise first_error


def _eval_expr(expr: str, ns: Dict[str, Any]) -> Any:
    try:
        return eval(expr, {"__builtins__": {}}, ns)  # noqa: S307  (trace keys are expressions)
    except TypeError:
        # reductions/softmaxes that need a dim: f(x) -> f(x, -1)
        call = re.match(r"^(.*)\((f16|f32)\)$", expr)
        if call is None:
            raise
        return eval(f"{call.group(1)}({call.group(2)}, -1)", {"__builtins__": {}}, ns)  # noqa: S307


def probe(key: str, device: str) -> Any:
    """What ``key`` gives now: ``"torch.float16"`` etc., or ``{"error": {type, message}}``."""
    ns = _operands(device)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if key.startswith(_PREFIX_DISABLED):
                with amp.disable_casts():
                    out = _eval_key(key[len(_PREFIX_DISABLED):].strip(), ns, device)
            else:
                out = _eval_key(key, ns, device)
    except LookupError:
        raise
    except Exception as exc:  # noqa: BLE001  (the trace records errors as data)
        return {"error": {"type": type(exc).__name__, "message": str(exc)}}
    return str(out.dtype) if isinstance(out, torch.Tensor) else repr(out)


def initialize_o1(device: str) -> torch.nn.Module:
    model = torch.nn.Linear(4, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    return model


def replay(trace: dict, device: str):
    """(mismatches, still_differing, documented) over every entry of the trace."""
    initialize_o1(device)
    mismatches, not_differing, documented = [], [], []
    for key, expected in trace["result"].items():
        got = probe(key, device)
        reason = known_difference(key, device)
        if reason is None:
            if got != expected:
                mismatches.append((key, expected, got))
        else:
            documented.append(key)
            # CPU autocast's lists grow between torch releases: an op that a newer torch
            # runs in fp32 on CPU too is welcome, not a stale entry.
            if got == expected and reason not in CPU_ONLY_DIFFERENCES.values():
                not_differing.append((key, reason))
    return mismatches, not_differing, documented


# --- tests -----------------------------------------------------------------------------------

#: every variant of the trace (held-back ones carry the same name prefix)
OP_DTYPE_TRACES = {name for name in golden_files("api") if name.startswith("O1_op_dtypes")}

_needs_cpu_fp16 = pytest.mark.skipif(
    not _compat.cpu_float16_autocast_supported(),
    reason="CPU float16 autocast needs torch >= 2.2",
)


@_needs_cpu_fp16
@golden_params("api", names=OP_DTYPE_TRACES)
def test_o1_op_dtypes_cpu(golden_path):
    trace = load_golden("api", golden_path.stem)
    mismatches, not_differing, documented = replay(trace, "cpu")
    assert mismatches == [], "ops whose O1 dtype differs from apex on CPU"
    assert not_differing == [], "listed as known differences but now equal to apex: update the list"
    # the comparable set is most of the trace, not a token few
    assert len(documented) < len(trace["result"]) / 2


@_needs_cpu_fp16
def test_cpu_fp32_fixups_close_the_cpu_gap(monkeypatch):
    """With the opt-in fix-ups, every op CPU autocast keeps in fp16 gets apex's fp32."""
    from apexcompat import _autocast

    monkeypatch.setattr(_autocast, "_cpu_fp32_fixups", True)
    trace = load_golden("api", "O1_op_dtypes")
    initialize_o1("cpu")
    kept = [k for k in trace["result"] if op_name(k) in lists.CPU_KEPT_HALF]
    assert len(kept) >= 9
    for key in kept:
        assert probe(key, "cpu") == trace["result"][key], key
    # apex's fp16 and promote policies where CPU autocast has none
    assert probe("torch.mv", "cpu") == "torch.float16"
    assert probe("torch.addr", "cpu") == "torch.float16"
    assert probe("torch.dot(f16,f32)", "cpu") == "torch.float32"
    assert probe("torch.bilinear(f16,f32,f32w)", "cpu") == "torch.float32"
    # ops apex left alone stay half
    assert probe("torch.tanh(f16)", "cpu") == "torch.float16"
    assert probe("torch.mean(f16)", "cpu") == "torch.float16"


def test_op_name_parsing():
    assert op_name("f16 ** 2") == "pow"
    assert op_name("f16.exp()") == "exp"
    assert op_name("F.log_softmax(f16)") == "log_softmax"
    assert op_name("torch.cat([f16,f32])") == "cat"
    assert op_name("f32 @ f32") == "matmul"
    assert op_name("inside amp.disable_casts(): F.linear(f32,f32w)") == "linear"
    assert known_difference("f16.exp_()", "cuda") is not None
    assert known_difference("f16.add_(f32)", "cuda") is None
    assert known_difference("torch.sum(f16)", "cpu") is not None
    assert known_difference("torch.sum(f16)", "cuda") is None


def test_expression_keys_get_operands_of_a_shape_the_op_accepts():
    initialize_o1("cpu")
    assert probe("torch.dot(f32,f32)", "cpu") == "torch.float32"  # 1-D
    assert probe("torch.bmm(f32,f32)", "cpu") == "torch.float16"  # 3-D
    assert probe("torch.cross(f32,f32)", "cpu") == "torch.float32"  # 3x3
    assert probe("torch.softmax(f32)", "cpu") == "torch.float32"  # needs a dim
    assert probe("f16 == f32", "cpu") == "torch.bool"  # operators
    assert probe("torch.addr", "cpu") in {"torch.float32", "torch.float16"}  # bare name


def test_unprobeable_key_is_reported_not_skipped():
    with pytest.raises(LookupError):
        probe("torch.some_future_op", "cpu")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
@golden_params("api", names=OP_DTYPE_TRACES)
def test_o1_op_dtypes_cuda(golden_path):
    trace = load_golden("api", golden_path.stem)
    mismatches, not_differing, _ = replay(trace, "cuda")
    assert mismatches == []
    assert not_differing == []


def test_cpu_fixup_names_all_exist():
    namespaces = {"torch.nn.functional": F, "torch": torch, "torch.Tensor": torch.Tensor}
    tables = (lists.CPU_FP32_FIXUPS, lists.CPU_HALF_FIXUPS, lists.CPU_PROMOTE_FIXUPS)
    missing = [f"{ns}.{name}" for table in tables for ns, names in table.items()
               for name in names if not hasattr(namespaces[ns], name)]
    assert missing == []


@pytest.mark.parametrize("value, enabled", [("1", True), ("true", True), ("ON", True), ("0", False), ("", False)])
def test_cpu_fixups_environment_flag(monkeypatch, value, enabled):
    from apexcompat import _autocast

    monkeypatch.setenv("APEXCOMPAT_CPU_FP32_FIXUPS", value)
    assert _autocast._env_flag("APEXCOMPAT_CPU_FP32_FIXUPS") is enabled
