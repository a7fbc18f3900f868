"""Plot the loss scale vs step of a real O2 training run through ``apexcompat.amp``.

The run is real: a small fp16 model (O2, fp32 master weights) whose gradients overflow fp16
whenever the loss scale is too large, so the scaler calibrates itself at the start, probes a
larger scale every 2000 clean steps and falls back, exactly as in a long real training run.
One corrupt batch (a loss of inf) is injected to show an isolated overflow.

Writes, into ``--out-dir`` (default ``docs/_generated``):
``scale_trajectory.png`` (the plot), ``scale_trajectory.inc`` (the worked trajectory as a
Markdown table, included by ``docs/shim/loss-scaler.md``) and ``scale_trajectory.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from pathlib import Path
from typing import Dict, List

import torch

from apexcompat import amp

OVERFLOW_LINE = "Gradient overflow.  Skipping step"


def run(steps: int, spike_step: int, seed: int = 0) -> List[Dict]:
    """Train for ``steps`` iterations; one record per step (scale after, skipped, printed)."""
    torch.manual_seed(seed)
    model = torch.nn.Linear(64, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-7)
    with contextlib.redirect_stdout(io.StringIO()):  # the initialize banner
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    scaler = amp._amp_state.loss_scalers[0]
    data = torch.randn(8, 256, 64)
    records = []
    for step in range(steps):
        scale_before = scaler.loss_scale()
        # d(loss)/d(bias) = 2560 per unit of scale: fp16 (max 65504) holds it up to scale 16
        loss = model(data[step % len(data)]).sum() * 10
        if step == spike_step:
            loss = loss * float("inf")  # a corrupt batch
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            optimizer.step()
        records.append({
            "step": step,
            "scale_before": scale_before,
            "scale": scaler.loss_scale(),
            "unskipped": scaler._unskipped,
            "printed": printed.getvalue().rstrip("\n"),
        })
    return records


def events(records: List[Dict]) -> List[Dict]:
    """The steps where something happened: a skip (overflow) or a change of scale."""
    out = []
    for r in records:
        skipped = OVERFLOW_LINE in r["printed"]
        if skipped or r["scale"] != r["scale_before"]:
            what = "overflow: step skipped, scale halved" if skipped else "2000 clean updates: scale doubled"
            out.append({**r, "event": what})
    return out


def markdown_table(records: List[Dict], spike_step: int, max_rows: int = 24) -> str:
    evs = events(records)
    skipped = sum(OVERFLOW_LINE in r["printed"] for r in records)
    lines = [
        f"The run: {len(records)} steps, {skipped} of them skipped. The corrupt batch is step "
        f"{spike_step}. Every step where the scale changed or a step was skipped:",
        "",
        "| step | what happened | scale used | scale after | printed by `optimizer.step()` |",
        "| ---: | --- | ---: | ---: | --- |",
    ]
    shown = evs if len(evs) <= max_rows else evs[: max_rows - 4] + evs[-4:]
    for i, e in enumerate(shown):
        if len(evs) > max_rows and i == max_rows - 4:
            lines.append("| … | | | | |")
        printed = f"`{e['printed']}`" if e["printed"] else ""
        lines.append(f"| {e['step']} | {e['event']} | {e['scale_before']} | {e['scale']} | {printed} |")
    return "\n".join(lines) + "\n"


def plot(records: List[Dict], path: Path, spike_step: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [r["step"] for r in records]
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    ax.step(steps, [r["scale"] for r in records], where="post", color="#2563eb", label="loss scale")
    skipped = [r for r in records if OVERFLOW_LINE in r["printed"]]
    ax.scatter([r["step"] for r in skipped], [r["scale_before"] for r in skipped],
               marker="x", color="#dc2626", zorder=3, label="overflow: step skipped")
    chosen = {}  # kind -> event: the first of each kind, the last growth
    for e in events(records):
        skipped = OVERFLOW_LINE in e["printed"]
        if skipped and e["step"] == spike_step:
            kind = "spike"
        elif skipped and e["step"] > 0 and e["scale_before"] > records[e["step"] - 1]["scale_before"]:
            kind = "probe"
        elif skipped:
            kind = "calibration"
        else:
            kind = "growth"
        if kind == "growth" or kind not in chosen:
            chosen[kind] = e
    placement = {  # label, text position as (x offset, y factor of the scale)
        "calibration": ("calibration: halve\nuntil the gradients fit", 250, None),
        "probe": ("larger scale tried after\n2000 clean steps: overflows", 0, 64),
        "spike": ("corrupt batch", 350, 8),
        "growth": ("2000 clean steps:\nscale doubled", -300, 16),
    }
    for kind, e in chosen.items():
        label, dx, factor = placement[kind]
        y = 2.0 ** 11 if factor is None else e["scale"] * factor
        ax.annotate(label, xy=(e["step"], e["scale"]), xytext=(e["step"] + dx, y), fontsize=8,
                    ha="left" if kind == "calibration" else "center",
                    arrowprops={"arrowstyle": "->", "color": "#6b7280"})
    ax.set_yscale("log", base=2)
    ax.set_xlabel("step")
    ax.set_ylabel("loss scale")
    ax.set_title("apexcompat.amp, O2: loss scale vs step (real run)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper right")
    fig.savefig(path, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--spike-step", type=int, default=2600)
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parents[1] / "_generated")
    parser.add_argument("--no-plot", action="store_true", help="skip the PNG (no matplotlib needed)")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    records = run(args.steps, args.spike_step)
    (args.out_dir / "scale_trajectory.json").write_text(json.dumps(records), encoding="utf-8")
    (args.out_dir / "scale_trajectory.inc").write_text(markdown_table(records, args.spike_step), encoding="utf-8")
    if not args.no_plot:
        plot(records, args.out_dir / "scale_trajectory.png", args.spike_step)
    print(f"scale trajectory: {len(records)} steps, {len(events(records))} events -> {args.out_dir}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
