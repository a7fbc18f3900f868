"""APX70x fixtures: apex.fp16_utils / FP16_Optimizer (the rule's own examples plus edge cases)."""

from __future__ import annotations

import pytest

from migrate.rules.base import Example
from migrate.rules.fp16_optimizer import (
    AUTOCAST_TODO,
    CAST_TODO,
    LOAD_TODO,
    MANUAL_TODO,
    NOT_SIMPLE_TODO,
    FP16OptimizerRule,
)
from migrate.settings import Settings

from neighbour_harness import check_example, example_ids, run

TODO = "# TODO(apexcompat): "

EXTRA = [
    Example(
        "trainer-class-on-self",
        "import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n\nclass Trainer:\n    def __init__(self, model):\n"
        "        self.model = model.cuda().half()\n"
        "        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)\n"
        "        self.optimizer = FP16_Optimizer(optimizer, dynamic_loss_scale=True)\n"
        "        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer.optimizer, 10)\n\n"
        "    def train_step(self, x, y):\n        self.optimizer.zero_grad()\n        pred = self.model(x.half())\n"
        "        loss = self.criterion(pred, y)\n        self.optimizer.backward(loss)\n"
        "        grad_norm = self.optimizer.clip_master_grads(5.0)\n        self.optimizer.step()\n"
        "        return loss.item(), grad_norm, self.optimizer.loss_scale\n",
        "import torch\n\n\nclass Trainer:\n    def __init__(self, model):\n"
        "        self.model = model.cuda()\n        optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-4)\n"
        '        self.optimizer = optimizer\n        self.scaler = torch.amp.GradScaler("cuda")\n'
        "        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, 10)\n\n"
        "    def train_step(self, x, y):\n        self.optimizer.zero_grad()\n"
        '        with torch.autocast("cuda", dtype=torch.float16):\n            pred = self.model(x)\n'
        "            loss = self.criterion(pred, y)\n        self.scaler.scale(loss).backward()\n"
        "        self.scaler.unscale_(self.optimizer)\n"
        "        grad_norm = torch.nn.utils.clip_grad_norm_(self.model.parameters(), 5.0)\n"
        "        self.scaler.step(self.optimizer)\n        self.scaler.update()\n"
        "        return loss.item(), grad_norm, self.scaler.get_scale()\n",
        ("APX701", "APX705"),
    ),
    Example(
        "wrapper-handed-to-a-function-of-this-file",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef train(model, optimizer, loss):\n"
        "    optimizer.backward(loss)\n\n\n"
        "def main(model, opt):\n    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n    train(model, opt, 0)\n",
        "import torch\n\n\ndef train(model, optimizer, loss, scaler):\n    " + TODO + AUTOCAST_TODO + "\n"
        "    scaler.scale(loss).backward()\n\n\ndef main(model, opt):\n    scaler = torch.amp.GradScaler(\"cuda\")\n"
        "    train(model, opt, 0, scaler=scaler)\n",
        ("APX701", "APX704"),
    ),
    Example(
        "function-also-called-with-another-optimizer",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef train(optimizer, loss):\n    optimizer.backward(loss)\n"
        "\n\n"
        "def main(opt, other):\n    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n    train(opt, 0)\n"
        "    train(other, 1)\n",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef train(optimizer, loss):\n    optimizer.backward(loss)\n"
        "\n\n"
        "def main(opt, other):\n    " + TODO + NOT_SIMPLE_TODO + "\n"
        "    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n"
        "    train(opt, 0)\n    train(other, 1)\n",
        ("APX702",),
    ),
    Example(
        "overflow-plumbing-reported",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef run(opt, loss):\n"
        "    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n"
        "    opt.backward(loss)\n    if not opt.overflow:\n        opt.step()\n",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef run(opt, loss):\n    " + TODO + NOT_SIMPLE_TODO + "\n"
        "    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n    opt.backward(loss)\n    if not opt.overflow:\n"
        "        opt.step()\n",
        ("APX702",),
    ),
    Example(
        "update-master-grads-false-reported",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef run(opt, loss):\n    opt = FP16_Optimizer(opt)\n"
        "    opt.backward(loss, update_master_grads=False)\n",
        "from apex.fp16_utils import FP16_Optimizer\n\n\ndef run(opt, loss):\n    " + TODO + NOT_SIMPLE_TODO + "\n"
        "    opt = FP16_Optimizer(opt)\n    opt.backward(loss, update_master_grads=False)\n",
        ("APX702",),
    ),
    Example(
        "loss-scale-one-needs-no-scaler",
        "import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n\ndef fit(model, batches):\n"
        "    optimizer = FP16_Optimizer(torch.optim.SGD(model.parameters(), lr=0.01))\n"
        "    for x in batches:\n        loss = model(x).mean()\n        optimizer.backward(loss * 0.5)\n"
        "        optimizer.step()\n",
        "import torch\n\n\ndef fit(model, batches):\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)\n"
        '    for x in batches:\n        with torch.autocast("cuda", dtype=torch.float16):\n'
        '            loss = model(x).mean()\n'
        "        (loss * 0.5).backward()\n        optimizer.step()\n",
        ("APX701",),
    ),
    Example(
        "forward-in-another-function",
        "import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n\ndef fit(model, opt, batches):\n"
        "    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n    for x in batches:\n"
        "        loss = compute_loss(model, x)\n"
        "        opt.backward(loss)\n        opt.step()\n",
        "import torch\n\n\ndef fit(model, opt, batches):\n"
        '    scaler = torch.amp.GradScaler("cuda")\n    for x in batches:\n        loss = compute_loss(model, x)\n'
        "        "
        + TODO
        + AUTOCAST_TODO
        + "\n        scaler.scale(loss).backward()\n        scaler.step(opt)\n        scaler.update()\n",
        ("APX701", "APX704"),
    ),
    Example(
        "resume-from-old-checkpoint",
        "import torch\nfrom apex.fp16_utils import FP16_Optimizer\n\n\ndef main(model, opt, ckpt):\n"
        '    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n    opt.load_state_dict(ckpt["optimizer"])\n'
        "    opt.zero_grad(set_grads_to_None=True)\n",
        "import torch\n\n\ndef main(model, opt, ckpt):\n"
        '    scaler = torch.amp.GradScaler("cuda")\n    '
        + TODO
        + LOAD_TODO
        + '\n    opt.load_state_dict(ckpt["optimizer"])\n'
        + "    opt.zero_grad(set_to_none=True)\n",
        ("APX701", "APX709"),
    ),
    Example(
        "manual-master-params-reported",
        "from apex.fp16_utils import prep_param_lists\n\nmodel_params, master_params = prep_param_lists(model)\n",
        "from apex.fp16_utils import prep_param_lists\n\n" + TODO + MANUAL_TODO.format(name="prep_param_lists") + "\n"
        "model_params, master_params = prep_param_lists(model)\n",
        ("APX706",),
    ),
    Example(
        "network-to-half-without-fp16-optimizer",
        "from apex.fp16_utils import network_to_half\n\nmodel = network_to_half(model)\n",
        "from apex.fp16_utils import network_to_half\n\n" + TODO + CAST_TODO.format(name="network_to_half") + "\n"
        "model = network_to_half(model)\n",
        ("APX706",),
    ),
    Example(
        "star-import-and-torch-2-2",
        "import torch\nfrom apex.fp16_utils import *\n\n\ndef fit(model, batches):\n"
        "    model.half()\n    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    opt = FP16_Optimizer(opt, dynamic_loss_scale=True)\n"
        "    for x in batches:\n        loss = model(x).sum()\n        opt.backward(loss)\n        opt.step()\n",
        "import torch\n\n\ndef fit(model, batches):\n"
        "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    scaler = torch.cuda.amp.GradScaler()\n"
        '    for x in batches:\n        with torch.autocast("cuda", dtype=torch.float16):\n'
        '            loss = model(x).sum()\n'
        "        scaler.scale(loss).backward()\n        scaler.step(opt)\n        scaler.update()\n",
        ("APX701", "APX705"),
        Settings(target_torch=(2, 2)),
    ),
    Example(
        "contrib-location-and-scale-factor",
        "import torch\nfrom apex.contrib.optimizers import FP16_Optimizer\n\n\ndef fit(model, opt, data):\n"
        '    opt = FP16_Optimizer(opt, dynamic_loss_scale=True, dynamic_loss_args={"init_scale": 2**20, '
        '"scale_factor": 4.0})\n'
        "    for x in data:\n        out = model(x)\n        loss = out.float().mean()\n        opt.backward(loss)\n"
        "        opt.step()\n",
        "import torch\n\n\ndef fit(model, opt, data):\n"
        '    scaler = torch.amp.GradScaler(\n        "cuda",\n        init_scale=2**20,\n        growth_factor=4.0,\n'
        '        backoff_factor=1 / 4.0,\n    )\n'
        "    for x in data:\n        out = model(x)\n        loss = out.float().mean()\n        "
        + TODO
        + AUTOCAST_TODO
        + "\n"
        "        scaler.scale(loss).backward()\n        scaler.step(opt)\n        scaler.update()\n",
        ("APX701", "APX704"),
    ),
]

CASES = FP16OptimizerRule.EXAMPLES + FP16OptimizerRule.NOOP_EXAMPLES + EXTRA


@pytest.mark.parametrize("example", CASES, ids=example_ids(CASES))
def test_fp16_optimizer_rule(example: Example) -> None:
    check_example(FP16OptimizerRule, example)


def test_other_rules_todo_comments_are_not_reported_as_apx706() -> None:
    """A second run must not claim another rule's TODO comment as an fp16_utils helper (APX706)."""
    source = (
        "import torch\nfrom apex.fp16_utils import *\n\n\ndef fit(model, opt):\n"
        "    " + TODO + "this file keeps apex.amp semantics through apexcompat.amp\n"
        "    model, opt = amp.initialize(model, opt)\n"
    )
    result = run(FP16OptimizerRule, Example("foreign-todo", source, None, ()))
    assert [f.code for f in result.findings] == []


@pytest.mark.parametrize("name", ["network_to_half", "FP16Model"])
def test_own_cast_todo_is_reported_again_on_a_second_run(name: str) -> None:
    """The rule still recognises its own APX706 TODO once the call it marked is gone."""
    source = "import torch\n\n\ndef fit(model):\n    " + TODO + CAST_TODO.format(name=name) + "\n    model(1)\n"
    result = run(FP16OptimizerRule, Example("own-todo", source, None, ()))
    assert [f.code for f in result.findings] == ["APX706"]
