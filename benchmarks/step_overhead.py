"""Time one training step through ``apexcompat.amp`` against the hand-written native
equivalent, on CPU, in the same run.

    python benchmarks/step_overhead.py [--reps 15] [--steps 20]

For a small MLP and a small CNN (with BatchNorm) and each opt level, shim and native steps
are timed in alternating repetitions (shim, native, shim, ...) and the medians compared.
The native equivalent of O1/O2/O3 is ``torch.autocast("cpu", float16)`` + ``GradScaler("cpu")``
on an fp32 model (what ``apexcompat-migrate`` emits); of O0 a plain fp32 step.  Also printed:
the weight memory of O2/O3 (fp16 model + fp32 masters) relative to O1, and the overflow
doctor's cost on clean steps: the same shim step with ``doctor.diagnose(True)`` and
``doctor.diagnose(False)`` in alternating repetitions (the skipped steps inside the timed
repetitions are counted, so that "clean" is checked, not assumed).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from apexcompat import _compat, amp, doctor  # noqa: E402
from apexcompat.amp._amp_state import reset_state  # noqa: E402

LEVELS = ("O0", "O1", "O2", "O3")


def make_mlp() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(128, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 10),
    )


def make_cnn() -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10),
    )


MODELS = {
    "mlp": (make_mlp, lambda g: torch.randn(64, 128, generator=g)),
    "cnn": (make_cnn, lambda g: torch.randn(16, 3, 16, 16, generator=g)),
}


def _batches(make_input, n: int):
    g = torch.Generator().manual_seed(0)
    return [(make_input(g), torch.randint(0, 10, (make_input(g).shape[0],), generator=g)) for _ in range(n)]


def shim_stepper(make_model, level: str):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    model, opt = amp.initialize(model, opt, opt_level=level, verbosity=0)

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()

    return step, model, opt


def native_stepper(make_model, level: str):
    torch.manual_seed(0)
    model = make_model()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    if level == "O0":

        def step(x, y):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()

        return step
    scaler = _compat.new_grad_scaler("cpu")

    def step(x, y):
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()

    return step


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
_clock = time.process_time


def _time(step, batches, steps: int) -> float:
    start = _clock()
    for i in range(steps):
        step(*batches[i % len(batches)])
    return (_clock() - start) / steps


def weight_bytes(model: torch.nn.Module, opt) -> int:
    seen = {}
    for t in list(model.parameters()) + list(amp.master_params(opt)):
        seen[t.data_ptr()] = t.numel() * t.element_size()
    return sum(seen.values())


def bench(name: str, level: str, reps: int, steps: int):
    make_model, make_input = MODELS[name]
    batches = _batches(make_input, 8)
    reset_state()
    shim, model, opt = shim_stepper(make_model, level)
    native = native_stepper(make_model, level)
    for _ in range(3):  # warm-up (lazy init, autocast caches, allocator)
        _time(shim, batches, steps)
        _time(native, batches, steps)
    shim_t, native_t = [], []
    for _ in range(reps):
        shim_t.append(_time(shim, batches, steps))
        native_t.append(_time(native, batches, steps))
    mem = weight_bytes(model, opt)
    reset_state()
    return statistics.median(shim_t), statistics.median(native_t), mem


def bench_doctor(name: str, level: str, reps: int, steps: int):
    """Median step time with the doctor on and off (same model, alternating reps), and the
    number of skipped steps seen while timing."""
    make_model, make_input = MODELS[name]
    batches = _batches(make_input, 8)
    reset_state()
    shim, _, _ = shim_stepper(make_model, level)
    for flag in (False, True, False):  # warm-up; early overflows calibrate the scale
        doctor.diagnose(flag)
        _time(shim, batches, steps)
    skipped_before = doctor.overflow_stats().skipped_steps
    on_t, off_t = [], []
    for _ in range(reps):
        doctor.diagnose(True)
        on_t.append(_time(shim, batches, steps))
        doctor.diagnose(False)
        off_t.append(_time(shim, batches, steps))
    skipped = doctor.overflow_stats().skipped_steps - skipped_before
    reset_state()
    return statistics.median(on_t), statistics.median(off_t), skipped


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=15)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1: stabler)")
    parser.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                        help="cpu: process CPU time (robust on a shared machine); wall: elapsed time")
    args = parser.parse_args(argv)
    global _clock
    _clock = CLOCKS[args.clock]
    torch.set_num_threads(args.threads)
    if not _compat.grad_scaler_supports_device("cpu") or not _compat.cpu_float16_autocast_supported():
        print("this torch has no CPU GradScaler / float16 autocast: nothing to compare")
        return 1
    print(f"torch {torch.__version__}, {args.threads} thread(s), {args.clock} clock, "
          f"{args.reps} reps x {args.steps} steps, medians of interleaved repetitions")
    print(f"{'model':5} {'level':5} {'shim ms':>9} {'native ms':>9} {'shim/native':>11} {'weights vs O1':>13}")
    for name in MODELS:
        mem = {}
        rows = []
        for level in LEVELS:
            s, n, mem[level] = bench(name, level, args.reps, args.steps)
            rows.append((level, s, n))
        for level, s, n in rows:
            rel = f"{mem[level] / mem['O1']:.2f}x" if level in ("O2", "O3") else ""
            print(f"{name:5} {level:5} {s * 1e3:9.3f} {n * 1e3:9.3f} {s / n:11.3f} {rel:>13}")
    print()
    print("overflow doctor on clean steps (APEXCOMPAT_DIAGNOSE=1 vs off), same shim step:")
    print(f"{'model':5} {'level':5} {'on ms':>9} {'off ms':>9} {'on/off':>8} {'skipped while timed':>20}")
    for name in MODELS:
        for level in ("O1", "O2"):
            on, off, skipped = bench_doctor(name, level, args.reps, args.steps)
            print(f"{name:5} {level:5} {on * 1e3:9.3f} {off * 1e3:9.3f} {on / off:8.3f} {skipped:>20}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
