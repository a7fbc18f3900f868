"""Optimizer wrapper classes (``migrate.optimizer_wrappers``): which classes are proven to step
the optimizer they hold once, which subclasses undo the proof (the plan), and what the
migration does with a task that steps such a wrapper (real CLI runs in temp dirs)."""

from __future__ import annotations

import ast
import sys
import textwrap
from pathlib import Path

import pytest
from test_repo_plan import plan_for, report, write_tree

from migrate.optimizer_wrappers import wrapped_attribute

PARAM_GROUPS = """
    @property
    def param_groups(self):
        return self.inner.param_groups
"""


def wrapper(step_body: str, extra: str = PARAM_GROUPS) -> ast.ClassDef:
    text = "class W:\n    def step(self, *, closure=None, where=None):\n"
    text += textwrap.indent(textwrap.dedent(step_body), " " * 8) + textwrap.indent(textwrap.dedent(extra), "    ")
    return ast.parse(text).body[0]  # type: ignore[return-value]


@pytest.mark.parametrize(
    "body",
    [
        "self.inner.step()\n",
        "if where is None:\n    raise RuntimeError('where')\nassert where >= 0\nself.inner.step()\n",
        "if closure is None:\n    self.inner.step()\nelse:\n    self.inner.step(closure)\n",
        "return self.inner.step(closure)\n",
        "loss = self.inner.step()\nfor group in self.inner.param_groups:\n    group['lr'] = where\nreturn loss\n",
    ],
)
def test_a_step_that_steps_the_held_optimizer_once_on_every_path_is_proven(body):
    assert wrapped_attribute(wrapper(body)) == "inner"


@pytest.mark.parametrize(
    "body, extra",
    [
        ("if where is None:\n    return\nself.inner.step()\n", PARAM_GROUPS),  # a path without a step
        # state of its own, which would fall behind on the steps a GradScaler skips whole
        ("self._step += 1\nself.inner.step()\n", PARAM_GROUPS),
        ("self.count = 1\nloss = self.inner.step()\nreturn loss\n", PARAM_GROUPS),
        ("self.rates[0] = where\nself.inner.step()\n", PARAM_GROUPS),
        ("self.inner.step()\nself.inner.step()\n", PARAM_GROUPS),  # twice
        ("for _ in range(2):\n    self.inner.step()\n", PARAM_GROUPS),  # in a loop
        ("with lock:\n    self.inner.step()\n", PARAM_GROUPS),  # not followed into a with
        ("try:\n    return\nfinally:\n    pass\nself.inner.step()\n", PARAM_GROUPS),  # returns before it
        ("while where:\n    return\nself.inner.step()\n", PARAM_GROUPS),
        pytest.param(
            "match where:\n    case 0:\n        return\nself.inner.step()\n", PARAM_GROUPS,
            marks=pytest.mark.skipif(sys.version_info < (3, 10), reason="match needs Python 3.10"),
        ),
        ("if where > 0:\n    self.inner.step()\n", PARAM_GROUPS),  # only on one branch
        ("self.other.step()\n", PARAM_GROUPS),  # steps something else than param_groups names
        ("self.inner.step()\n", "def param_groups(self):\n    return self.inner.param_groups\n"),  # no property
        ("self.inner.step()\n", "@property\ndef param_groups(self):\n    return []\n"),
        ("self.inner.step()\n", PARAM_GROUPS + "\ndef flush(self):\n    self.inner.step()\n"),  # another step
        ("self.inner.step()\n", PARAM_GROUPS + "\nstep = None\n"),  # rebound in the class body
        ("self.inner.step()\nyield\n", PARAM_GROUPS),  # a generator
    ],
)
def test_anything_else_is_not_a_wrapper(body, extra):
    assert wrapped_attribute(wrapper(body, extra)) is None


OPTIM = """\
    import torch


    class Scheduled:
        def __init__(self, lr):
            self.lr = lr
            self.optimizer = None

        def prepare(self, params):
            self.optimizer = torch.optim.SGD(params, lr=self.lr)

        @property
        def param_groups(self):
            return self.optimizer.param_groups

        def step(self, *, where):
            for group in self.optimizer.param_groups:
                group["lr"] = self.lr * (1 - where)
            self.optimizer.step()
    """

TASK = """\
    import typing

    import torch
    from apex import amp

    from optim import Scheduled


    class Task:
        def __init__(self, model):
            self.model = model
            self.optimizer = None

        def set_optimizer(self, optimizer{annotation}):
            self.optimizer = optimizer

        def prepare(self):
            self.optimizer.prepare(self.model.parameters())
            self.model, self.optimizer.optimizer = amp.initialize(self.model, self.optimizer.optimizer)

        def train_step(self, x, where):
            loss = self.model(x).mean()
            self.optimizer.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step(where=where)
    """


def test_the_plan_names_the_wrapper_in_the_file_that_scales_the_loss(tmp_path: Path):
    write_tree(tmp_path, {"optim.py": OPTIM, "task.py": HOLDERS["setter"]})
    plan = plan_for(tmp_path)
    assert plan.files[str(tmp_path / "task.py")].optimizer_wrappers == (("Scheduled", "optimizer"),)
    assert str(tmp_path / "optim.py") not in plan.files  # it scales no loss


def test_a_subclass_that_redefines_step_undoes_the_proof(tmp_path: Path):
    subclass = "\n\nclass Clipped(Scheduled):\n    def step(self, *, where):\n        pass\n"
    write_tree(tmp_path, {
        "optim.py": OPTIM, "more.py": "from optim import Scheduled" + subclass,
        "task.py": HOLDERS["setter"],
    })
    assert str(tmp_path / "task.py") not in plan_for(tmp_path).files


#: the ways the task's class says what self.optimizer holds
HOLDERS = {
    "setter": TASK.format(annotation=": Scheduled"),
    "optional-setter": TASK.format(annotation=": typing.Optional[Scheduled]"),
    "string-setter": TASK.format(annotation=': "Scheduled"'),
    "constructor": TASK.replace("set_optimizer(self, optimizer{annotation}):\n            self.optimizer = optimizer",
                                "build(self):\n            self.optimizer = Scheduled(0.1)"),
    "annotated-attribute": TASK.replace("set_optimizer(self, optimizer{annotation}):\n            self.optimizer = "
                                        "optimizer", "set_optimizer(self, optimizer):\n            self.optimizer: "
                                        "Scheduled = optimizer"),
}


@pytest.mark.parametrize("holder", HOLDERS)
def test_the_wrapper_is_stepped_through_the_scaler_with_its_keywords(tmp_path: Path, holder):
    task = HOLDERS[holder]
    assert "{annotation}" not in task or holder.endswith("setter")
    write_tree(tmp_path, {"optim.py": OPTIM, "task.py": task})
    findings = report(tmp_path, "--to", "native")["findings"]
    codes = sorted(f["code"] for f in findings)
    assert "APX220" not in codes and "APX228" in codes, findings
    step = next(f for f in findings if f["code"] == "APX228")
    assert step["message"].startswith(
        "self.optimizer.step(where=where) -> self.scaler.step(self.optimizer, where=where) + self.scaler.update(): "
        "Scheduled.step() steps self.optimizer.optimizer once"
    ), step


@pytest.mark.parametrize(
    "annotation, reason",
    [
        ("", "self.optimizer = optimizer in set_optimizer(): its class is not known"),
        (": torch.optim.Optimizer", "self.optimizer = optimizer in set_optimizer(): its class is not known"),
        (": Other", "Other is not a proven optimizer wrapper"),
    ],
)
def test_without_a_known_class_the_file_keeps_the_shim_and_says_why(tmp_path: Path, annotation, reason):
    write_tree(tmp_path, {"optim.py": OPTIM, "task.py": TASK.format(annotation=annotation)})
    findings = report(tmp_path, "--to", "native")["findings"]
    shim = [f["message"] for f in findings if f["code"] == "APX220"]
    assert len(shim) == 1 and f"self.optimizer.step(where=where) steps self.optimizer, which holds it: {reason}" in shim[0]
