"""The reader route (APX252) in a package: a reader imports the initializing module by its own
name from the package (``from train import runner``) unless that name is taken in the reader,
where it imports the dotted path (``import train.runner``) and reads the variable through it."""

from __future__ import annotations

from pathlib import Path

from migrate.cli import main

STEPS = '''\
import torch
from apex import amp
{extra}

class PlainStepper:
    def __init__(self, net, batches, optimizer):
        self.net = net
        self.batches = iter(batches)
        self.optimizer = optimizer

    def step(self):
        x, y = next(self.batches)
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class HalfStepper(PlainStepper):
    def step(self):
        x, y = next(self.batches)
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
'''

RUNNER = '''\
import torch
from apex import amp

from train.steps import HalfStepper, PlainStepper


class Runner:
    def __init__(self, net, batches, half=False):
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        if half:
            net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.stepper = (HalfStepper if half else PlainStepper)(net, batches, optimizer)
'''

LOGGED = '''\
from train.steps import HalfStepper


class LoggedStepper(HalfStepper):
    def step(self):
        value = super().step()
        print(value)
        return value
'''


def _migrate(tmp_path: Path, extra: str = "") -> str:
    package = tmp_path / "train"
    package.mkdir()
    (package / "__init__.py").write_text('"""The training package."""\n')
    (package / "steps.py").write_text(STEPS.format(extra=extra))
    (package / "runner.py").write_text(RUNNER)
    (package / "logged.py").write_text(LOGGED)
    assert main(["--to", "native", "--quiet", "--allow-no-vcs", str(tmp_path)]) in (0, 1)
    assert "GradScaler" in (package / "runner.py").read_text()
    return (package / "steps.py").read_text()


def test_a_reader_imports_the_home_by_its_name_from_the_package(tmp_path: Path) -> None:
    steps = _migrate(tmp_path)
    assert "        from train import runner\n" in steps
    assert "runner.scaler.scale(loss).backward()" in steps
    assert "import train.runner" not in steps and "apex" not in steps


def test_a_reader_whose_own_name_is_taken_imports_the_dotted_path(tmp_path: Path) -> None:
    steps = _migrate(tmp_path, extra='\nrunner = "steps"\n')
    assert "        import train.runner\n" in steps
    assert "train.runner.scaler.scale(loss).backward()" in steps
    assert "from train import runner" not in steps and "apex" not in steps
