"""Replays of every ``golden/loops`` trace through ``amp.initialize`` / ``amp.scale_loss``:
stdout byte for byte, scale / skips / counters after every backward and step, the final
``amp.state_dict()`` exactly (int vs float), parameters within a tolerance; checkpoint
traces are saved after iteration 4 and continued after a full amp reset."""

from __future__ import annotations

import json

import pytest

from apexcompat.amp._amp_state import reset_state
from conftest import golden_params
from _golden_replay import (
    KNOWN_MODEL,
    NOISE_DRIVEN_PARAM,
    assert_close,
    expected_stdout,
    frontend_available,
    minimal_initialize,
    noise_drift_per_step,
    run_loop,
    typed,
)

# Parameter tolerance: CPU fp16 arithmetic of torch.autocast vs apex's patched functions.
RTOL, ATOL = 5e-3, 2e-3


def checkpoint_iteration(trace) -> int:
    """The iteration after which the trace saved its checkpoint: the one before the first
    iteration of the restored run (read from the trace, never assumed)."""
    restored = trace["restored_run"]["iterations"]
    if not restored:
        raise AssertionError("checkpoint trace without restored iterations")
    saved_after = restored[0]["iteration"] - 1
    if saved_after not in [it["iteration"] for it in trace["iterations"]]:
        raise AssertionError(f"restored run starts at {saved_after + 1}, not after a recorded iteration")
    return saved_after


def _load(path):
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _initialize_for(trace):
    if frontend_available():
        from apexcompat import amp

        return amp.initialize
    if trace["settings"]["opt_level"] == "O0":
        return minimal_initialize
    pytest.fail("amp.initialize (frontend.py) is still a placeholder")


# Every key a loops trace may hold, by level: a record this replay would silently ignore
# fails instead (it may describe behaviour the replay does not reproduce).
_KNOWN_KEYS = {
    "trace": {"after_initialize", "checkpoint", "description", "final_amp_state_dict", "group",
              "harness", "initial_params_fp32", "iterations", "restored_run",
              "restored_vs_reference", "scenario", "settings", "stdout", "stdout_by_phase",
              "stdout_without_fallback_lines", "warnings"},
    "after_initialize": {"param_dtypes", "params", "returned_same_model_object",
                         "returned_same_optimizer_object", "scalers"},
    "iteration": {"iteration", "lines_printed_by_step", "master_params", "output_dtype", "params",
                  "passes", "scalers_after_step", "step_called", "step_was_patched_to_skip"},
    "pass": {"delay_unscale", "injected", "loss", "loss_id", "scale_used", "scalers_after", "yielded"},
    "yielded": {"dtype", "is_loss_object", "value"},
    "restored_run": {"final_amp_state_dict", "iterations", "master_params_after_load",
                     "scalers_after_load", "stdout", "stdout_by_phase",
                     "stdout_without_fallback_lines", "warnings"},
    "checkpoint": {"amp_state_dict", "model_state_dict_dtypes", "optimizer_state_dict_summary"},
}


def check_trace_keys(trace) -> None:
    def known(level, record):
        unknown = set(record) - _KNOWN_KEYS[level]
        assert not unknown, f"{trace['scenario']}: {level} record has keys this replay ignores: {sorted(unknown)}"

    known("trace", trace)
    known("after_initialize", trace["after_initialize"])
    for section in ("checkpoint", "restored_run"):
        if section in trace:
            known(section, trace[section])
    iterations = trace["iterations"] + trace.get("restored_run", {}).get("iterations", [])
    for it in iterations:
        known("iteration", it)
        for p in it["passes"]:
            known("pass", p)
            known("yielded", p["yielded"])


def _noise_atol(settings, iteration: int) -> float:
    """The tolerance for ``NOISE_DRIVEN_PARAM`` after ``iteration``: the golden one plus the
    drift its noise-driven steps may have accumulated (see ``_golden_replay``)."""
    return ATOL + noise_drift_per_step(settings) * (iteration + 1)


def _compare_iterations(got_its, want_its, where, settings, slots):
    """``slots``: per optimizer, where ``NOISE_DRIVEN_PARAM`` sits among its master params."""
    assert [g["iteration"] for g in got_its] == [w["iteration"] for w in want_its], where
    for got, want in zip(got_its, want_its):
        tag = f"{where} iteration {want['iteration']}"
        noise_atol = _noise_atol(settings, want["iteration"])
        assert got["output_dtype"] == want["output_dtype"], tag
        assert len(got["passes"]) == len(want["passes"]), tag
        for gp, wp in zip(got["passes"], want["passes"]):
            assert gp["loss_id"] == wp["loss_id"], tag
            assert typed(gp["scale_used"]) == typed(wp["scale_used"]), tag
            assert gp["delay_unscale"] == wp["delay_unscale"], tag
            assert gp["injected"] == wp["injected"], tag
            assert gp["yielded"]["dtype"] == wp["yielded"]["dtype"], tag
            assert gp["yielded"]["is_loss_object"] == wp["yielded"]["is_loss_object"], tag
            assert_close([gp["loss"]], [wp["loss"]], RTOL, ATOL, tag + " loss")
            assert_close([gp["yielded"]["value"]], [wp["yielded"]["value"]], RTOL, ATOL * 65536, tag + " yielded")
            if "scalers_after" in wp:
                assert typed(gp["scalers_after"]) == typed(wp["scalers_after"]), tag + " scalers after backward"
        assert got["step_called"] == want["step_called"], tag
        assert got["step_was_patched_to_skip"] == want["step_was_patched_to_skip"], tag
        assert got["lines_printed_by_step"] == want["lines_printed_by_step"], tag
        if "scalers_after_step" in want:
            assert typed(got["scalers_after_step"]) == typed(want["scalers_after_step"]), tag + " scalers after step"
        for name, values in want["params"].items():
            atol = noise_atol if name == NOISE_DRIVEN_PARAM else ATOL
            assert_close(got["params"][name], values, RTOL, atol, f"{tag} {name}")
        if "master_params" in want:
            assert len(got["master_params"]) == len(want["master_params"]), tag
            for gm, wm, noisy in zip(got["master_params"], want["master_params"], slots):
                assert len(gm) == len(wm), tag
                for j, (g, w) in enumerate(zip(gm, wm)):
                    assert_close(g, w, RTOL, noise_atol if j in noisy else ATOL, f"{tag} master {j}")


@golden_params("loops")
def test_loop_trace(golden_path):
    trace = _load(golden_path)
    check_trace_keys(trace)
    settings = trace["settings"]
    initialize = _initialize_for(trace)
    has_checkpoint = "checkpoint" in trace
    saved_after = checkpoint_iteration(trace) if has_checkpoint else None
    record = run_loop(settings, trace["iterations"], initialize, save_after=saved_after)

    for name, values in trace.get("initial_params_fp32", {}).items():
        assert_close(record["initial_params"][name], values, 0, 0, f"initial {name}")
    after = trace["after_initialize"]
    for key in ("returned_same_model_object", "returned_same_optimizer_object"):
        if key in after:
            got = record[key]
            if isinstance(got, list) and not isinstance(after[key], list):
                got = all(got)  # one flag for the whole optimizer list
            assert got == after[key], key
    assert record["after_initialize_param_dtypes"] == after["param_dtypes"]
    for name, values in after["params"].items():
        assert_close(record["after_initialize_params"][name], values, 0, 0, f"after initialize {name}")
    if "scalers" in after:
        assert typed(record["after_initialize_scalers"]) == typed(after["scalers"])

    _compare_iterations(record["iterations"], trace["iterations"], trace["scenario"], settings, record["noise_slots"])
    assert record["stdout"] == expected_stdout(trace)
    if "final_amp_state_dict" in trace:
        assert typed(record["final_amp_state_dict"]) == typed(trace["final_amp_state_dict"])

    if has_checkpoint:
        ckpt = record["checkpoint"]
        want = trace["checkpoint"]
        assert typed(ckpt["amp"]) == typed(want["amp_state_dict"])
        assert {k: str(v.dtype) for k, v in ckpt["model"].items()} == want["model_state_dict_dtypes"]
        summary = want["optimizer_state_dict_summary"]
        osd = ckpt["optimizers"][0]
        assert [g["params"] for g in osd["param_groups"]] == summary["param_groups_params"]
        assert {str(k): {n: str(t.dtype) for n, t in v.items()} for k, v in osd["state"].items()} == summary["state"]

        # The restore: a "fresh process" (amp fully reset), new model and optimizer.
        reset_state()
        restored_want = trace["restored_run"]
        restored_iters = [it for it in record["iterations"] if it["iteration"] > saved_after]
        restored = run_loop(settings, [it for it in trace["iterations"] if it["iteration"] > saved_after],
                            initialize, restore=ckpt)
        assert typed(restored["scalers_after_load"]) == typed(restored_want["scalers_after_load"])
        want_masters = restored_want["master_params_after_load"]
        assert len(restored["master_params_after_load"]) == len(want_masters)
        flat_noisy, offset = set(), 0
        for opt_slots, opt in zip(restored["noise_slots"], restored["optimizers"]):
            flat_noisy.update(offset + j for j in opt_slots)
            offset += sum(len(group["params"]) for group in opt.param_groups)
        load_atol = _noise_atol(settings, saved_after)
        for j, (g, w) in enumerate(zip(restored["master_params_after_load"], want_masters)):
            assert_close(g, w, RTOL, load_atol if j in flat_noisy else ATOL, f"master param {j} after load")
        _compare_iterations(
            restored["iterations"], restored_want["iterations"], "restored", settings, restored["noise_slots"]
        )
        assert restored["stdout"] == expected_stdout(restored_want)
        assert typed(restored["final_amp_state_dict"]) == typed(restored_want["final_amp_state_dict"])
        for cmp, ref, new in zip(trace["restored_vs_reference"], restored_iters, restored["iterations"]):
            assert cmp["iteration"] == ref["iteration"] == new["iteration"]
            assert (typed(ref["scalers_after_step"]) == typed(new["scalers_after_step"])) == cmp["scalers_identical"]
            assert (ref["step_was_patched_to_skip"] == new["step_was_patched_to_skip"]) == cmp["skip_identical"]
            assert (ref["params"] == new["params"]) == cmp["params_identical"], f"iteration {cmp['iteration']}"


def _settings(**overrides):
    base = {
        "opt_level": "O2", "initialize_kwargs": {}, "optimizer": "torch.optim.SGD(lr=0.05, momentum=0.9)",
        "two_optimizers": False,
        "model": KNOWN_MODEL,
        "data": "iteration i: g=torch.Generator().manual_seed(1000+i); x=randn(16,4,g); y=randn(16,2,g)*1.0",
        "loss": "mse_loss(out, y)", "passes": "single", "accumulate": 1,
        "delay_unscale_on_non_final_micro_batches": False, "injections": {},
        "iterations_without_step_call": [],
        "zero_grad": "optimizer.zero_grad() at the start of every optimizer step (first micro-batch of a group)",
    }
    base.update(overrides)
    return base


def _plan(n, loss_ids=(0,), delays=lambda i: False):
    return [{"iteration": i, "passes": [{"loss_id": k, "delay_unscale": delays(i)} for k in loss_ids]}
            for i in range(n)]


OVERFLOW = "Gradient overflow.  Skipping step, loss scaler {} reducing loss scale to {}"


def test_replay_two_optimizers_kind():
    """Held-back kind O2_two_optimizers: both optimizers skip, one line each."""
    settings = _settings(two_optimizers=True, injections={"2": ["inf", "fc2.weight"]},
                         initialize_kwargs={"verbosity": 1})
    from apexcompat import amp

    record = run_loop(settings, _plan(4), amp.initialize)
    it = record["iterations"][2]
    assert it["step_was_patched_to_skip"] == [True, True]
    assert it["lines_printed_by_step"] == [OVERFLOW.format(0, 32768.0)] * 2
    assert [len(m) for m in it["master_params"]] == [4, 2]


def test_replay_pending_skip_kind():
    """Held-back kind O2_pending_skip_consumed: no step after the overflow, the next clean
    iteration's step is swallowed and logs."""
    from apexcompat import amp

    settings = _settings(injections={"1": ["nan", "fc1.weight"]}, iterations_without_step_call=[1])
    record = run_loop(settings, _plan(4), amp.initialize)
    its = record["iterations"]
    assert not its[1]["step_called"] and its[1]["lines_printed_by_step"] == []
    assert its[2]["step_was_patched_to_skip"] == [True]
    assert its[2]["lines_printed_by_step"] == [OVERFLOW.format(0, 32768.0)]
    assert its[2]["params"] == its[1]["params"]
    assert typed(its[2]["scalers_after_step"]) == typed([{"loss_scale": 32768.0, "unskipped": 1}])


def test_replay_one_scaler_two_backwards_kind():
    """Held-back kind O1_one_scaler_two_backwards: two overflowing backwards on one scaler
    halve twice; the single line shows the final scale."""
    from apexcompat import amp

    settings = _settings(opt_level="O1", loss="pass k: mse_loss(out[:,k], y[:,k])", passes="two_backwards",
                         injections={"3.0": ["inf", "fc1.weight"], "3.1": ["inf", "fc2.weight"]})
    record = run_loop(settings, _plan(5, loss_ids=(0, 0)), amp.initialize)
    before = record["iterations"][2]["scalers_after_step"][0]["loss_scale"]
    it = record["iterations"][3]
    assert [p["scalers_after"] for p in it["passes"]] == [
        [{"loss_scale": before / 2, "unskipped": 0}], [{"loss_scale": before / 4, "unskipped": 0}]]
    assert it["lines_printed_by_step"] == [OVERFLOW.format(0, before / 4)]
    assert record["iterations"][4]["scalers_after_step"][0]["unskipped"] == 2


def test_unknown_setting_fails_loudly():
    from _golden_replay import UnsupportedScenario

    with pytest.raises(UnsupportedScenario):
        run_loop(_settings(new_knob=1), _plan(1), minimal_initialize)
    with pytest.raises(UnsupportedScenario):
        run_loop(_settings(optimizer="apex.optimizers.FusedAdam(lr=1e-3)"), _plan(1), minimal_initialize)


def test_noise_driven_param_has_a_rounding_noise_gradient():
    """The premise of the wider tolerance for NOISE_DRIVEN_PARAM: in the loops model its
    gradient is rounding noise next to every other parameter's, on every trace's data."""
    import torch

    from _golden_replay import _data, build_model

    settings = _settings()
    for i in range(8):
        model = build_model(settings)
        x, y = _data(settings, i)
        torch.nn.functional.mse_loss(model(x), y).backward()
        grads = {name: p.grad.abs().max().item() for name, p in model.named_parameters()}
        largest = max(grads.values())
        assert grads.pop(NOISE_DRIVEN_PARAM) <= 1e-6 * largest
        assert min(grads.values()) > 1e-4 * largest  # the others carry real signal


def test_noise_drift_only_for_adaptive_optimizers():
    assert noise_drift_per_step(_settings(optimizer="torch.optim.SGD(lr=0.05, momentum=0.9)")) == 0.0
    assert noise_drift_per_step(_settings(optimizer="torch.optim.Adam(lr=1e-3)")) == pytest.approx(3.2e-3)
    two = "torch.optim.SGD(lr=0.1) for fc1+bn, torch.optim.Adam(lr=1e-2) for fc2"
    assert noise_drift_per_step(_settings(optimizer=two, two_optimizers=True)) == pytest.approx(3.2e-2)
