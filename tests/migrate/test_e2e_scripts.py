"""End to end: realistic apex training scripts, migrated by the real CLI, trained on the CPU.

The scripts in e2e/scripts/ are written the way apex users wrote them (the issue's seven
layouts, plus initialize and scale_loss in two files).  Once per module:

1. the ORIGINAL scripts run through e2e/fake_apex (``apex.amp`` = apexcompat.amp, a thin apex
   DDP over torch's, a small FP16_Optimizer test double): full runs at the script's amp level
   and at O0, and half runs that write apex-format checkpoints (``amp.state_dict()``);
2. a copy of the directory is migrated with ``apexcompat-migrate --to native`` and another with
   ``--to shim`` (subprocess, in place), then migrated a second time (must be a no-op);
3. the migrated scripts run (full, and resumed from the original's checkpoints) with ``apex``
   (and for native ``apexcompat`` too) made unimportable; the native ones once more with
   ``autocast/GradScaler("cuda")`` mapped to the CPU, so that the migrated scaler calls
   (scale, unscale_, step, update, loading apex scaler state) really execute, enabled, as on
   a CUDA host (torch >= 2.3, which has a CPU GradScaler).

Runs share two subprocesses (e2e/runner.py: the original then the shim runs, and the native runs
in a process that never imports apexcompat), so torch is imported twice, not once per run.

Tolerances (measured figures: ``-s`` prints them in the last test):
* native on a CPU host is plain fp32 (``autocast("cuda")`` and ``GradScaler("cuda")`` disable
  themselves), the same arithmetic as the original at O0 (loss scale 1): compared with TIGHT
  (measured: bitwise equal);
* the original at O1/O2 runs its matmuls in fp16 on the CPU (CPU fp16 autocast, or fp16 weights
  at O2); fp16 rounds at 2**-11 relative and a few dozen SGD/Adam steps carry that into the
  weights, so an fp32 run vs an fp16 run is compared as ||a - b|| / ||b|| over all weights
  <= FP16_REL (measured <= 2.0e-3; the GAN's adversarial Adam updates 8.6e-3, allowed 3e-2).
  A real migration mistake moves the weights far more (measured: dropping the unscale_ before
  clipping in s5, 6e-1; a load_scaler_state that loads nothing, in s4's CUDA-mapped resume,
  1.1e-1; dropping scaler.update() makes the CUDA-mapped run fail);
* native with CUDA amp mapped to the CPU uses the fp16 CPU autocast the shim's O1 uses:
  CUDA_SIM_REL (measured <= 2.8e-4, bitwise for s2 and s3; O2/FP16_Optimizer: FP16_REL);
* the shim target runs the same apexcompat code as the original through fake apex: TIGHT
  (measured: bitwise), except resuming O2 (apex rebuilds fp32 master weights from the fp16
  model on load: measured 3.2e-4) and FP16_Optimizer, which both targets rewrite to native;
* s8 spreads amp over two files: the cross-file plan threads the GradScaler from
  s8_multi_file.py into s8_engine.train_one_epoch, so both come out native and are compared
  like every other native output.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import runpy
import shutil
import socket
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Dict, List, Set

import pytest

torch = pytest.importorskip("torch")

E2E = Path(__file__).resolve().parent / "e2e"
SCRIPTS_DIR = E2E / "scripts"
FAKE_APEX = E2E / "fake_apex"
RUNNER = E2E / "runner.py"

TIGHT = dict(rtol=1e-5, atol=1e-6)
# Native output run with autocast/GradScaler("cuda") mapped to the CPU (runner.py): the same fp16
# CPU autocast the shim's O1 uses, so it tracks the original at O1 closely (measured <= 2.8e-4;
# scripts with fp16 weights in the original, O2 and FP16_Optimizer, use FP16_REL).
CUDA_SIM_REL = 2e-3
CUDA_AMP_ON_CPU = hasattr(torch.amp, "GradScaler")  # a CPU GradScaler: torch >= 2.3
FP16_REL = 1e-2  # ||fp32 run - fp16 run|| / ||fp16 run||, all weights together; measured <= 2.0e-3

# Per script: the arguments of its amp run and of its O0 (fp32) run, the number of steps of a
# full run (even: the checkpoint is written half way), the metric that must decrease, and
# whether it writes/reads checkpoints.
SCRIPTS: Dict[str, dict] = {
    "s1_main_train": dict(amp=["--fp16"], fp32=["--fp16", "--opt-level", "O0"], steps=24, metric="loss", ckpt=True),
    "s2_class_trainer": dict(amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", ckpt=True),
    # adversarial updates with Adam amplify rounding differences: measured 8.6e-3
    "s3_gan": dict(amp=[], fp32=["--opt_level", "O0"], steps=30, metric="distance", ckpt=True, fp16_rel=3e-2),
    # a summed loss: at O1 the first optimizer steps overflow and are skipped (the scale calibrates
    # down), which a CPU-host native run (fp32, scaler off) cannot do: its amp-level comparison
    # is made by the CUDA-mapped run, fresh and resumed from a checkpoint with a lowered scale
    "s4_accumulate": dict(amp=[], fp32=["--opt-level", "O0"], steps=48, metric="loss", ckpt=True, overflows=True),
    # O2: on resume apex rebuilds the fp32 master weights from the fp16 model weights
    "s5_clip_checkpoint": dict(amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", ckpt=True, o2=True),
    "s6_apex_ddp": dict(amp=[], fp32=["--opt-level", "O0"], steps=24, metric="loss", ckpt=True, ddp=True),
    # no apex.amp: --to shim rewrites FP16_Optimizer to native too (the fake one is the baseline)
    "s7_fp16_optimizer": dict(amp=["--fp16"], fp32=[], steps=24, metric="loss", ckpt=False, no_amp=True),
    # initialize here, scale_loss in s8_engine.py: the GradScaler is passed across the files
    "s8_multi_file": dict(amp=["--amp"], fp32=["--amp", "--opt-level", "O0"], steps=24, metric="loss", ckpt=False),
}
_KEEPS_SHIM = [cfg.get("native_keeps_shim", False) for cfg in SCRIPTS.values()]
assert _KEEPS_SHIM == sorted(_KEEPS_SHIM), "scripts whose native output keeps apexcompat must come last"
# Every file the migration rewrites: the scripts and the modules they import.
MIGRATED_FILES = [*SCRIPTS, "s8_engine"]
TARGETS = ("native", "shim")

# Findings that legitimately need a human after a native migration (code -> scripts); a
# native result may keep an apexcompat import only where such a finding says why.
# (s2_class_trainer's loss_scale and opt level both come from flags: the GradScaler reads the
# scale as apex did, None taking the level's default, so nothing is left to a human.)
EXPECTED_MANUAL: Dict[str, Dict[str, List[str]]] = {
    "native": {},
    "shim": {},
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: the ports handed to DDP runs so far (``_new_port``)
_PORTS_GIVEN: Set[int] = set()


def _new_port() -> int:
    """A free port no run of this session got before.  Each DDP run needs one of its own: in a
    runner process, the eighth gloo run on one port hung when its ``main()`` returned (every
    time, reproduced with the s6 runs alone; with a port per run, 48 runs went through)."""
    port = _free_port()
    while port in _PORTS_GIVEN:
        port = _free_port()
    _PORTS_GIVEN.add(port)
    return port


def _cli() -> List[str]:
    script = Path(sys.executable).with_name("apexcompat-migrate")
    return [str(script)] if script.exists() else [sys.executable, "-m", "migrate"]


def _migrate(directory: Path, target: str) -> dict:
    proc = subprocess.run(
        [*_cli(), "--to", target, "--allow-no-vcs", "--output-format", "json", "-j", "1", "."],
        cwd=directory, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    report["returncode"] = proc.returncode
    return report


def _snapshot(directory: Path) -> Dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(directory.glob("*.py"))}


def _plan_runs(group: str, scripts_dir: Path, work: Path, ddp_env: Dict[str, str]) -> List[dict]:
    """The runs of one group: 'orig' (fake apex), 'native' or 'shim' (migrated copies)."""
    sys_path = [str(FAKE_APEX)] if group == "orig" else []
    runs = []

    def add(name: str, variant: str, argv: List[str], cuda_amp_on_cpu: bool = False) -> None:
        cfg = SCRIPTS[name]
        blocked = {"orig": [], "shim": ["apex"], "native": ["apex", "apexcompat"]}[group]
        if group == "native" and cfg.get("native_keeps_shim"):
            blocked = ["apex"]
        runs.append({
            "id": f"{group}:{name}:{variant}", "script": str(scripts_dir / f"{name}.py"), "cwd": str(work),
            "argv": argv + ["--params-out", str(work / f"{group}-{name}-{variant}.params.pt")],
            "env": {**ddp_env, "MASTER_PORT": str(_new_port())} if cfg.get("ddp") else {},
            "blocked": blocked, "sys_path": sys_path,
            "cuda_amp_on_cpu": cuda_amp_on_cpu,
        })

    for name, cfg in SCRIPTS.items():
        steps, half = cfg["steps"], cfg["steps"] // 2
        if group == "native" and CUDA_AMP_ON_CPU and not cfg.get("native_keeps_shim"):
            add(name, "cuda-sim", cfg["amp"] + ["--steps", str(steps)], cuda_amp_on_cpu=True)
            if cfg["ckpt"]:
                ckpt = work / f"orig-{name}-amp-half.ckpt.pt"
                add(name, "cuda-sim-resumed", cfg["amp"] + ["--steps", str(half), "--resume", str(ckpt)],
                    cuda_amp_on_cpu=True)
        for level in ("amp", "fp32"):
            add(name, level, cfg[level] + ["--steps", str(steps)])
            if not cfg["ckpt"]:
                continue
            ckpt = work / f"orig-{name}-{level}-half.ckpt.pt"
            if group == "orig":
                add(name, f"{level}-half", cfg[level] + ["--steps", str(half), "--ckpt-out", str(ckpt)])
            else:
                add(name, f"{level}-resumed", cfg[level] + ["--steps", str(half), "--resume", str(ckpt)])
    return runs


def _run_process(runs: List[dict], work: Path, label: str) -> dict:
    """One subprocess runs the given runs in order (e2e/runner.py)."""
    plan_path, results_path = work / f"{label}.plan.json", work / f"{label}.results.json"
    plan_path.write_text(json.dumps({"runs": runs}))
    # One intra-op thread: tiny models gain nothing from more, and spinning threads on a busy
    # 2-core machine cost more than the work; every group runs the same way, so results compare.
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    hung = []
    for _attempt in range(2):
        try:
            proc = subprocess.run([sys.executable, str(RUNNER), str(plan_path), str(results_path)],
                                  cwd=work, env=env, capture_output=True, text=True, timeout=300)
            break
        except subprocess.TimeoutExpired as stopped:
            # rare (3 times in ~70 runs on a 2-core machine, cause not found yet; once beside
            # other gloo processes): the stacks faulthandler printed say where it hangs, and a
            # second hang in a row fails the test
            seen = stopped.stderr or b""
            hung.append((seen.decode(errors="replace") if isinstance(seen, bytes) else seen)[-6000:])
            # a warning, not stderr: pytest shows it in the summary of a passing run too
            warnings.warn(f"e2e {label}: runner still busy after 300 s, retrying once; its stderr:\n{hung[-1]}")
    else:
        pytest.fail(f"{label}: the runner hung twice; its stderr the second time:\n{hung[-1]}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(results_path.read_text())


@pytest.fixture(scope="module")
def e2e(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("e2e")
    work = root / "work"
    work.mkdir()
    out: dict = {"work": work, "dirs": {}, "reports": {}, "second": {}, "before_second": {}, "after_second": {}}
    for target in TARGETS:
        directory = root / target
        shutil.copytree(SCRIPTS_DIR, directory, ignore=shutil.ignore_patterns("__pycache__"))
        out["dirs"][target] = directory
        out["reports"][target] = _migrate(directory, target)
        out["before_second"][target] = _snapshot(directory)
        out["second"][target] = _migrate(directory, target)
        out["after_second"][target] = _snapshot(directory)
    plan = {
        group: _plan_runs(
            group,
            SCRIPTS_DIR if group == "orig" else out["dirs"][group],
            work,
            {"MASTER_ADDR": "127.0.0.1", "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"},
        )
        for group in ("orig", *TARGETS)
    }
    # Two processes: the native runs never see apexcompat imported; orig then shim share one.
    out["runs"] = {**_run_process(plan["orig"] + plan["shim"], work, "orig+shim"),
                   **_run_process(plan["native"], work, "native")}
    return out


def _run(e2e: dict, group: str, name: str, variant: str) -> dict:
    result = e2e["runs"][f"{group}:{name}:{variant}"]
    assert result["ok"], f"{group} {name} {variant} failed:\n{result['error']}\n--- stdout ---\n{result['stdout']}"
    return result


def _metric(stdout: str, name: str) -> List[float]:
    return [float(v) for v in re.findall(rf"^metric {name} \d+ (\S+)$", stdout, re.M)]


def _params(e2e: dict, group: str, name: str, variant: str) -> Dict[str, "torch.Tensor"]:
    _run(e2e, group, name, variant)
    params = torch.load(e2e["work"] / f"{group}-{name}-{variant}.params.pt")
    return _flatten(params)


def _flatten(tree: dict, prefix: str = "") -> Dict[str, "torch.Tensor"]:
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value.float()
    return flat


def _max_diff(a: Dict[str, "torch.Tensor"], b: Dict[str, "torch.Tensor"]) -> float:
    assert a.keys() == b.keys()
    return max((a[k] - b[k]).abs().max().item() for k in a if a[k].is_floating_point())




def _assert_close(a: dict, b: dict, what: str, **tol) -> None:
    assert a.keys() == b.keys(), what
    for key in a:
        torch.testing.assert_close(a[key], b[key], msg=lambda m, key=key: f"{what}: {key}: {m}", **tol)


def _rel_diff(a: dict, b: dict) -> float:
    """||a - b|| / ||b|| over all floating-point entries of two state dicts taken together."""
    assert a.keys() == b.keys()
    keys = [k for k in b if b[k].is_floating_point()]
    diff = torch.cat([(a[k] - b[k]).flatten() for k in keys]).norm()
    return (diff / torch.cat([b[k].flatten() for k in keys]).norm()).item()


def _assert_close_to_fp16_run(a: dict, b: dict, what: str, rel: float) -> None:
    """The weights of an fp32 run vs those of an fp16 run: within ``rel``, relatively, as a whole
    (single small tensors, e.g. a 1-element bias, carry too little signal to judge alone)."""
    measured = _rel_diff(a, b)
    assert measured <= rel, f"{what}: ||a - b|| / ||b|| = {measured:.3g} > {rel}"


def _fp16_rel(name: str) -> float:
    return SCRIPTS[name].get("fp16_rel", FP16_REL)


def _manual_sites(report: dict) -> List[tuple]:
    return sorted((f["path"], f["code"]) for f in report["findings"] if f["needs_manual_work"])


def _manual_codes(report: dict, name: str) -> List[str]:
    return [f["code"] for f in report["findings"] if f["path"].endswith(f"{name}.py") and f["needs_manual_work"]]


# ---------------------------------------------------------------------------- migration


@pytest.mark.parametrize("target", TARGETS)
def test_every_migrated_file_compiles_and_untouched_helpers_stay_byte_identical(e2e, target):
    directory = e2e["dirs"][target]
    for path in directory.glob("*.py"):
        compile(path.read_bytes(), str(path), "exec")
    assert (directory / "toydata.py").read_bytes() == (SCRIPTS_DIR / "toydata.py").read_bytes()
    report = e2e["reports"][target]
    assert report["summary"]["files_changed"] == len(MIGRATED_FILES), report["summary"]
    assert report["summary"]["parse_failures"] == 0 and report["summary"]["internal_errors"] == 0


@pytest.mark.parametrize("target", TARGETS)
def test_exit_status_says_whether_manual_work_remains(e2e, target):
    report = e2e["reports"][target]
    expected = 1 if any(EXPECTED_MANUAL[target].values()) else 0
    assert report["returncode"] == expected == report["summary"]["exit_status"], report["summary"]


def _only_apex_amp(name: str) -> bool:
    """The file's one kind of apex import is ``from apex import amp`` (other apex modules are
    rewritten to native on both targets)."""
    lines = re.findall(r"^\s*(?:from\s+apex\b|import\s+apex\b).*$", (SCRIPTS_DIR / f"{name}.py").read_text(), re.M)
    return bool(lines) and all(line.strip() == "from apex import amp" for line in lines)


@pytest.mark.parametrize("name", [n for n in MIGRATED_FILES if _only_apex_amp(n)])
def test_shim_target_only_swaps_the_import_where_apex_amp_is_the_only_apex_use(e2e, name):
    original = (SCRIPTS_DIR / f"{name}.py").read_text()
    migrated = (e2e["dirs"]["shim"] / f"{name}.py").read_text()
    assert migrated == original.replace("from apex import amp", "from apexcompat import amp")


@pytest.mark.parametrize("target", TARGETS)
def test_second_migration_is_a_no_op_reporting_the_same_todos(e2e, target):
    assert e2e["after_second"][target] == e2e["before_second"][target]
    first, second = e2e["reports"][target], e2e["second"][target]
    assert second["summary"]["files_changed"] == 0, second["summary"]
    assert _manual_sites(second) == _manual_sites(first)


@pytest.mark.parametrize("name", MIGRATED_FILES)
@pytest.mark.parametrize("target", TARGETS)
def test_no_apex_import_left(e2e, target, name):
    text = (e2e["dirs"][target] / f"{name}.py").read_text()
    assert not re.search(r"^\s*(from\s+apex\b|import\s+apex\b)", text, re.M), text
    manual = _manual_codes(e2e["reports"][target], name)
    assert sorted(manual) == sorted(EXPECTED_MANUAL[target].get(name, [])), manual
    uses_shim = bool(re.search(r"^\s*(from\s+apexcompat\b|import\s+apexcompat\b)", text, re.M))
    if target == "native":
        assert not uses_shim or manual, f"native output imports apexcompat without a TODO saying why:\n{text}"
    else:
        original = (SCRIPTS_DIR / f"{name}.py").read_text()
        assert uses_shim == ("from apex import amp" in original), text


# ---------------------------------------------------------------------------- training


def test_migrated_runs_use_no_deprecated_amp_spelling(e2e):
    """No FutureWarning/DeprecationWarning about torch.cuda.amp / torch.cpu.amp from a migrated
    run (the migration must emit the current spellings for the installed torch)."""
    deprecated = re.compile(r"^(FutureWarning|DeprecationWarning): .*torch\.(cuda|cpu)\.amp")
    found = {run_id: [w for w in result["warnings"] if deprecated.search(w)]
             for run_id, result in e2e["runs"].items() if not run_id.startswith("orig:")}
    assert not {k: v for k, v in found.items() if v}
    # the premise of the fp32 comparisons, and proof that warnings are captured at all: on this
    # CUDA-less run the migrated GradScaler("cuda") (or autocast("cuda")) switched itself off
    for name, cfg in SCRIPTS.items():
        if not cfg.get("native_keeps_shim"):
            assert any("Disabling" in w for w in e2e["runs"][f"native:{name}:amp"]["warnings"]), name


@pytest.mark.parametrize("name", SCRIPTS)
@pytest.mark.parametrize("group", ("orig", *TARGETS))
def test_runs_complete_and_the_loss_decreases(e2e, group, name):
    cfg = SCRIPTS[name]
    for level in ("amp", "fp32"):
        values = _metric(_run(e2e, group, name, level)["stdout"], cfg["metric"])
        assert len(values) == cfg["steps"], values
        first, last = sum(values[:4]) / 4, sum(values[-4:]) / 4
        assert last < 0.7 * first, (group, level, values)


@pytest.mark.parametrize("name", SCRIPTS)
def test_native_matches_the_original_at_o0_tightly_and_at_its_amp_level_within_fp16_rounding(e2e, name):
    if SCRIPTS[name].get("native_keeps_shim"):  # still apexcompat.amp: the same numerics as the original
        for level in ("amp", "fp32"):
            _assert_close(_params(e2e, "native", name, level), _params(e2e, "orig", name, level), level, **TIGHT)
        return
    native = _params(e2e, "native", name, "amp")
    _assert_close(native, _params(e2e, "native", name, "fp32"), "native amp vs fp32 runs (CPU: both fp32)", **TIGHT)
    _assert_close(native, _params(e2e, "orig", name, "fp32"), "native vs original O0", **TIGHT)
    if SCRIPTS[name].get("overflows"):
        return  # the original skipped steps: see the CUDA-mapped comparison
    _assert_close_to_fp16_run(native, _params(e2e, "orig", name, "amp"), "native vs original amp level",
                              _fp16_rel(name))


@pytest.mark.skipif(not CUDA_AMP_ON_CPU, reason="an enabled GradScaler on the CPU needs torch >= 2.3")
@pytest.mark.parametrize("name", [n for n, cfg in SCRIPTS.items() if not cfg.get("native_keeps_shim")])
def test_native_with_cuda_amp_mapped_to_the_cpu_trains_like_the_original_at_its_amp_level(e2e, name):
    """The migrated scaler choreography executed for real (enabled GradScaler, fp16 autocast),
    fresh and resumed from the original's apex checkpoint."""
    cfg = SCRIPTS[name]
    rel = FP16_REL if (cfg.get("o2") or cfg.get("no_amp")) else CUDA_SIM_REL
    values = _metric(_run(e2e, "native", name, "cuda-sim")["stdout"], cfg["metric"])
    assert len(values) == cfg["steps"] and sum(values[-4:]) < 0.7 * sum(values[:4]), values
    straight = _params(e2e, "orig", name, "amp")
    _assert_close_to_fp16_run(_params(e2e, "native", name, "cuda-sim"), straight, "native (cuda amp on cpu) vs original", rel)
    if cfg["ckpt"]:
        _assert_close_to_fp16_run(_params(e2e, "native", name, "cuda-sim-resumed"), straight,
                                  "native (cuda amp on cpu) resumed from the apex checkpoint vs original", rel)


@pytest.mark.parametrize("name", [n for n, cfg in SCRIPTS.items() if cfg.get("overflows")])
def test_overflow_scenario_skips_steps_and_checkpoints_a_lowered_scale(e2e, name):
    """The premise of the overflow comparisons: the original skipped steps at its amp level and
    its half-way checkpoint holds a scale below apex's initial 65536."""
    skips = re.findall(r"^Gradient overflow\.  Skipping step", _run(e2e, "orig", name, "amp")["stdout"], re.M)
    assert skips
    entry = torch.load(e2e["work"] / f"orig-{name}-amp-half.ckpt.pt")["amp"]["loss_scaler0"]
    assert entry["loss_scale"] < 2.0 ** 16, entry


@pytest.mark.parametrize("name", SCRIPTS)
def test_shim_matches_the_original_run_through_apexcompat(e2e, name):
    for level in ("amp", "fp32"):
        shim, orig = _params(e2e, "shim", name, level), _params(e2e, "orig", name, level)
        what = f"shim vs original {level}"
        if level == "amp" and SCRIPTS[name].get("no_amp"):
            _assert_close_to_fp16_run(shim, orig, what, _fp16_rel(name))
        else:
            _assert_close(shim, orig, what, **TIGHT)


@pytest.mark.parametrize("name", [n for n, cfg in SCRIPTS.items() if cfg["ckpt"]])
@pytest.mark.parametrize("target", TARGETS)
def test_checkpoint_written_by_the_apex_script_resumes_in_the_migrated_one(e2e, target, name):
    """The original writes a checkpoint half way (amp.state_dict() in apex's format); the
    migrated script resumes from it and must end where the uninterrupted original ends."""
    cfg = SCRIPTS[name]
    for level in ("fp32", "amp"):
        resumed = _run(e2e, target, name, f"{level}-resumed")
        half = _run(e2e, "orig", name, f"{level}-half")
        values = _metric(resumed["stdout"], cfg["metric"])
        assert len(values) == cfg["steps"] // 2
        steps = [int(s) for s in re.findall(rf"^metric {cfg['metric']} (\d+) ", resumed["stdout"], re.M)]
        assert steps[0] == cfg["steps"] // 2, "the resumed run restarted from step 0"
        assert _metric(half["stdout"], cfg["metric"])
        resumed_params, straight = _params(e2e, target, name, f"{level}-resumed"), _params(e2e, "orig", name, level)
        what = f"{target} resumed from the apex checkpoint ({level}) vs uninterrupted original"
        if level == "fp32" or (target == "shim" and not cfg.get("o2")):
            _assert_close(resumed_params, straight, what, **TIGHT)
        elif cfg.get("overflows"):
            continue  # the original skipped steps: see the CUDA-mapped comparison
        else:
            _assert_close_to_fp16_run(resumed_params, straight, what, _fp16_rel(name))


@pytest.mark.parametrize("name", [n for n, cfg in SCRIPTS.items() if cfg["ckpt"]])
def test_native_scaler_loading_reads_the_apex_checkpoint_into_an_enabled_scaler(e2e, name, monkeypatch):
    """On a CPU host the migrated GradScaler("cuda") is disabled and loading is a no-op, so the
    conversion the migrated file carries is checked here on an enabled CPU GradScaler: the apex
    entry the original wrote, and the {} a disabled scaler writes (a CPU-written checkpoint
    resumed on a GPU host)."""
    if not hasattr(torch.amp, "GradScaler"):
        pytest.skip("an enabled GradScaler on the CPU needs torch.amp.GradScaler (torch >= 2.3)")
    directory = e2e["dirs"]["native"]
    monkeypatch.syspath_prepend(str(directory))
    sys.modules.pop("toydata", None)
    try:
        namespace = runpy.run_path(str(directory / f"{name}.py"), run_name="migrated_under_test")
    finally:
        sys.modules.pop("toydata", None)  # the scripts' helper module is no test's business
    assert "load_scaler_state" in namespace, "the migrated file has no load_scaler_state helper"
    load_scaler_state = namespace["load_scaler_state"]
    apex_entry = torch.load(e2e["work"] / f"orig-{name}-amp-half.ckpt.pt")["amp"]
    assert set(apex_entry) >= {"loss_scaler0"}, apex_entry
    scaler = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=3)
    load_scaler_state(scaler, apex_entry)
    state = scaler.state_dict()
    assert state["scale"] == apex_entry["loss_scaler0"]["loss_scale"]
    assert state["_growth_tracker"] == apex_entry["loss_scaler0"]["unskipped"]
    assert state["growth_interval"] == 3, "the scaler's own settings must be kept"
    # the loaded scaler still works: one scaled step
    weight = torch.nn.Parameter(torch.ones(2))
    optimizer = torch.optim.SGD([weight], lr=0.1)
    scaler.scale((weight * 2).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    torch.testing.assert_close(weight.detach(), torch.full((2,), 0.8))
    load_scaler_state(torch.amp.GradScaler("cpu"), {})
    native_entry = torch.load(e2e["work"] / f"orig-{name}-fp32-half.ckpt.pt")["amp"]
    load_scaler_state(torch.amp.GradScaler("cpu"), native_entry)  # apex O0 entry: scale 1


def test_report_measured_differences(e2e, capsys):
    """Prints the measured differences (max |a - b| and ||a - b|| / ||b||) behind the tolerances."""
    comparisons = {
        "native~orig.O0": (("native", "amp"), ("orig", "fp32")),
        "native~orig.amp": (("native", "amp"), ("orig", "amp")),
        "shim~orig.amp": (("shim", "amp"), ("orig", "amp")),
        "native.resumed~orig.O0": (("native", "fp32-resumed"), ("orig", "fp32")),
        "native.resumed~orig.amp": (("native", "amp-resumed"), ("orig", "amp")),
        "shim.resumed~orig.amp": (("shim", "amp-resumed"), ("orig", "amp")),
        "native.cudasim~orig.amp": (("native", "cuda-sim"), ("orig", "amp")),
        "native.cudasim.resumed~orig.amp": (("native", "cuda-sim-resumed"), ("orig", "amp")),
    }
    lines = []
    for name in SCRIPTS:
        cells = []
        for label, ((group_a, variant_a), (group_b, variant_b)) in comparisons.items():
            try:
                a, b = _params(e2e, group_a, name, variant_a), _params(e2e, group_b, name, variant_b)
            except (AssertionError, KeyError, FileNotFoundError):
                continue  # a failed or absent run: its own test reports it
            cells.append(f"{label} {_max_diff(a, b):.1e}/{_rel_diff(a, b):.1e}")
        lines.append(f"{name}: " + ", ".join(cells))
    with capsys.disabled():
        print("\nmax|a-b| / ||a-b||/||b||\n" + "\n".join(lines))
    assert len(lines) == len(SCRIPTS)


# ---------------------------------------------------------------------------- the test double


def _fake_fp16_utils():
    """The fake apex.fp16_utils, loaded by path (no ``apex`` left in sys.modules)."""
    spec = importlib.util.spec_from_file_location("fake_apex_fp16_utils", FAKE_APEX / "apex" / "fp16_utils" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _half_model():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 2).half()


def test_fake_fp16_optimizer_steps_fp32_masters_and_copies_them_to_the_fp16_model():
    fp16_utils = _fake_fp16_utils()
    model = _half_model()
    initial = [p.detach().float().clone() for p in model.parameters()]
    optimizer = fp16_utils.FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=0.5), static_loss_scale=128.0)
    masters = [p for group in optimizer.param_groups for p in group["params"]]
    assert all(m.dtype == torch.float32 for m in masters)
    x = torch.randn(3, 4).half()
    loss = model(x).float().pow(2).sum()
    optimizer.backward(loss)
    # the master grads are the fp16 grads of loss * 128, unscaled in fp32
    reference = _half_model()
    (reference(x).float().pow(2).sum() * 128.0).backward()
    for master, ref in zip(masters, reference.parameters()):
        torch.testing.assert_close(master.grad, ref.grad.float() / 128.0)
    optimizer.step()
    for param, master, start in zip(model.parameters(), masters, initial):
        torch.testing.assert_close(master, start - 0.5 * master.grad)
        assert torch.equal(param, master.half())
    assert optimizer.loss_scale == 128.0


def test_fake_fp16_optimizer_dynamic_scale_skips_overflowing_steps_and_halves(capsys):
    fp16_utils = _fake_fp16_utils()
    model = _half_model()
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = fp16_utils.FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=0.5), dynamic_loss_scale=True,
                                          dynamic_loss_args={"init_scale": 2.0 ** 16, "scale_window": 2})
    optimizer.backward(model(torch.full((1, 4), 1e4).half()).float().sum())  # * 2**16 overflows fp16
    optimizer.step()
    assert capsys.readouterr().out == "Gradient overflow.  Skipping step, reducing loss scale to 32768.0\n"
    assert all(torch.equal(p, b) for p, b in zip(model.parameters(), before))
    for _ in range(2):  # two clean iterations since the overflow: the scale doubles back
        optimizer.zero_grad()
        optimizer.backward(model(torch.ones(1, 4).half()).float().sum())
        optimizer.step()
    assert optimizer.loss_scale == 2.0 ** 16
    assert not all(torch.equal(p, b) for p, b in zip(model.parameters(), before))


def test_fake_fp16_optimizer_state_dict_round_trip(tmp_path):
    fp16_utils = _fake_fp16_utils()
    model = _half_model()
    optimizer = fp16_utils.FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9), dynamic_loss_scale=True)
    optimizer.backward(model(torch.ones(1, 4).half()).float().sum())
    optimizer.step()
    torch.save(optimizer.state_dict(), tmp_path / "opt.pt")
    other_model = _half_model()
    other = fp16_utils.FP16_Optimizer(torch.optim.SGD(other_model.parameters(), lr=0.5, momentum=0.9), dynamic_loss_scale=True)
    other.load_state_dict(torch.load(tmp_path / "opt.pt", weights_only=True))
    assert other.loss_scale == optimizer.loss_scale
    for a, b in zip(other.fp32_from_fp16_groups[0], optimizer.fp32_from_fp16_groups[0]):
        assert torch.equal(a, b)
