"""Run several training scripts one after another in this one process, as ``__main__``.

Used by tests/migrate/test_e2e_scripts.py so that torch (and the torch._dynamo import the
optimizers trigger) is loaded once per group of runs instead of once per run: the e2e module
must stay fast on 2 cores.  Each run gets its own argv, working directory, environment
additions, extra ``sys.path`` entries and captured stdout; an exception or a non-zero exit
ends that run only.  Between runs the apexcompat.amp state is reset and a leftover process
group destroyed, as a new process would have them.  Top-level packages named in a run's
``blocked`` are dropped from ``sys.modules`` and cannot be imported during it: that is how a
migrated script proves it needs neither apex nor (native target) apexcompat.

Usage: python runner.py PLAN.json RESULTS.json
PLAN = {"runs": [{"id", "script", "argv", "cwd", "env", "sys_path", "blocked", "cuda_amp_on_cpu", "root"}]}
(``root``, optional: the repository a launcher belongs to; its packages are forgotten too.)
RESULTS = {id: {"ok": bool, "stdout": str, "error": str, "warnings": [str], "cpu_s": float}}
"""

from __future__ import annotations

import contextlib
import faulthandler
import importlib.abc
import io
import json
import os
import runpy
import sys
import time
import traceback
import warnings


class _Blocker(importlib.abc.MetaPathFinder):
    def __init__(self, names):
        self.names = set(names)

    def find_spec(self, fullname, path=None, target=None):
        if fullname.split(".")[0] in self.names:
            raise ModuleNotFoundError(f"No module named {fullname!r} (blocked by the e2e runner)", name=fullname)
        return None


def _forget_modules(names, directory: str, root: str = "") -> None:
    """Drop blocked packages, the modules a script imported from its own directory and, for a
    script inside a repository, every module imported from anywhere under its ``root``."""
    for key, module in list(sys.modules.items()):
        origin = getattr(module, "__file__", None)
        origin = os.path.abspath(origin) if origin else ""
        ours = origin and (os.path.dirname(origin) == directory or (root and origin.startswith(root + os.sep)))
        if key.split(".")[0] in names or ours:
            del sys.modules[key]


def _reset_between_runs() -> None:
    state_module = sys.modules.get("apexcompat.amp._amp_state")
    if state_module is not None:
        state_module.reset_state()
    dist = sys.modules.get("torch.distributed")
    if dist is not None and dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


@contextlib.contextmanager
def _cuda_amp_on_the_cpu():
    """Let ``torch.autocast("cuda", ...)`` and ``torch.amp.GradScaler("cuda", ...)`` run, enabled,
    on the CPU (fp16 CPU autocast, a CPU GradScaler), as they would on a CUDA host: the migrated
    scaler choreography (scale/unscale_/step/update, skipped steps, loaded scaler state) then
    really executes.  Only the device string changes; the scripts' calls stay as written."""
    import torch

    real_autocast, real_scaler = torch.autocast, torch.amp.GradScaler

    class Autocast(real_autocast):
        def __init__(self, device_type, *args, **kwargs):
            super().__init__("cpu" if device_type == "cuda" else device_type, *args, **kwargs)

    class GradScaler(real_scaler):
        def __init__(self, device="cuda", *args, **kwargs):
            super().__init__("cpu" if device == "cuda" else device, *args, **kwargs)

    torch.autocast, torch.amp.GradScaler = Autocast, GradScaler
    try:
        yield
    finally:
        torch.autocast, torch.amp.GradScaler = real_autocast, real_scaler


def run_one(run: dict) -> dict:
    script = os.path.abspath(run["script"])
    directory = os.path.dirname(script)
    blocked = run.get("blocked", [])
    root = os.path.abspath(run["root"]) if run.get("root") else ""
    extra_path = [directory, *run.get("sys_path", [])]
    saved_env, saved_cwd, saved_argv = dict(os.environ), os.getcwd(), sys.argv
    _forget_modules(blocked, directory, root)
    blocker = _Blocker(blocked)
    sys.meta_path.insert(0, blocker)
    os.environ.update(run.get("env", {}))
    os.chdir(run["cwd"])
    sys.argv = [script, *run["argv"]]
    sys.path[:0] = extra_path
    out = io.StringIO()
    ok, error = True, ""
    caught: list = []
    started = time.process_time()
    try:
        simulate = _cuda_amp_on_the_cpu() if run.get("cuda_amp_on_cpu") else contextlib.nullcontext()
        with contextlib.redirect_stdout(out), simulate, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        ok = exc.code in (None, 0)
        error = "" if ok else f"SystemExit({exc.code!r})"
    except BaseException:  # noqa: BLE001 - any failure of the script is this run's result
        ok, error = False, traceback.format_exc()
    finally:
        del sys.path[:len(extra_path)]
        sys.meta_path.remove(blocker)
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        try:
            _reset_between_runs()
        except Exception:  # noqa: BLE001
            ok, error = False, error + "\nreset after the run failed:\n" + traceback.format_exc()
        _forget_modules([], directory, root)
    warned = sorted({f"{w.category.__name__}: {w.message}" for w in caught})
    return {"ok": ok, "stdout": out.getvalue(), "error": error, "warnings": warned,
            "cpu_s": round(time.process_time() - started, 3)}


def main(plan_path: str, results_path: str) -> None:
    with open(plan_path) as f:
        plan = json.load(f)
    # a run that hangs leaves the stacks of every thread on stderr for the test to show
    faulthandler.dump_traceback_later(int(os.environ.get("E2E_RUNNER_STACKS_AFTER", "200")), exit=False)
    results = {}
    for run in plan["runs"]:
        # on stderr as it happens: if the process is stopped, the test says which run hung
        print(f"runner: {run['id']}", file=sys.stderr, flush=True)
        results[run["id"]] = run_one(run)
    with open(results_path, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
