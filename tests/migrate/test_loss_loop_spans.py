"""A training step whose loss is summed in a loop of an outer block and only rescaled next to
its amp.scale_loss (``rules/_amp_loss_loop.py``), across the files of DL-Art-School's shape: the
trainer initializes, the step class scales, and a base class (with a sibling subclass that never
initializes and no file builds) keeps amp's state in its checkpoints, which it reads from the
GradScaler the trainer keeps on self (APX259).  Through the command line, on disk, twice: the
second run's plan sees the trainer without apex.amp, and must neither rewrite nor report
anything new."""

from __future__ import annotations

from pathlib import Path

from helpers_driver import run_cli

from migrate.rules.base import example_files

REPOSITORY = """\
# file: models/__init__.py
# file: models/base_model.py
import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.optimizers = []

    def save_training_state(self, path):
        state = {"optimizers": [o.state_dict() for o in self.optimizers]}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, path)
# file: models/feature_model.py
import torch

from models.base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize(self, loss):
        loss.backward()
# file: models/steps.py
import torch
from apex import amp


class Step(torch.nn.Module):
    def __init__(self, env, net, injectors, losses):
        super().__init__()
        self.env, self.net, self.injectors, self.losses = env, net, injectors, losses
        self.optimizers = [torch.optim.SGD(net.parameters(), lr=0.1)]

    def do_forward_backward(self, state, loss_id):
        local_state = dict(state)
        for inj in self.injectors:
            local_state.update(inj(self.net, local_state))
        if self.losses:
            total_loss = 0
            for loss in self.losses:
                total_loss += loss(local_state)
            if isinstance(total_loss, torch.Tensor):
                total_loss = total_loss / self.env["accumulate"]
                if self.env["amp"]:
                    with amp.scale_loss(total_loss, self.optimizers, loss_id) as scaled_loss:
                        scaled_loss.backward()
                else:
                    total_loss.backward()

    def do_step(self):
        for optimizer in self.optimizers:
            optimizer.step()
# file: models/trainer.py
import torch
from apex import amp

from models.base_model import BaseModel
from models.steps import Step


class Trainer(BaseModel):
    def __init__(self, opt, net, injectors, losses):
        super().__init__(opt)
        self.env = {"accumulate": opt["accumulate"], "amp": "amp_opt_level" in opt}
        self.steps = [Step(self.env, net, injectors, losses)]
        self.optimizers = [o for s in self.steps for o in s.optimizers]
        if "amp_opt_level" in opt:
            net, self.optimizers = amp.initialize(net, self.optimizers, opt_level=opt["amp_opt_level"])
"""


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


def test_step_and_base_checkpoint_migrate_and_a_second_run_changes_nothing(tmp_path):
    for name, text in example_files(REPOSITORY):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    first = run_cli(["--allow-no-vcs", "."], tmp_path, rules=None)
    after_first = _tree(tmp_path)
    steps = after_first["models/steps.py"]
    assert all("apex" not in text for text in after_first.values()), first.stdout
    # the injector loop and the loss's start and loop each under the scaler's switch
    assert steps.count('with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):') == 2
    # the base keeps amp's state from the GradScaler the trainer keeps on self
    assert "self.scaler = scaler" in after_first["models/trainer.py"]
    assert 'state["amp"] = self.scaler.state_dict()' in after_first["models/base_model.py"]
    assert b"APX403" not in first.stdout and b"APX220" not in first.stdout, first.stdout
    second = run_cli(["--allow-no-vcs", "."], tmp_path, rules=None)
    assert _tree(tmp_path) == after_first, "a second run must change nothing"
    assert b"APX403" not in second.stdout and b"APX220" not in second.stdout, second.stdout
