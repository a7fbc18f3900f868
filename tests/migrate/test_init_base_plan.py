"""The base-class route for a subclass that initializes amp in its own ``__init__``
(``migrate/init_base_plan.py``): the ways that ``__init__`` may run a base method before the
GradScaler is kept on self, each refused with its reason; ``nn.Module`` as a base, which runs
none; and ``base_plan.lendable_base`` naming a caller in a file the index left out."""

from __future__ import annotations

from typing import Dict, List

from migrate.base_plan import lendable_base
from migrate.pipeline import migrate_repository
from migrate.repo_index import AmpSite, ModuleSummary
from migrate.rules.base import example_files
from migrate.settings import Settings

BASE = """\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch
from apex import amp

from base_model import BaseModel


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")
#INIT

    def optimize_parameters(self, batch):
        loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
#TRAINER
# file: base_model.py
import torch
from apex import amp
#IMPORTS


class BaseModel(#BASES):
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        torch.save({"amp": amp.state_dict()}, f"{step}.state")

    def resume_training(self, path):
        amp.load_state_dict(torch.load(path)["amp"])
#BASE
"""


def _layout(init: str = "", trainer: str = "", imports: str = "", bases: str = "", base: str = "") -> str:
    text = BASE.replace("#INIT\n", init).replace("#TRAINER\n", trainer).replace("#IMPORTS\n", imports)
    return text.replace("#BASES", bases).replace("#BASE\n", base)


def _migrate(text: str, left_out: str = "") -> Dict[str, List[str]]:
    """File -> the messages of its findings (``left_out``: files the prefilter did not admit)."""
    files = example_files(text)
    keys = [f"/example-repo/{name}" for name, _ in files]
    others = [(f"/example-repo/{n}", n, t.encode()) for n, t in (example_files(left_out) if left_out else [])]
    results = migrate_repository([(n, t.encode()) for n, t in files], keys, Settings(), 1, ["/example-repo"],
                                 others)
    for result in results:
        assert result.internal_error is None, result.internal_error
    return {name: [f"{f.code} {f.message}" for f in r.findings] for (name, _), r in zip(files, results)}


def _base_reason(found: Dict[str, List[str]]) -> str:
    refused = [m for m in found["base_model.py"] if m.startswith("APX403")]
    assert refused, found["base_model.py"]
    return refused[0]


def test_the_plain_layout_is_native() -> None:
    found = _migrate(_layout())
    assert any(m.startswith("APX259") for m in found["trainer.py"])
    assert not any(m.startswith("APX403") for m in found["base_model.py"])


def test_a_base_method_reached_through_super_is_refused() -> None:
    found = _migrate(_layout(init="        super().load()\n",
                             base="\n    def load(self):\n        self.resume_training(self.opt['resume'])\n"))
    assert "Trainer.__init__ runs resume_training(), which uses amp" in _base_reason(found)


def test_a_property_setter_run_by_an_assignment_in_init_is_refused() -> None:
    setter = (
        "\n    @property\n    def state(self):\n        return None\n\n    @state.setter\n"
        "    def state(self, path):\n        self.resume_training(path)\n"
    )
    found = _migrate(_layout(init="        self.state = opt.get('resume')\n", trainer=setter))
    assert "Trainer.__init__ runs resume_training(), which uses amp" in _base_reason(found)


def test_a_base_from_outside_the_repository_is_refused() -> None:
    found = _migrate(_layout(imports="from somelib import Model\n", bases="Model"))
    assert "BaseModel derives from Model, whose __init__ is not known" in _base_reason(found)


def test_nn_module_as_the_base_of_the_base_is_native() -> None:
    found = _migrate(_layout(imports="from torch import nn\n", bases="nn.Module"))
    assert any(m.startswith("APX259") for m in found["trainer.py"]), found["trainer.py"]


def test_lendable_base_names_a_caller_in_a_file_outside_the_index() -> None:
    path = "/r/base.py"
    summary = ModuleSummary(path, "base.py", classes={"Base"},
                            amp_sites=[AmpSite("state_dict", 3, "Base", method="save", receiver="self")])
    why = lendable_base((path, "Base"), {path: summary}, lambda d: False,
                        lambda n, p: [("/r/eval.py", "eval.py", 5, "main")], None)
    assert why == "Base is also used in eval.py (in main), where no GradScaler exists"


def test_the_attribute_is_one_no_class_above_the_base_uses() -> None:
    core = "# file: core.py\nclass Core:\n    def __init__(self):\n        self.scaler = 2\n"
    found = _migrate(_layout(imports="from core import Core\n", bases="Core") + core)
    kept = [m for m in found["trainer.py"] if m.startswith("APX259")]
    assert kept and kept[0].startswith("APX259 self.grad_scaler keeps the GradScaler"), found["trainer.py"]


#: a sibling of the initializing subclass whose file also keeps the base as a value: a
#: registry may build a BaseModel, whose methods would find no GradScaler on self
STORED = """\
# file: feature.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    pass


MODELS = {"base": BaseModel}
"""


def test_a_base_also_stored_as_a_value_where_it_is_derived_from_is_refused() -> None:
    found = _migrate(_layout() + STORED)
    assert "BaseModel is used in feature.py other than as a base class" in _base_reason(found)


def test_a_base_also_stored_as_a_value_in_a_file_left_out_of_the_index_is_refused() -> None:
    found = _migrate(_layout(), left_out=STORED)
    assert "BaseModel is also used in feature.py" in _base_reason(found)
