"""The inheritance route (``heir_plan``): amp.initialize in a method of a base class, the
losses scaled in subclasses of it in other files; and the autocast span over a loop that
accumulates the loss.  Whole-repository runs in memory, as the repository examples run."""

from __future__ import annotations

import ast
import textwrap
from typing import Dict, List, Tuple

from migrate.engine import migrate_source
from migrate.pipeline import migrate_repository
from migrate.repo_index import summarise
from migrate.repo_plan import build_plan
from migrate.settings import Settings

ROOT = "/repo"

BASE = """\
import torch
from apex import amp


class Trainer:
    def __init__(self, net):
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        self.ready = False

    def prepare(self):
        if not self.ready:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")
            self.ready = True

    def step(self, x):
        loss = self.net(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
"""

HEIR = """\
from apex import amp

from base import Trainer


class Heir(Trainer):
{init}    def step(self, x):
        loss = self.net(x).sum(){extra}
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
"""

OVERRIDE = """\
from apex import amp

from heir import Heir


class HalfHeir(Heir):
    def prepare(self):
        if not self.ready:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O2")
            self.ready = True
"""


def run(files: Dict[str, str]) -> Tuple[Dict[str, str], List[str]]:
    """The migrated texts and every finding as ``path: CODE message``."""
    jobs = [(name, textwrap.dedent(text).encode()) for name, text in files.items()]
    results = migrate_repository(jobs, [f"{ROOT}/{n}" for n in files], Settings(), 1, [ROOT])
    texts = {name: r.new.decode() for name, r in zip(files, results)}
    for name, text in texts.items():
        ast.parse(text, name)
    return texts, [f"{r.path}: {f.code} {f.message}" for r in results for f in r.findings]


def plan(files: Dict[str, str]):
    summaries = [summarise(f"{ROOT}/{n}", n, textwrap.dedent(t).encode()) for n, t in files.items()]
    return build_plan([s for s in summaries if s is not None], [ROOT])


def test_the_plan_joins_the_base_its_heirs_and_an_override_in_one_component():
    files = {"base.py": BASE, "heir.py": HEIR.format(init="", extra=""), "half.py": OVERRIDE}
    files_plan = plan(files).files
    base, heir, half = (files_plan[f"{ROOT}/{n}"] for n in ("base.py", "heir.py", "half.py"))
    assert base.component == heir.component == half.component is not None
    assert base.heir_base == "Trainer" and base.carried == ()  # its own methods are its file's
    assert heir.heir_methods == (("Heir", "step"),) and heir.carried == (("Heir", "step", "self.scaler"),)
    assert half.heir_inits == ("HalfHeir",) and half.heir_methods == ()
    assert {base.scaler_name, heir.scaler_name, half.scaler_name} == {"scaler"}


def test_base_heir_and_override_come_out_native_together():
    texts, findings = run({"base.py": BASE, "heir.py": HEIR.format(init="", extra=""), "half.py": OVERRIDE})
    assert not any("apex" in text for text in texts.values())
    assert "        self.scaler = torch.amp.GradScaler(enabled=False)\n        self.ready = False\n" in texts["base.py"]
    # the heir scales through the inherited scaler, its forward under the scaler's switch
    assert "enabled=self.scaler.is_enabled()" in texts["heir.py"]
    assert "self.scaler.scale(loss).backward()" in texts["heir.py"]
    assert "self.scaler.step(self.optimizer)" in texts["heir.py"]
    # the override re-creates the same attribute in its branch and makes no disabled one
    assert '            self.scaler = torch.amp.GradScaler("cuda")\n            self.ready = True\n' in texts["half.py"]
    assert "enabled=False" not in texts["half.py"]
    assert any(f.startswith("heir.py: APX239 self.scaler is inherited") for f in findings)
    assert not any(" APX220 " in f for f in findings)


def test_an_heir_whose_init_skips_the_base_keeps_the_whole_hierarchy_on_the_shim():
    init = "    def __init__(self, net):\n        self.net = net\n\n"
    texts, findings = run({"base.py": BASE, "heir.py": HEIR.format(init=init, extra="")})
    assert all("from apexcompat import amp" in text for text in texts.values())
    assert any(
        f.startswith("base.py: APX220 Heir in heir.py derives from Trainer but its __init__ does not call the base's")
        for f in findings
    )


def test_the_attribute_takes_a_name_no_file_of_the_hierarchy_uses():
    heir = HEIR.format(init="", extra="\n        scaler = 2.0\n        loss = loss * scaler")
    texts, _ = run({"base.py": BASE, "heir.py": heir})
    assert "self.grad_scaler = torch.amp.GradScaler(enabled=False)" in texts["base.py"]
    assert "self.grad_scaler.scale(loss).backward()" in texts["heir.py"]
    assert "self.scaler" not in texts["base.py"] + texts["heir.py"]


ACCUMULATED = """\
import torch
from apex import amp

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
weights = [0.5, 0.5]
for x in batches:
    outputs = model(x)
    loss = None
    for i in range(2):
        {body}
    with amp.scale_loss(loss, optimizer) as scaled:
        scaled.backward()
    optimizer.step()
"""


def test_a_loop_that_accumulates_the_loss_is_inside_the_autocast():
    body = "term = weights[i] * outputs[:, i].mean()\n        loss = term if loss is None else loss + term"
    text = migrate_source(ACCUMULATED.format(body=body).encode(), "t.py", Settings()).new.decode()
    assert '    with torch.autocast("cuda", dtype=torch.float16):\n        outputs = model(x)\n' in text
    assert "\n        for i in range(2):\n" in text  # indented into the with
    assert "apex" not in text


def test_a_loop_that_steps_is_not_taken_into_the_autocast():
    body = "loss = outputs[:, i].mean()\n        optimizer.zero_grad()\n        optimizer.step()"
    result = migrate_source(ACCUMULATED.format(body=body).encode(), "t.py", Settings())
    assert "\n    for i in range(2):\n" in result.new.decode()  # left where it was
    assert not any(f.code == "APX209" for f in result.findings)
