"""End to end: a small CNN with BatchNorm trained on CPU at O0..O3 through the shim with
injected overflows; a checkpoint (model, optimizer, amp) is saved mid-run and restored in a
fresh process, which must continue with the same loss-scale trajectory (and, except at O2,
bit-identical parameters: O2's fp32 masters are in no state dict, spec §4.2).

The test module is also the worker script: ``python test_e2e_cnn.py reference|resume DIR``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

LEVELS = ("O0", "O1", "O2", "O3")
STEPS = 220
CHECKPOINT_AT = 110  # saved after this step
INJECT_AT = (40, 150)  # one overflow before and one after the checkpoint


def _build():
    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.Conv2d(8, 8, 3, padding=1),
        torch.nn.BatchNorm2d(8),
        torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1),
        torch.nn.Flatten(),
        torch.nn.Linear(8, 4),
    )
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    return model, optimizer


def _train(level, first, last, checkpoint_path=None, restore_path=None):
    import torch

    from apexcompat import amp
    from apexcompat.amp._amp_state import _amp_state, reset_state

    reset_state()
    model, optimizer = _build()
    model, optimizer = amp.initialize(model, optimizer, opt_level=level, loss_scale="dynamic", verbosity=1)
    if restore_path is not None:
        ckpt = torch.load(restore_path, weights_only=False)
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        amp.load_state_dict(ckpt["amp"])
    trajectory = []
    for step in range(first, last):
        g = torch.Generator().manual_seed(step)
        x = torch.randn(8, 3, 8, 8, generator=g)
        y = torch.randint(0, 4, (8,), generator=g)
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
            if step in INJECT_AT:
                model[0].weight.grad.view(-1)[0] = float("inf")
        skipped = optimizer._amp_stash.already_patched
        optimizer.step()
        scaler = _amp_state.loss_scalers[0]
        trajectory.append((step, skipped, scaler.loss_scale(), scaler._unskipped))
        if checkpoint_path is not None and step == CHECKPOINT_AT:
            torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                        "amp": amp.state_dict()}, checkpoint_path)
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return {"trajectory": trajectory, "params": params, "loss": float(loss.detach())}


def _worker(phase, directory):
    import torch

    torch.set_num_threads(1)
    results = {}
    for level in LEVELS:
        ckpt = os.path.join(directory, f"{level}.pt")
        if phase == "reference":
            results[level] = _train(level, 0, STEPS, checkpoint_path=ckpt)
        else:
            results[level] = _train(level, CHECKPOINT_AT + 1, STEPS, restore_path=ckpt)
    torch.save(results, os.path.join(directory, f"{phase}.results"))


def _run(phase, directory):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd()] + sys.path))
    proc = subprocess.run([sys.executable, __file__, phase, str(directory)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import torch

    directory = tmp_path_factory.mktemp("e2e_cnn")
    ref_out = _run("reference", directory)
    resume_out = _run("resume", directory)
    load = lambda phase: torch.load(directory / f"{phase}.results", weights_only=False)  # noqa: E731
    return load("reference"), load("resume"), ref_out, resume_out


@pytest.mark.slow
@pytest.mark.parametrize("level", LEVELS)
def test_checkpoint_restore_continues(runs, level):
    import torch

    reference, resumed, ref_out, resume_out = runs
    ref, res = reference[level], resumed[level]
    assert len(ref["trajectory"]) == STEPS >= 200
    skipped_steps = [s for s, skipped, _, _ in ref["trajectory"] if skipped]
    assert set(INJECT_AT) <= set(skipped_steps)
    assert ref["trajectory"][-1][2] < 65536.0  # the scale did come down
    # same scale, skips and counter after every restored step
    assert res["trajectory"] == ref["trajectory"][CHECKPOINT_AT + 1:]
    # it trained: finite parameters and a sane loss
    assert all(torch.isfinite(v).all() for v in res["params"].values() if v.is_floating_point())
    if level == "O2":
        # masters restart from fp16 values: parameters diverge slightly, not wildly
        diffs = [(ref["params"][k] - v).abs().max().item() for k, v in res["params"].items() if v.is_floating_point()]
        assert 0 < max(diffs) < 0.05
    else:
        for k, v in res["params"].items():
            assert torch.equal(ref["params"][k], v), f"{level} {k}"
    line = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {}"
    all_skips = sum(skipped for lvl in LEVELS for _, skipped, _, _ in reference[lvl]["trajectory"])
    assert sum(out.startswith("Gradient overflow.") for out in ref_out) == all_skips
    after = [scale for step, skipped, scale, _ in res["trajectory"] if skipped]
    assert all(line.format(s) in resume_out for s in after)


if __name__ == "__main__":
    _worker(sys.argv[1], sys.argv[2])
