"""The framework route of the cross-file plan (``framework_plan``, facts in
``runner_frameworks``): mmcv hooks and runner subclasses get the GradScaler from the runner
the launcher builds, or every file of the component keeps apexcompat.amp with the exact
reason.  Repositories run in memory through the whole-repository pipeline."""

from __future__ import annotations

import ast
import re
import tempfile
from typing import Dict, List, Tuple

import pytest

from migrate.pipeline import migrate_repository
from migrate.repo_index import summarise
from migrate.runner_frameworks import HOOK, RUNNER, read_framework_facts
from migrate.settings import Settings

LAUNCHER = """\
import torch
from mmcv.runner import build_runner

from seg.runner import IterBasedRunnerAmp

try:
    import apex
except ImportError:
    apex = None


def train_segmentor(model, loaders, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    if cfg.optimizer_config.get("use_fp16", False):
        model, optimizer = apex.amp.initialize(model.cuda(), optimizer, opt_level="O1")
        for m in model.modules():
            if hasattr(m, "fp16_enabled"):
                m.fp16_enabled = True
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer))
    runner.register_training_hooks(cfg.lr_config, cfg.optimizer_config)
    runner.run(loaders, cfg.workflow)
"""
HOOKS = """\
from apex import amp
from mmcv.runner import HOOKS, OptimizerHook


@HOOKS.register_module()
class SegOptimizerHook(OptimizerHook):
    def __init__(self, use_fp16=False):
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        if self.use_fp16:
            with amp.scale_loss(runner.outputs["loss"], runner.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            runner.outputs["loss"].backward()
        runner.optimizer.step()
"""
RUNNER_FILE = """\
from apex import amp
from mmcv.runner import RUNNERS, IterBasedRunner


@RUNNERS.register_module()
class IterBasedRunnerAmp(IterBasedRunner):
    def resume(self, path):
        checkpoint = self.load_checkpoint(path)
        if "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
"""
MODEL = """\
import torch
from mmcv.runner import auto_fp16


class Segmentor(torch.nn.Module):
    @auto_fp16(apply_to=("img",))
    def forward(self, img):
        return img.sum()
"""
REPO = {
    "seg/apis.py": LAUNCHER,
    "seg/hooks.py": HOOKS,
    "seg/runner.py": RUNNER_FILE,
    "seg/model.py": MODEL,
    "seg/__init__.py": "",
}


def migrate(files: Dict[str, str]) -> Dict[str, Tuple[str, List[Tuple[str, str]]]]:
    """path -> (new text, [(code, message)] of the manual-work findings)."""
    names = sorted(files)
    jobs = [(name, files[name].encode()) for name in names]
    with tempfile.TemporaryDirectory() as root:  # the resolver needs the root to be a directory
        results = migrate_repository(jobs, [f"{root}/{n}" for n in names], Settings(), 1, [root])
    out = {}
    for name, result in zip(names, results):
        assert result.internal_error is None, result.internal_error
        manual = [(f.code, f.message) for f in result.all_findings() if not f.fixed]
        out[name] = (result.new.decode(), manual)
    return out


def shim_reasons(out) -> Dict[str, List[str]]:
    return {p: [m for c, m in manual if c == "APX220"] for p, (_t, manual) in out.items() if manual}


# --- the facts ---------------------------------------------------------------------------------


def test_facts_name_hooks_runners_builds_and_switches():
    facts = {}
    for name in ("seg/apis.py", "seg/hooks.py", "seg/runner.py"):
        tree = ast.parse(REPO[name])
        facts[name] = read_framework_facts(tree, summarise(name, name, REPO[name].encode()).imports)
    hook = facts["seg/hooks.py"].classes["SegOptimizerHook"]
    assert (hook.framework, hook.role, hook.methods) == ("mmcv", HOOK, (("after_train_iter", "runner"),))
    runner = facts["seg/runner.py"].classes["IterBasedRunnerAmp"]
    assert (runner.role, runner.methods) == (RUNNER, (("resume", "self"),))
    build = facts["seg/apis.py"].builds
    assert [(b.owner, b.target, b.optimizer) for b in build] == [("train_segmentor", "runner", "optimizer")]
    assert facts["seg/apis.py"].switches == {"mmcv": [("train_segmentor", 18)]}


def test_a_class_of_another_library_with_the_same_base_name_is_no_hook():
    source = "from mylib import OptimizerHook\n\n\nclass H(OptimizerHook):\n    def after_train_iter(self, runner):\n        pass\n"
    assert not read_framework_facts(ast.parse(source), summarise("h.py", "h.py", source.encode()).imports)


# --- native --------------------------------------------------------------------------------------


def test_mmseg_shape_comes_out_native_with_the_scaler_on_the_runner():
    out = migrate(REPO)
    assert not shim_reasons(out)
    launcher, hook, runner = out["seg/apis.py"][0], out["seg/hooks.py"][0], out["seg/runner.py"][0]
    for text in (launcher, hook, runner):  # (the docstring of load_scaler_state names apex.amp)
        assert not re.search(r"^\s*from apex|apex\.amp\.[a-z_]+\(|apexcompat", text, re.M), text
    # created disabled-or-enabled after the if, so a run with fp16 off has one too
    assert 'scaler = torch.amp.GradScaler("cuda", enabled=use_amp)' in launcher
    assert launcher.index("runner = build_runner(") < launcher.index("runner.grad_scaler = scaler")
    assert 'runner.grad_scaler.scale(runner.outputs["loss"]).backward()' in hook
    assert "runner.grad_scaler.step(runner.optimizer)\n        runner.grad_scaler.update()" in hook
    assert 'load_scaler_state(self.grad_scaler, checkpoint["amp"])' in runner
    assert out["seg/model.py"][0] == MODEL


# --- refusals: every file of the component keeps apexcompat.amp, with the reason -------------------


def refused(files: Dict[str, str]) -> Dict[str, List[str]]:
    out = migrate(files)
    for path in ("seg/apis.py", "seg/hooks.py", "seg/runner.py"):
        assert "apexcompat" in out[path][0], (path, out[path][0])
        assert "runner.grad_scaler" not in out[path][0]
    return shim_reasons(out)


@pytest.mark.parametrize(
    "change, reason",
    [
        # a runner of a script without apex would carry no GradScaler to the hook
        ({"tools/benchmark.py": "from mmcv.runner import build_runner\n\nrunner = build_runner(cfg)\n"},
         "a runner (mmcv) is also built at tools/benchmark.py:3, which would carry no GradScaler to "
         "IterBasedRunnerAmp (seg/runner.py), SegOptimizerHook (seg/hooks.py)"),
        # the runner class constructed directly: no build_runner, no GradScaler on it
        ({"tools/resume.py": "from seg.runner import IterBasedRunnerAmp\n\nr = IterBasedRunnerAmp(m, o)\n"},
         "IterBasedRunnerAmp (seg/runner.py) is also constructed directly in tools/resume.py:3, not by "
         "build_runner: that runner would carry no GradScaler"),
        # nothing sets fp16_enabled: mmcv's auto_fp16 would leave the forward in fp32
        ({"seg/apis.py": LAUNCHER.replace("m.fp16_enabled = True", "m.half_mode = True")},
         "the losses IterBasedRunnerAmp (seg/runner.py), SegOptimizerHook (seg/hooks.py) handle come from "
         "forward passes mmcv runs, where no autocast can be placed, and train_segmentor() sets no "
         "`.fp16_enabled = True` to have mmcv's @auto_fp16 run them under autocast"),
        # no model uses auto_fp16
        ({"seg/model.py": MODEL.replace("@auto_fp16(apply_to=(\"img\",))\n    ", "").replace(
            "from mmcv.runner import auto_fp16\n", "")},
         "the losses IterBasedRunnerAmp (seg/runner.py), SegOptimizerHook (seg/hooks.py) handle come from "
         "forward passes mmcv runs, and no file uses its @auto_fp16"),
        # a site in a hook method mmcv does not call with the runner
        ({"seg/hooks.py": HOOKS + "\n    def state(self):\n        return amp.state_dict()\n"},
         "amp.state_dict in SegOptimizerHook.state, which mmcv does not call with the runner (its hook methods)"),
    ],
    ids=["runner-built-elsewhere", "runner-constructed-directly", "no-fp16-switch", "no-auto-fp16", "other-method"],
)
def test_refusals_keep_the_whole_component_on_the_shim(change, reason):
    reasons = refused({**REPO, **change})
    launcher = reasons["seg/apis.py"]
    assert len(launcher) == 1 and reason in launcher[0], launcher


def test_hook_given_another_optimizer_is_refused():
    hooks = HOOKS.replace("runner.optimizer", "self.optimizer")
    out = migrate({**REPO, "seg/hooks.py": hooks})
    assert "apexcompat" in out["seg/apis.py"][0] and "apexcompat" in out["seg/hooks.py"][0]
    reasons = shim_reasons(out)["seg/hooks.py"]
    assert any("this amp.scale_loss is given self.optimizer, not runner.optimizer" in r for r in reasons), reasons


def test_second_run_is_a_no_op():
    first = {p: t for p, (t, _m) in migrate(REPO).items()}
    second = {p: t for p, (t, _m) in migrate(first).items()}
    assert second == first
