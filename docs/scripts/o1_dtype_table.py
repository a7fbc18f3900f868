"""Measure the result dtype of apex's O1 probe ops through ``apexcompat.amp`` and render the
comparison table with apex's recorded results.

``python o1_dtype_table.py measure --device cpu --out cpu.json`` runs every probe of the
golden trace ``api/O1_op_dtypes`` through ``apexcompat.amp.initialize(..., opt_level="O1")``
on a device and writes ``{probe: dtype or "Error: message"}``.
``python o1_dtype_table.py table --column "CPU=cpu.json" [--column ...] --out table.inc`` writes
the Markdown table included by ``docs/differences.md``.  The CUDA column comes from a
measurement file committed under ``docs/data/`` (this project's CI has no GPU).
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple

REPO_ROOT = Path(__file__).resolve().parents[2]
GOLDEN = [
    REPO_ROOT.parent / "shared" / "golden" / "api" / "O1_op_dtypes.json",
    REPO_ROOT / "tests" / "golden" / "api" / "O1_op_dtypes.json",
]


def _probes(device: str) -> Dict[str, Callable[[], object]]:
    """Probe name (as in the golden trace) -> a thunk computing its result."""
    import torch
    import torch.nn.functional as F

    from apexcompat import amp

    def t(*shape, dtype=torch.float32):
        return torch.randn(*shape, device=device).to(dtype)

    f16 = lambda *s: t(*s, dtype=torch.float16)  # noqa: E731
    prob = lambda: torch.rand(2, 4, device=device)  # noqa: E731
    w = torch.nn.Parameter(t(4, 4))
    conv_w = torch.nn.Parameter(t(2, 3, 3, 3))

    def in_disable_casts():
        with amp.disable_casts():
            return F.linear(t(2, 4), w)

    return {
        "F.linear(f32,f32w)": lambda: F.linear(t(2, 4), w),
        "F.conv2d": lambda: F.conv2d(t(1, 3, 5, 5), conv_w),
        "torch.mm(f32,f32)": lambda: torch.mm(t(2, 4), t(4, 3)),
        "torch.matmul(f32,f32)": lambda: torch.matmul(t(2, 4), t(4, 3)),
        "f32 @ f32": lambda: t(2, 4) @ t(4, 3),
        "torch.addmm": lambda: torch.addmm(t(2, 3), t(2, 4), t(4, 3)),
        "torch.bmm": lambda: torch.bmm(t(2, 2, 4), t(2, 4, 3)),
        "torch.prelu": lambda: torch.prelu(t(2, 3), t(1)),
        "torch.einsum": lambda: torch.einsum("ij,jk->ik", t(2, 4), t(4, 3)),
        "F.softmax(f16)": lambda: F.softmax(f16(2, 4), dim=-1),
        "F.log_softmax(f16)": lambda: F.log_softmax(f16(2, 4), dim=-1),
        "F.layer_norm(f16)": lambda: F.layer_norm(f16(2, 4), (4,)),
        "F.gelu(f16)": lambda: F.gelu(f16(2, 4)),
        "F.interpolate(f16)": lambda: F.interpolate(f16(1, 1, 4), scale_factor=2.0),
        "F.mse_loss(f16,f16)": lambda: F.mse_loss(f16(2, 4), f16(2, 4)),
        "F.cross_entropy(f16)": lambda: F.cross_entropy(f16(2, 4), torch.tensor([0, 1], device=device)),
        "F.binary_cross_entropy(f32)": lambda: F.binary_cross_entropy(prob(), prob()),
        "F.binary_cross_entropy(f16)": lambda: F.binary_cross_entropy(prob().half(), prob().half()),
        "torch.exp(f16)": lambda: torch.exp(f16(4)),
        "f16.exp()": lambda: f16(4).exp(),
        "torch.log(f16)": lambda: torch.log(f16(4).abs() + 1),
        "torch.sum(f16)": lambda: torch.sum(f16(4)),
        "f16.sum()": lambda: f16(4).sum(),
        "f16.pow(2)": lambda: f16(4).pow(2),
        "f16 ** 2": lambda: f16(4) ** 2,
        "torch.cumsum(f16)": lambda: torch.cumsum(f16(4), dim=0),
        "torch.norm(f16)": lambda: torch.norm(f16(4)),
        "torch.var(f16)": lambda: torch.var(f16(4)),
        "torch.mean(f16)": lambda: torch.mean(f16(4)),
        "F.relu(f16)": lambda: F.relu(f16(4)),
        "torch.sigmoid(f16)": lambda: torch.sigmoid(f16(4)),
        "torch.tanh(f16)": lambda: torch.tanh(f16(4)),
        "f16 + f32": lambda: f16(4) + t(4),
        "f16 * f32": lambda: f16(4) * t(4),
        "torch.add(f16,f32)": lambda: torch.add(f16(4), t(4)),
        "torch.cat([f16,f32])": lambda: torch.cat([f16(4), t(4)]),
        "torch.stack([f16,f32])": lambda: torch.stack([f16(4), t(4)]),
        "torch.addcmul(f16,f32,f32)": lambda: torch.addcmul(f16(4), t(4), t(4)),
        "f16.add_(f32)": lambda: f16(4).add_(t(4)),
        "f32.add_(f16)": lambda: t(4).add_(f16(4)),
        "f16.exp_()": lambda: f16(4).exp_(),
        "f16.cpu()": lambda: f16(4).cpu(),
        "inside amp.disable_casts(): F.linear(f32,f32w)": in_disable_casts,
    }


def measure(device: str) -> Dict[str, object]:
    import torch

    from apexcompat import amp

    model = torch.nn.Linear(4, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    results: Dict[str, object] = {}
    for name, thunk in _probes(device).items():
        try:
            results[name] = str(thunk().dtype)
        except Exception as err:  # the probe's outcome is the error
            results[name] = f"{type(err).__name__}: {str(err).strip().splitlines()[0]}"
    return {
        "results": results,
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name() if device == "cuda" else platform.machine(),
    }


def _apex_results() -> Dict[str, object]:
    for path in GOLDEN:
        if path.exists():
            return json.loads(path.read_text(encoding="utf-8"))["result"]
    raise FileNotFoundError("golden trace api/O1_op_dtypes.json not found")


def _cell(value) -> str:
    if value is None:
        return "not measured"
    if isinstance(value, dict):  # golden error record
        value = f"{value['error']['type']}"
    text = str(value).replace("torch.", "")
    if ":" in text:  # an error: keep the type only, the message is in the prose
        text = text.split(":", 1)[0]
    return text.replace("|", "\\|")


def table(columns: List[Tuple[str, Optional[dict]]]) -> str:
    """The Markdown table: apex's recorded dtype, then one column per measurement
    (``(label, measurement or None)``; ``None`` renders "not measured")."""
    apex = _apex_results()
    lines = []
    for label, data in columns:
        if data:
            when = f", {data['measured']}" if data.get("measured") else ""
            lines.append(f"- {label}: torch {data['torch']} on {data['device']}{when}.")
        else:
            lines.append(f"- {label}: not measured.")
    lines += [
        "",
        "A ✓ marks agreement with apex; `Error` cells name the exception type. † apex's trace "
        "comes from a CPU build of torch, on which apex left `bmm` off its fp16 list; on CUDA "
        "builds apex ran `bmm` in float16, as autocast does.",
        "",
        "| probe | apex O1 | " + " | ".join(label for label, _ in columns) + " |",
        "| --- | --- | " + " | ".join("---" for _ in columns) + " |",
    ]
    for name in sorted(apex, key=str.lower):
        ref = _cell(apex[name])
        row = [f"`{name}`", ref + ("†" if name == "torch.bmm" else "")]
        for _, data in columns:
            cell = _cell(data["results"].get(name) if data else None)
            row.append(cell + (" ✓" if data and cell == ref else ""))
        lines.append("| " + " | ".join(row) + " |")
    agree = lambda res: sum(_cell(res.get(n)) == _cell(apex[n]) for n in apex)  # noqa: E731
    counts = [f"{label} {agree(data['results'])}/{len(apex)}" for label, data in columns if data]
    lines += ["", "Agreement with apex's recorded dtypes: " + ", ".join(counts) + "."]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure")
    m.add_argument("--device", default="cpu")
    m.add_argument("--cpu-fixups", action="store_true", help="opt in to apexcompat's CPU float32 fix-ups")
    m.add_argument("--out", type=Path, required=True)
    tb = sub.add_parser("table")
    tb.add_argument("--column", action="append", default=[], metavar="LABEL=FILE",
                    help="a measurement column (a missing FILE renders 'not measured')")
    tb.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.cmd == "measure":
        if args.cpu_fixups:
            from apexcompat import _autocast

            _autocast.set_cpu_fp32_fixups(True)
        args.out.write_text(json.dumps(measure(args.device), indent=1, sort_keys=True), encoding="utf-8")
    else:
        columns = []
        for spec in args.column:
            label, _, path = spec.partition("=")
            file = Path(path)
            columns.append((label, json.loads(file.read_text(encoding="utf-8")) if file.exists() else None))
        args.out.write_text(table(columns), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
