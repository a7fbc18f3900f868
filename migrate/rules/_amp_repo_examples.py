"""The documented repository examples of the cross-file plan (``repo_plan``): several
files each, opened by ``# file: NAME`` lines.  tests/migrate/test_rule_examples.py runs them
through the whole-repository pipeline (index, plan, one migration per file) and the docs page
lists them; ``InitializeRule`` carries them."""

from __future__ import annotations

from typing import List

from ._amp_examples import AMP_OR_NONE_GIVEN
from .base import Example
from .checkpoints import HELPER, HOLDER, LIST_HELPER, PASSING_HELPER

#: the loss scalers of a timm-style ``utils/cuda.py`` (the before text of two examples)
TIMM_STYLE_SCALERS = """\
# file: utils/__init__.py
from .cuda import ApexScaler, NativeScaler
# file: utils/cuda.py
import torch
from torch.nn.utils import clip_grad_norm_

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if clip_grad is not None:
            clip_grad_norm_(amp.master_params(optimizer), clip_grad)
        optimizer.step()

    def state_dict(self):
        return amp.state_dict()


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        if clip_grad is not None:
            self._scaler.unscale_(optimizer)
            clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()
"""

#: a GAN whose model factory initializes both networks, and whose training loop hands each
#: loss to a backward helper (the before text of two examples; ``{main}`` is main's body)
GAN_FACTORY = """\
# file: nets/__init__.py
# file: nets/build.py
import torch
from apex import amp


def build_gan(cfg):
    gen = torch.nn.Linear(16, 16).cuda()
    disc = torch.nn.Linear(16, 1).cuda()
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4)
    if cfg.amp:
        gen, opt_g = amp.initialize(gen, opt_g, opt_level="O1")
        disc, opt_d = amp.initialize(disc, opt_d, opt_level="O1")
    return gen, disc, opt_g, opt_d
# file: train.py
import torch

from nets.build import build_gan


def backward_step(cfg, loss, optimizer):
    optimizer.zero_grad()
    if cfg.amp:
        from apex import amp
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()


def main(cfg, batches):
{main}"""
GAN_MAIN = """\
    gen, disc, opt_g, opt_d = build_gan(cfg)
    for real in batches:
        fake = gen(torch.randn_like(real))
        loss_d = disc(fake.detach()).mean() - disc(real).mean()
        loss_g = -disc(fake).mean()
        backward_step(cfg, loss_g, opt_g)
        backward_step(cfg, loss_d, opt_d)
"""

GAN_MAIN_KEPT = GAN_MAIN.replace(
    "    gen, disc, opt_g, opt_d = build_gan(cfg)\n", "    nets = build_gan(cfg)\n    gen, disc, opt_g, opt_d = nets\n"
)
GAN_FACTORY_TODO = (
    "{indent}# TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, what\n"
    "{indent}#   build_gan() returns is not unpacked into names by one statement of main() itself, so\n"
    "{indent}#   the GradScaler it would return cannot be unpacked with it; this file keeps apex.amp\n"
    "{indent}#   semantics through apexcompat.amp, migrate it by hand\n"
)

#: the engine file two examples share: apex's scale_loss, and its migration with the scaler passed in
ENGINE_BEFORE = """\
# file: engine.py
import torch
from apex import amp


def train_one_epoch(model, optimizer, epoch):
    for _ in range(100):
        x = torch.randn(32, 8, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
ENGINE_AFTER = """\
# file: engine.py
import torch


def train_one_epoch(model, optimizer, epoch, scaler):
    for _ in range(100):
        x = torch.randn(32, 8, device="cuda")
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""

#: the methods of an mmcv optimizer hook that scales the loss the runner holds, divided for
#: gradient accumulation, and steps every update_interval iterations after an optional clip
#: (the before text of several examples, below a class line)
#: a checkpoint loader also called by a script that trains through the launcher's function
#: first: no plan (the repository example ...-that-trains-first-keeps-the-shim)
TRAINS_FIRST = """\
# file: train.py
import torch
from apex import amp

from checkpoint import load_checkpoint


def main(resume=None):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    if resume:
        load_checkpoint(resume, model)
    for _ in range(100):
        loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    return model
# file: checkpoint.py
import torch
from apex import amp


def load_checkpoint(path, model):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    amp.load_state_dict(state["amp"])
# file: evaluate.py
import sys

import torch

from checkpoint import load_checkpoint
from train import main


def train_then_evaluate(path):
    model = main()
    load_checkpoint(path, model)
    return model(torch.ones(1, 8, device="cuda"))


if __name__ == "__main__":
    print(train_then_evaluate(sys.argv[1]))
"""
NET_LOADER_BEFORE = """\
# file: average.py
import sys

import torch

from model import Net


def average(paths, use_amp):
    nets = [Net() for _ in paths]
    for net, path in zip(nets, paths):
        net.load_from(path, use_amp)
    return [sum(ps) / len(ps) for ps in zip(*(net.parameters() for net in nets))]


if __name__ == "__main__":
    print(average(sys.argv[1:], use_amp=True))
# file: model.py
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.layer(x)

    def load_from(self, path, use_amp=False):
        state = torch.load(path, map_location="cpu")
        self.load_state_dict(state["model"])
        if use_amp:
            from apex import amp
            amp.load_state_dict(state["amp"])
# file: train.py
import torch
from apex import amp

from model import Net


def main(resume=None, use_amp=True):
    net = Net().cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
    if resume:
        net.load_from(resume, use_amp)
    for _ in range(100):
        loss = net(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    torch.save({"model": net.state_dict(), "amp": amp.state_dict()}, "last.pt")


if __name__ == "__main__":
    main()
"""
TRAINS_FIRST_INIT_TODO = """\
    # TODO(apexcompat): the amp state is saved or loaded in checkpoint.py (load_checkpoint),
    #   which cannot get the GradScaler: load_checkpoint is also called from evaluate.py (in
    #   train_then_evaluate()), where no GradScaler exists; this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
"""
TRAINS_FIRST_LOAD_TODO = """\
    # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
    #   amp.initialize, which is created in another file and cannot reach this line
    #   (load_checkpoint is also called from evaluate.py (in train_then_evaluate()), where
    #   no GradScaler exists): pass that scaler here and call
    #   `scaler.load_state_dict(state["amp"])` instead (a checkpoint apex wrote holds
    #   {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n
    #   into scaler.state_dict() and load that). apexcompat.amp's state is set up only by
    #   its own amp.initialize, so this line fails once that file is migrated
"""

ACCUMULATING_HOOK_METHODS = """\
    def __init__(self, update_interval=1, grad_clip=None, use_fp16=False):
        self.update_interval = update_interval
        self.grad_clip = grad_clip
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        runner.outputs["loss"] /= self.update_interval
        if self.use_fp16:
            with apex.amp.scale_loss(runner.outputs["loss"], runner.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            runner.outputs["loss"].backward()
        if self.every_n_iters(runner, self.update_interval):
            if self.grad_clip is not None:
                self.clip_grads(runner.model.parameters())
            runner.optimizer.step()
            runner.optimizer.zero_grad()
"""

#: a model of an mmcv-based repository (unchanged by the migration): its forward runs under
#: mmcv's autocast once fp16_enabled is set
MMCV_MODEL = """\
# file: det/models/detector.py
import torch
from mmcv.runner import auto_fp16


class Detector(torch.nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head
        self.fp16_enabled = False

    @auto_fp16(apply_to=("img",))
    def forward(self, img, targets):
        return self.head.loss(self.backbone(img), targets)

    def train_step(self, data, optimizer):
        return dict(loss=self(**data))
"""

#: a launcher that initializes and a Trainer that imports apex.amp in ``__init__`` but scales
#: in ``fit`` (before and after differ in the imports and the launcher's TODO only)
#: a launcher script whose amp.scale_loss reads an unbound amp (imported in main() only),
#: imported by two inference scripts: one takes a class, one star-imports it and defines its
#: own main after that import (``{taken}``: what the first one takes)
UNBOUND_SCALE_IMPORTED_LAUNCHER = """\
# file: run_tagger.py
import torch

from layers import *


class Tagger(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = linear_layer(4, 1)

    def forward(self, x, y):
        return torch.nn.functional.mse_loss(self.proj(x), y)


def train(args, model, optimizer, x, y):
    optimizer.zero_grad()
    loss = model(x, y)
    if args.fp16:
{train_todo}        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    return loss


def main():
    args = parse_args()
    model = Tagger().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
{initialize}    for x, y in load_batches():
        train(args, model, optimizer, x, y)


if __name__ == "__main__":
    main()
# file: layers.py
import torch


def linear_layer(n, m):
    return torch.nn.Linear(n, m)
# file: tag.py
from run_tagger import {taken}


def main():
    model = Tagger()
    model.load_state_dict(torch.load("tagger.pt"))
    return model


if __name__ == "__main__":
    main()
# file: tag_all.py
import torch

from run_tagger import *


def main():
    model = Tagger()
    model.load_state_dict(torch.load("tagger.pt"))
    return model


if __name__ == "__main__":
    main()
"""

#: the launcher's initialize and the TODO its train() gets (UNBOUND_SCALE_IMPORTED_LAUNCHER)
TAGGER_INITIALIZE = '        from apex import amp\n        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n'
UNBOUND_TRAIN_TODO = (
    "        # TODO(apexcompat): amp.scale_loss: the name amp is bound only inside main() (its\n"
    "        #   apex.amp import), so this line raises NameError when it runs, in the original too;\n"
    "        #   import apex.amp where it is used (or keep it on self) before migrating\n"
)



def tagger_launcher(taken: str, initialize: str = TAGGER_INITIALIZE, train_todo: str = "") -> str:
    """UNBOUND_SCALE_IMPORTED_LAUNCHER with what tag.py takes, the initialize and train()'s TODO."""
    return UNBOUND_SCALE_IMPORTED_LAUNCHER.format(taken=taken, initialize=initialize, train_todo=train_todo)


#: what makes a launcher a script that no other file imports
SCRIPT_GUARD = '\n\nif __name__ == "__main__":\n    main(parse_args())\n'

AMP_IMPORTED_IN_ANOTHER_METHOD = """\
# file: train.py
import torch

from trainer import Trainer


def main(args):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
{launcher_import}        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer, fp16=args.fp16).fit(load_batches())
{guard}# file: trainer.py
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
{trainer_import}
    def fit(self, batches):
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            if self.fp16:
{fit_todo}                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
"""

#: an initialize in a setup helper and a training loop of another file that never scales a
#: loss (a plain ``loss.backward()``): apex trained unscaled there
INITIALIZE_WITHOUT_SCALE_LOSS = """\
# file: setup.py
import torch
{setup_import}

def make_encoder(args):
    encoder = torch.nn.Linear(16, 8).to(args.device)
    optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    if args.mixed_precision:
{setup_body}    return encoder, optimizer
# file: pretrain.py
import torch.nn.functional as F

from setup import make_encoder


def pretrain(args, pairs):
    encoder, optimizer = make_encoder(args)
    for a, b in pairs:
        optimizer.zero_grad()
        loss = 1 - F.cosine_similarity(encoder(a), encoder(b)).mean()
        loss.backward()
        optimizer.step()
"""

#: an evaluation script that initializes for inference only, beside the training script that
#: scales its losses and whose test loop it borrows (Scene-Graph-Benchmark's
#: tools/image_retrieval_test.py next to image_retrieval_main.py)
EVALUATION_BESIDE_TRAINING = """\
# file: train_net.py
import torch
{train_import}

def run_test(model, batches):
    model.eval()
    with torch.no_grad():
        return [model(x) for x in batches]


def train(model, optimizer, batches):
{train_body}    return model


if __name__ == "__main__":
    net = torch.nn.Linear(4, 2).cuda()
    train(net, torch.optim.SGD(net.parameters(), lr=0.1), [torch.randn(8, 4).cuda()])
# file: test_net.py
import torch
{test_import}
from train_net import {borrowed}


def evaluate(batches, fp16):
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
{test_body}    return {called}(model, {args})


if __name__ == "__main__":
    print(evaluate([torch.randn(8, 4).cuda()], fp16=True))
"""

EVAL_TRAIN_APEX = """\
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
EVAL_TRAIN_NATIVE = """\
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""
EVAL_INIT_APEX = "    model, optimizer = amp.initialize(model, optimizer, opt_level=\"O1\" if fp16 else \"O0\")\n"


#: a launcher that keeps apex.amp on its options object and scales through it in a function
#: of the same file it hands the options to; a helper module is handed the options too
AMP_ON_OPTIONS = """\
# file: finetune.py
import argparse

import torch

from report import log_progress{report_import}


def fit_batch(opts, net, opt, batch):
    net.zero_grad()
    inputs, targets = batch
{forward}    if opts.fp16:
{backward}    else:
        loss.backward()
{step}    return loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--fp16-opt-level", default="O1")
    opts = parser.parse_args()
    net = torch.nn.Linear(16, 4)
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
{setup}    for step in range(100):
        batch = (torch.randn(8, 16), torch.randint(0, 4, (8,)))
        loss = fit_batch(opts, net, opt, batch)
        log_progress(opts, step, loss.item())
{after_loop}# file: report.py
{report_torch}

def log_progress(opts, step, value):
    if step % opts.report_every == 0:
        print(f"step {{step}}: {{value:.4f}}")
{report_extra}"""

SAVE_STATE = """

def save_state(opts, net):
    torch.save({"net": net.state_dict(), "amp": opts.amp.state_dict()}, opts.output_path)
"""

APEX_SETUP = """\
    if opts.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("fp16 training needs apex")
{init_todo}        net, opt = amp.initialize(net, opt, opt_level=opts.fp16_opt_level)
{todo}        opts.amp = amp
"""
#: the reasons the launcher of the refused example keeps apex.amp
OPTIONS_INIT_TODO = """\
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled through
        #   opts.amp, not followed; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
"""


def _init_todo_read_in(carrier: str, reader: str) -> str:
    """The launcher's reason where another file reads an attribute named like the carrier's."""
    return (
        "        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled through\n"
        f"        #   {carrier} (read off an object in {reader}), not followed; this file keeps apex.amp\n"
        "        #   semantics through apexcompat.amp, migrate it by hand\n"
    )
OPTIONS_STORE_TODO = """\
        # TODO(apexcompat): apex.amp is stored as opts.amp here; its uses through that attribute
        #   cannot be followed (opts is handed to save_state() of report.py, which reads .amp);
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""
APEX_FORWARD = "    loss = torch.nn.functional.cross_entropy(net(inputs), targets)\n"
APEX_BACKWARD = "        with opts.amp.scale_loss(loss, opt) as scaled:\n            scaled.backward()\n"
APEX_STEP = "    opt.step()\n"


#: apex.amp kept on the options object, scaled through it in a method of a trainer class the
#: launcher picks from a table and hands the options to (``{tune}``: a second script)
AMP_ON_OPTIONS_METHOD = """\
# file: pretrain.py
import torch


class StepTrainer:
    def __init__(self, opts):
        self.every = opts.accumulation

    def compute(self, net, batch):
        raise NotImplementedError

    def fit(self, opts, net, opt, batches):
        net.train()
        for i, batch in enumerate(batches):
{forward}            if opts.fp16:
{backward}            else:
                loss.backward()
            if (i + 1) % self.every == 0:
{step}                net.zero_grad()


class ClassifyTrainer(StepTrainer):
    def compute(self, net, batch):
        inputs, targets = batch
        return torch.nn.functional.cross_entropy(net(inputs), targets) / self.every


TRAINERS = {{"classify": ClassifyTrainer}}


def launch(opts):
    torch.manual_seed(0)
    worker(opts, torch.nn.Linear(16, 4))


def worker(opts, net):
    opt = torch.optim.AdamW(net.parameters(), lr=1e-3)
{setup}    trainer = TRAINERS[opts.task](opts)
    batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(10)]
    trainer.fit(opts, net, opt, batches)
# file: main.py
import pretrain{tune}
"""
METHOD_FORWARD = "            loss = self.compute(net, batch)\n"
METHOD_BACKWARD = "                with opts.amp.scale_loss(loss, opt) as scaled:\n                    scaled.backward()\n"
METHOD_STEP = "                opt.step()\n"
#: the second script of the refused example: it hands a trainer's fit() an options object of
#: its own, which never holds the GradScaler
METHOD_TUNE = """


def tune(opts, trainer, net, opt, batches):
    trainer.fit(opts, net, opt, batches)"""
#: the second file of the native example: ``fit`` read off a module (not a method of a trainer)
METHOD_MODULE_MEMBER = """
import stats

ESTIMATORS = {"line": stats.fit}"""
#: the second file of another refused example: a class of its own whose fit() reads .amp
METHOD_ELSEWHERE = """


class StateTrainer:
    def fit(self, opts, net, opt, batches):
        return opts.amp.state_dict()"""
#: ... and one that hands a trainer's fit on as a value
METHOD_AS_VALUE = """
import threading


def start(trainer, opts, net, opt, batches):
    threading.Thread(target=trainer.fit, args=(opts, net, opt, batches)).start()"""


def _method_route_refused(name: str, other_file: str, why: str, reader: str = "") -> Example:
    """A refused variant of ``amp-kept-on-the-options-object-read-in-a-method``: main.py holds
    ``other_file``; ``why``: the TODO's lines after its first, as the tool wraps them;
    ``reader``: the file that reads an attribute named amp, when one does."""
    apex = dict(forward=METHOD_FORWARD, backward=METHOD_BACKWARD, step=METHOD_STEP, tune=other_file)
    todo = "        # TODO(apexcompat): apex.amp is stored as opts.amp here; its uses through that attribute\n" + "".join(
        f"        #   {line}\n" for line in why.splitlines()
    )
    return Example(
        name,
        before=AMP_ON_OPTIONS_METHOD.format(setup=APEX_SETUP.format(init_todo="", todo=""), **apex),
        after=AMP_ON_OPTIONS_METHOD.format(
            setup=APEX_SETUP.format(
                init_todo=_init_todo_read_in("opts.amp", reader) if reader else OPTIONS_INIT_TODO, todo=todo
            ).replace("from apex import", "from apexcompat import"),
            **apex,
        ),
        codes=("APX102", "APX220"),
    )


#: a trainer base class whose method initializes under a run-once guard, and a subclass in
#: another file that overrides the step (``{opt}``: the optimizer its scale_loss is given)
HEIR_BASE = """\
# file: trainers/__init__.py
# file: trainers/base.py
import torch
{base_import}

class Trainer:
    def __init__(self, net, half):
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        self.half = half
{disabled}        self.mixed_ready = False

    def enable_mixed(self):
        if self.half and not self.mixed_ready:
{init}            self.mixed_ready = True

    def step(self, x, y):
{base_step}        return loss.item()

    def fit(self, batches):
        self.enable_mixed()
        return [self.step(x, y) for x, y in batches]
# file: trainers/clipped.py
import torch
from torch.nn.utils import clip_grad_norm_

from .base import Trainer
{heir_import}

class ClippedTrainer(Trainer):
    def step(self, x, y):
{heir_step}        return loss.item()
"""
HEIR_APEX_IMPORT = """\

try:
    from {module} import amp
except ImportError:
    amp = None

"""
HEIR_APEX_STEP = """\
        out = self.net(x)
        loss = torch.nn.functional.mse_loss(out, y)
        {opt}.zero_grad()
        if self.half:
{todo}            with amp.scale_loss(loss, {opt}) as scaled:
                scaled.backward()
        else:
            loss.backward()
{clip}        {opt}.step()
"""
HEIR_NATIVE_STEP = """\
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            out = self.net(x)
            loss = torch.nn.functional.mse_loss(out, y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
{clip}        self.scaler.step(self.optimizer)
        self.scaler.update()
"""
HEIR_CLIP = "        clip_grad_norm_(self.net.parameters(), 1.0)\n"
HEIR_INIT = '            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")\n'
#: why the subclass cannot scale through the base's GradScaler (the TODOs' shared lines)
HEIR_REASON = """\
            #   trainers/clipped.py, amp.initialize is not in this file, so the scaler cannot reach
            #   this amp.scale_loss (ClippedTrainer derives from the class whose enable_mixed()
            #   initializes, but step() scales its loss for self.head_optimizer, not for
            #   self.optimizer, whose GradScaler that class keeps){close}; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
"""


def _heir_apex(module: str, heir_opt: str, base_todo: str = "", heir_todo: str = "") -> str:
    """The before text (``module`` apex) or the kept text (apexcompat, with the TODOs)."""
    return HEIR_BASE.format(
        base_import=HEIR_APEX_IMPORT.format(module=module),
        heir_import=HEIR_APEX_IMPORT.format(module=module),
        disabled="",
        init=base_todo + HEIR_INIT,
        base_step=HEIR_APEX_STEP.format(opt="self.optimizer", todo="", clip=""),
        heir_step=HEIR_APEX_STEP.format(opt=heir_opt, todo=heir_todo, clip=HEIR_CLIP),
    )


#: a launcher whose step function a sibling launcher imports, both keeping apex.amp on their
#: options object (the before and after texts of two examples)
SHARED_STEP = """\
# file: classify.py
import torch
from torch.nn.utils import clip_grad_norm_


def train_batch(args, model, optimizer, batch):
    inputs, labels = (t.to(args.device) for t in batch)
{forward}    if args.fp16:
{backward}    else:
        loss.backward()
{step}    optimizer.zero_grad()
    return loss


def main(args, model, loader):
    model = model.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
{classify_setup}    for batch in loader:
        train_batch(args, model, optimizer, batch)
# file: regress.py
import torch

from classify import train_batch


def main(args, model, loader):
    model = model.to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
{regress_setup}    for epoch in range(args.epochs):
        for batch in loader:
            train_batch(args, model, optimizer, batch)
{probe}"""
SHARED_STEP_APEX = dict(
    forward="    loss = torch.nn.functional.cross_entropy(model(inputs), labels)\n",
    backward="        with args.amp.scale_loss(loss, optimizer) as scaled_loss:\n"
    "            scaled_loss.backward()\n",
    step="    clip_grad_norm_(model.parameters(), args.max_grad_norm)\n    optimizer.step()\n",
)
#: the launchers' apex set-up, with {todo_init} / {todo_store} lines
SHARED_STEP_SETUP = """\
    if args.fp16:
        from {package} import amp
{todo_init}        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)
{todo_store}        args.amp = amp
"""
SHARED_STEP_NATIVE_SETUP = """\
    use_amp = bool(args.fp16 and args.fp16_opt_level != "O0")
    scaler = torch.amp.GradScaler(torch.device(args.device).type, enabled=use_amp)
    args.scaler = scaler
"""
#: a third file hands its own options object to the shared step with no apex.amp on it
SHARED_STEP_PROBE = """\
# file: probe.py
import torch

from classify import train_batch


def smoke_test(args, model, batch):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    train_batch(args, model, optimizer, batch)
"""
SHARED_STEP_INIT_TODO = """\
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled through
        #   args.amp, not followed; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
"""


#: a fitter whose clipping method (amp.master_params) a learning-rate sweep of another file
#: also calls after a plain backward
CLIP_CALLED_ELSEWHERE = '''\
# file: fitter.py
import torch
from apex import amp


class Fitter:
    """Fits a network with gradient clipping."""

    def __init__(self, net, opt, half=None, max_norm=1.0):
        self.net = net
        self.opt = opt
        self.half = half
        self.max_norm = max_norm
        if self.half is not None:
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level=self.half)

    def clip(self):
        if self.half is not None:
            params = list(amp.master_params(self.opt))
        else:
            params = list(self.net.parameters())
        return torch.nn.utils.clip_grad_norm_(params, self.max_norm)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        if self.half is not None:
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.clip()
        self.opt.step()
        return loss.item()
# file: tools/lr_sweep.py
import torch


def sweep(fitter, batches, rates):
    """Tries each learning rate for one plain step."""
    for rate, (x, y) in zip(rates, batches):
        for group in fitter.opt.param_groups:
            group["lr"] = rate
        fitter.opt.zero_grad()
        torch.nn.functional.mse_loss(fitter.net(x), y).backward()
        fitter.clip()
        fitter.opt.step()
'''
#: its step, and the same split into a method that scales and one that steps
CLIP_STEP = '''\
    def step(self, x, y):
        self.opt.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        if self.half is not None:
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.clip()
        self.opt.step()
        return loss.item()
'''
CLIP_STEP_SPLIT = '''\
    def backward(self, loss):
        if self.half is not None:
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()

    def update(self):
        self.clip()
        self.opt.step()

    def step(self, x, y):
        self.opt.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.backward(loss)
        self.update()
        return loss.item()
'''
#: the reason the split fitter keeps apex.amp
CLIP_SPLIT_TODO = (
    "            # TODO(apexcompat): Fitter.clip() reads the gradients apex had unscaled, and\n"
    "            #   tools/lr_sweep.py (in sweep()) calls a method of that name (after a backward no\n"
    "            #   GradScaler scales, if it is this one), so the unscale_ cannot go inside it; the loss\n"
    "            #   scaled in backward() is not stepped there alone; this file keeps apex.amp semantics\n"
    "            #   through apexcompat.amp, migrate it by hand\n"
)


#: a trainer that scales in _forward() and clips and steps in _train_batch(), which its own
#: train() calls on self (copied into two packages, or subclassed, in the examples below)
SPLIT_TRAINER = '''\
import torch
from apex import amp


class Trainer:
    def __init__(self, model):
        self.model = model

    def _post_step(self, out):
        pass

    def _post_training(self):
        pass

    def _forward(self, args, x, y):
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if args.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self._post_step(out)
        return loss

    def _train_batch(self, args, x, y):
        loss = self._forward(args, x, y)
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)
        else:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self._post_training()
        return loss.item()

    def train(self, args, batches):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        if args.fp16:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
        return [self._train_batch(args, x, y) for x, y in batches]
'''
SPLIT_TRAINER_NATIVE = '''\
import torch


class Trainer:
    def __init__(self, model):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model

    def _post_step(self, out):
        pass

    def _post_training(self):
        pass

    def _forward(self, args, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            out = self.model(x)
            loss = torch.nn.functional.mse_loss(out, y)
        if args.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self._post_step(out)
        return loss

    def _train_batch(self, args, x, y):
        loss = self._forward(args, x, y)
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        self._post_training()
        return loss.item()

    def train(self, args, batches):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        use_amp = bool(args.fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        return [self._train_batch(args, x, y) for x, y in batches]
'''
#: a subclass in another file overriding the scaling method, its meta step on another optimizer
META_TRAINER = '''\
import torch
from apex import amp

from .trainer import Trainer


class MetaTrainer(Trainer):
    def _forward(self, args, x, y):
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if args.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self._post_step(out)
        return loss

    def _post_step(self, out):
        self.seen.append(out.detach())

    def _post_training(self):
        meta_loss = torch.stack(self.seen).mean() * self.weights.sum()
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        self.meta_optimizer.step()
        self.seen = []
'''
META_TRAINER_NATIVE = '''\
import torch

from .trainer import Trainer


class MetaTrainer(Trainer):
    def _forward(self, args, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            out = self.model(x)
            loss = torch.nn.functional.mse_loss(out, y)
        if args.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self._post_step(out)
        return loss

    def _post_step(self, out):
        self.seen.append(out.detach())

    def _post_training(self):
        meta_loss = torch.stack(self.seen).mean() * self.weights.sum()
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        self.meta_optimizer.step()
        self.seen = []
'''
#: a subclass in another file calling the clipping method on self after a plain backward
SWEEPER = """\
# file: tools/sweep.py
import torch

from dom.trainer import Trainer


class Sweeper(Trainer):
    def sweep(self, args, batches):
        for x, y in batches:
            torch.nn.functional.mse_loss(self.model(x), y).backward()
            self._train_batch(args, x, y)
"""
#: a read of the gradients between its scaled backward and the base's step
META_GRAD_READ = "        self.norms.append(sum(p.grad.norm() for p in self.model.parameters()))\n"
#: the subclass's scaling test, and a narrower one
META_TEST = "        if args.fp16:\n            with amp.scale_loss"
META_NARROW = "        if args.fp16 and args.scaled:\n            with amp.scale_loss"
META_NARROW_REASON = (
    "            #   self.optimizer.step() is not in the same function as amp.scale_loss, and the base\n"
    "            #   steps it, but _forward() scales the loss only if args.fp16 and args.scaled, and runs\n"
    "            #   a plain backward otherwise, while the GradScaler is on when args.fp16 (the base's\n"
    "            #   step would unscale gradients no GradScaler scaled){end}; this file keeps apex.amp\n"
)
#: where the kept files say why
SPLIT_CLIP = "            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)\n"
SPLIT_INIT = "            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=\"O1\")\n"
META_SCALE = "            with amp.scale_loss(loss, self.optimizer) as scaled_loss:\n"
META_GRAD_REASON = (
    "            #   self.optimizer.step() is not in the same function as amp.scale_loss, and\n"
    "            #   Trainer._train_batch() steps it, but MetaTrainer._post_step() reads gradients, which\n"
    "            #   stay scaled until Trainer steps self.optimizer (apex had unscaled them when\n"
)


#: a plugin keeping apex.amp on self and reading it once other than as a member call (the
#: before and after text of one example)
AMP_ON_SELF_PLUGIN = """\
# file: plugin.py
class AmpPlugin:
    def __init__(self, trainer, opt_level):
        self.trainer = trainer
{import_and_todo}        self.amp = amp
        self.trainer.model, self.trainer.optimizer = self.amp.initialize(
            self.trainer.model, self.trainer.optimizer, opt_level=opt_level
        )

    def backward(self, loss):
        assert self.amp is not None
        with self.amp.scale_loss(loss, self.trainer.optimizer) as scaled_loss:
            scaled_loss.backward()
"""

#: a trainer class the launcher picks at run time (``(A if c else B)(...)``), built once, right
#: after amp.initialize, with the optimizer it returns
PICKED_STEPPERS = """\
# file: steps.py
import torch
from apex import amp


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
"""
PICKED_RUNNER = """\
# file: runner.py
import torch
from apex import amp

from steps import HalfStepper, PlainStepper


class Runner:
    def __init__(self, net, batches, half=False):
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        if half:
            net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.stepper = (HalfStepper if half else PlainStepper)(net, batches, optimizer)

    def run(self, steps):
        return [self.stepper.step() for _ in range(steps)]
"""
#: the scaling method of the picked class, and the TODOs of its fallback
PICKED_SCALING = """\
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
"""
PICKED_INIT = """\
            net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
"""
PICKED_HEIR = """\
# file: logged.py
from steps import HalfStepper


class LoggedStepper(HalfStepper):
    def step(self):
        value = super().step()
        print(value)
        return value
"""


#: a checkpointer of another file (no apex) that keeps the objects it is handed by keyword and
#: saves/loads each one's state, and a launcher that spreads a dict holding apex.amp into it
SPREAD_KEEPER = """\
# file: keeper.py
import copy

import torch


class Keeper:
    def __init__(self, net, **extras):
        self.net = net
        self.extras = copy.copy(extras)

    def save(self, path):
        state = {"net": self.net.state_dict()}
        for key, obj in self.extras.items():
            state[key] = obj.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path)
        self.net.load_state_dict(state.pop("net"))
        for key in self.extras:
            if key in state:
                obj = self.extras[key]
                obj.load_state_dict(state.pop(key))
"""
SPREAD_LAUNCHER = """\
# file: train.py
import torch
from apex import amp

from keeper import Keeper


def train(net, batches, path, fp16=True):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    extras = dict(optimizer=optimizer)
    if fp16:
        net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
        extras.update(dict(amp=amp))
    keeper = Keeper(net, **extras)
    keeper.load(path)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(net(x), y)
        optimizer.zero_grad()
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
    keeper.save(path)
"""


#: bonito's shape (the module-scaler route, APX250): a library whose load_state initializes
#: apex and whose train scales, called in turn by a command of another module (the before
#: text of three examples)
MODULE_SCALER_LIBRARY = """\
# file: lib/__init__.py
# file: lib/training.py
import torch

try:
    from apex import amp
except ImportError:
    pass


def load_state(model, optimizer, use_amp=False):
    model.cuda()
    if use_amp:
        try:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        except NameError:
            exit(1)
    return 0


def train(model, optimizer, batches, use_amp=False):
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
# file: train.py
import torch

from lib.training import load_state, train


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    train(model, optimizer, batches, use_amp=args.amp)
"""


#: a script, the one file naming apex.amp: its setup() initializes (after a nested helper
#: with returns of its own), its main() scales, and its ``__main__`` guard runs them in turn
#: (UCSNet's train.py; the before text of three examples)
SCRIPT_SCALER = """\
# file: data.py
import torch


def batch():
    return torch.randn(2, 4).cuda()
# file: train.py
import argparse

import torch
from apex import amp

from data import batch


def setup(args):
    def barrier():
        if not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()

    barrier()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def main(args, model, optimizer):
    for _ in range(4):
        loss = model(batch()).mean()
        optimizer.zero_grad()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    model, optimizer = setup(args)
    main(args, model, optimizer)
"""


#: Enigmatisms/NeRF's shape (examples below): a model built as its subclass whose base loads amp's
#: state, a proposal network with a loader of the same name, a __main__ block that renders or trains
SUBCLASS_BUILT_LOADERS = """# file: train.py
import argparse

import torch
from torch import nn

from mip import MipField
from proposal import Proposal
from render import render_only


def main(args):
    field = MipField(args.width).cuda()
    proposal = Proposal(args.width).cuda()
    if args.ddp:
        field = nn.parallel.DistributedDataParallel(field)
    opt = torch.optim.Adam(list(field.parameters()) + list(proposal.parameters()), lr=1e-3)
    if args.amp:
        from apex import amp
        [field, proposal], opt = amp.initialize([field, proposal], opt, opt_level="O1")
    if args.resume:
        field.loadFromFile(args.field_path, args.amp)
        proposal.loadFromFile(args.proposal_path, args.amp)
    for _ in range(args.steps):
        x = torch.rand(8, 3).cuda()
        loss = (field(x).sum(-1) * proposal(x).squeeze(-1)).pow(2).mean()
        opt.zero_grad()
        if args.amp:
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        opt.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--ddp", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--field-path", default="field.pt")
    parser.add_argument("--proposal-path", default="proposal.pt")
    args = parser.parse_args()
    if args.render:
        render_only(args)
    else:
        main(args)
# file: render.py
import torch

from mip import MipField
from proposal import Proposal


def render_only(args):
    field = MipField(args.width).cuda()
    proposal = Proposal(args.width).cuda()
    if args.amp:
        from apex import amp
        [field, proposal] = amp.initialize([field, proposal], None, opt_level="O1")
    field.loadFromFile(args.field_path, args.amp)
    proposal.loadFromFile(args.proposal_path, args.amp)
    with torch.no_grad():
        return field(torch.rand(8, 3).cuda()) * proposal(torch.rand(8, 3).cuda())
# file: fields.py
import torch
from torch import nn


class Field(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layer = nn.Linear(3, width)

    def loadFromFile(self, path, use_amp=False):
        save = torch.load(path)
        self.load_state_dict(save["model"])
        if use_amp:
            from apex import amp
            amp.load_state_dict(save["amp"])
# file: mip.py
from torch import nn

from fields import Field


class MipField(Field):
    def __init__(self, width):
        super().__init__(width)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        return self.head(self.layer(x))
# file: proposal.py
import torch
from torch import nn


class Proposal(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def forward(self, x):
        return self.net(x)

    def loadFromFile(self, path, use_amp=False):
        save = torch.load(path)
        self.load_state_dict(save["model"])
        if use_amp:
            from apex import amp
            amp.load_state_dict(save["amp"])
"""

REPOSITORY_EXAMPLES: List[Example] = [
    Example(
        # the trainer's __init__ calls the __init__ of a base class of another file, which could
        # call the method that creates the GradScaler (here it does: the base's hook): the disabled
        # one goes first in __init__, before that call, so the real one replaces it, not the reverse
        "disabled-scaler-before-the-init-call-of-a-base-of-another-file",
        before="""\
# file: pkg/__init__.py
# file: pkg/base.py
class Base:
    def __init__(self, net, optimizer):
        self.net = net
        self.optimizer = optimizer
        self.setup()

    def setup(self):
        pass
# file: pkg/trainer.py
import torch
from apex import amp

from .base import Base


class Trainer(Base):
    def __init__(self, net):
        super().__init__(net, torch.optim.SGD(net.parameters(), lr=0.1))
        self.steps = 0

    def setup(self):
        self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
        self.steps += 1
        return loss.item()
""",
        after="""\
# file: pkg/__init__.py
# file: pkg/base.py
class Base:
    def __init__(self, net, optimizer):
        self.net = net
        self.optimizer = optimizer
        self.setup()

    def setup(self):
        pass
# file: pkg/trainer.py
import torch

from .base import Base


class Trainer(Base):
    def __init__(self, net):
        self.scaler = torch.amp.GradScaler(enabled=False)
        super().__init__(net, torch.optim.SGD(net.parameters(), lr=0.1))
        self.steps = 0

    def setup(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.steps += 1
        return loss.item()
""",
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # the inheritance route's GradScaler on self takes no name a base of the launcher's
        # class in another file reads or sets (Logged's self.scaler is the same instance's)
        "inherited-scaler-avoids-the-attributes-of-a-base-in-another-file",
        before="""\
# file: trainers/__init__.py
# file: trainers/logs.py
class Logged:
    def __init__(self):
        self.scaler = 1.0

    def shown(self, loss):
        return loss * self.scaler
# file: trainers/base.py
import torch
from apex import amp

from .logs import Logged


class Trainer(Logged):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def setup(self):
        self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")

    def fit(self, batches):
        self.setup()
        return [self.step(x, y) for x, y in batches]
# file: trainers/plain.py
import torch
from apex import amp

from .base import Trainer


class PlainTrainer(Trainer):
    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
        return self.shown(loss.item())
""",
        after="""\
# file: trainers/__init__.py
# file: trainers/logs.py
class Logged:
    def __init__(self):
        self.scaler = 1.0

    def shown(self, loss):
        return loss * self.scaler
# file: trainers/base.py
import torch

from .logs import Logged


class Trainer(Logged):
    def __init__(self, net):
        self.grad_scaler = torch.amp.GradScaler(enabled=False)
        super().__init__()
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def setup(self):
        self.grad_scaler = torch.amp.GradScaler("cuda")

    def fit(self, batches):
        self.setup()
        return [self.step(x, y) for x, y in batches]
# file: trainers/plain.py
import torch

from .base import Trainer


class PlainTrainer(Trainer):
    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.grad_scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        self.grad_scaler.scale(loss).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
        return self.shown(loss.item())
""",
        codes=("APX101", "APX201", "APX209", "APX239", "APX261", "APX301", "APX311"),
    ),
    Example(
        # the launcher puts the GradScaler on an instance built before the initialize (APX248)
        # under a name no class of its family uses: a class above it in the same file sets
        # self.scaler, a base in another file self.grad_scaler, on that same instance
        "attached-scaler-avoids-the-attributes-of-the-class-family",
        before="""\
# file: main.py
from apex import amp

from fitter import Fitter


def main(model, loader, fp16):
    fitter = Fitter(model, loader)
    if fp16:
        fitter.model, fitter.optimizer = amp.initialize(fitter.model, fitter.optimizer, opt_level="O1")
    fitter.fit()
# file: logs.py
class Logger:
    def __init__(self):
        self.grad_scaler = 10.0

    def show(self, loss):
        print(loss * self.grad_scaler)
# file: fitter.py
import torch
from apex import amp

from logs import Logger


class Scaled(Logger):
    def __init__(self):
        super().__init__()
        self.scaler = 2.0


class Fitter(Scaled):
    def __init__(self, model, loader):
        super().__init__()
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for epoch in range(2):
            self.train_one_epoch()
            self.save("ckpt.pth")

    def train_one_epoch(self):
        for x in self.loader:
            loss = self.model(x).sum() * self.scaler
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
            self.show(loss)

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "amp": amp.state_dict()}, path)
""",
        after="""\
# file: main.py
from fitter import Fitter
import torch


def main(model, loader, fp16):
    fitter = Fitter(model, loader)
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    fitter.amp_scaler = scaler
    fitter.fit()
# file: logs.py
class Logger:
    def __init__(self):
        self.grad_scaler = 10.0

    def show(self, loss):
        print(loss * self.grad_scaler)
# file: fitter.py
import torch

from logs import Logger


class Scaled(Logger):
    def __init__(self):
        super().__init__()
        self.scaler = 2.0


class Fitter(Scaled):
    def __init__(self, model, loader):
        super().__init__()
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for epoch in range(2):
            self.train_one_epoch()
            self.save("ckpt.pth")

    def train_one_epoch(self):
        for x in self.loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.amp_scaler.is_enabled()):
                loss = self.model(x).sum() * self.scaler
            self.optimizer.zero_grad()
            self.amp_scaler.scale(loss).backward()
            self.amp_scaler.step(self.optimizer)
            self.amp_scaler.update()
            self.show(loss)

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "amp": self.amp_scaler.state_dict()}, path)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX248', 'APX301', 'APX311', 'APX401'),
    ),
    Example(
        # the GradScaler kept on self takes no attribute name the class family uses in other
        # files: the base's self.scaler and a subclass's self.grad_scaler are the same instance's
        "scaler-on-self-avoids-the-attributes-of-bases-and-subclasses-in-other-files",
        before="""\
# file: base.py
class BaseTrainer:
    def __init__(self):
        self.scaler = 2.0

    def report(self, loss):
        return loss * self.scaler
# file: train.py
import torch
from apex import amp

from base import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer):
        super().__init__()
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def step(self, x):
        loss = self.model(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
        return self.report(loss)
# file: logged.py
from train import Trainer


class LoggedTrainer(Trainer):
    def log(self):
        return self.grad_scaler
""",
        after="""\
# file: base.py
class BaseTrainer:
    def __init__(self):
        self.scaler = 2.0

    def report(self, loss):
        return loss * self.scaler
# file: train.py
import torch

from base import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer):
        super().__init__()
        self.model, self.optimizer = model, optimizer
        self.amp_scaler = torch.amp.GradScaler("cuda")

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).sum()
        self.amp_scaler.scale(loss).backward()
        self.amp_scaler.step(self.optimizer)
        self.amp_scaler.update()
        return self.report(loss)
# file: logged.py
from train import Trainer


class LoggedTrainer(Trainer):
    def log(self):
        return self.grad_scaler
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # mmgeneration's runner: its own GradScaler (self.loss_scaler) serves the torch.cuda.amp
        # path, apex.amp the other; amp.initialize is in another file.  The apex state it loads
        # is not that scaler's: the load keeps apex.amp with the true reason (before, it became
        # load_scaler_state(self.loss_scaler, ...): an AttributeError where the apex path builds
        # no loss_scaler, and the shim's loss scale never restored)
        "runner-own-scaler-is-not-apex-state-of-another-file",
        before="""\
# file: runner.py
import torch


class Runner:
    def __init__(self, model, scaler_options=None, use_apex_amp=False):
        self.model = model
        if scaler_options is not None:
            self.loss_scaler = torch.amp.GradScaler("cuda", **scaler_options)
        self.use_apex_amp = use_apex_amp

    def resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if "loss_scaler" in state:
            self.loss_scaler.load_state_dict(state["loss_scaler"])
        if self.use_apex_amp:
            from apex import amp
            amp.load_state_dict(state["amp"])
# file: setup_amp.py
from apex import amp


def amp_initialize(models, optimizers, options):
    models, optimizers = amp.initialize(models, optimizers, **options)
    return models, optimizers
""",
        after="""\
# file: runner.py
import torch


class Runner:
    def __init__(self, model, scaler_options=None, use_apex_amp=False):
        self.model = model
        if scaler_options is not None:
            self.loss_scaler = torch.amp.GradScaler("cuda", **scaler_options)
        self.use_apex_amp = use_apex_amp

    def resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if "loss_scaler" in state:
            self.loss_scaler.load_state_dict(state["loss_scaler"])
        if self.use_apex_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line (Runner
            #   is called from no file, so the GradScaler cannot follow its callers): pass that
            #   scaler here and call `scaler.load_state_dict(state["amp"])` instead (a checkpoint
            #   apex wrote holds {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s,
            #   _growth_tracker=n into scaler.state_dict() and load that). apexcompat.amp's state is
            #   set up only by its own amp.initialize, so this line fails once that file is migrated
            amp.load_state_dict(state["amp"])
# file: setup_amp.py
from apexcompat import amp


def amp_initialize(models, optimizers, options):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in runner.py
    #   (Runner), which is called from no file: the GradScaler cannot reach it; this file
    #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    models, optimizers = amp.initialize(models, optimizers, **options)
    return models, optimizers
""",
        codes=("APX102", "APX220", "APX403"),
    ),
    Example(
        # an optimizer holder whose method initializes on one of two branches, picked by a test
        # of the model the branches hand back, in a file that scales no loss: refused for that,
        # and not also reported as a run-once guard (each branch would make its own GradScaler)
        "alternative-initializes-in-a-holder-that-scales-nothing-are-no-run-once-guard",
        before="""\
# file: holder.py
from apex import amp


class Optimizers:
    def __init__(self, gen_opt, critic_opt=None):
        self.gen = gen_opt
        self.critic = critic_opt

    def set_amp(self, model, half):
        if not half:
            return model
        if model.critic is None:
            model, self.gen = amp.initialize(model, self.gen, opt_level="O1")
        else:
            model, [self.gen, self.critic] = amp.initialize(model, [self.gen, self.critic], opt_level="O1")
        return model
# file: train.py
import torch
from apex import amp

from holder import Optimizers


def fit(model, batches, half):
    opts = Optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
    model = opts.set_amp(model, half)
    for x in batches:
        opts.gen.zero_grad()
        loss = model(x).mean()
        with amp.scale_loss(loss, opts.gen) as scaled:
            scaled.backward()
        opts.gen.step()
""",
        after="""\
# file: holder.py
from apexcompat import amp


class Optimizers:
    def __init__(self, gen_opt, critic_opt=None):
        self.gen = gen_opt
        self.critic = critic_opt

    def set_amp(self, model, half):
        if not half:
            return model
        if model.critic is None:
            # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in train.py
            #   (fit), which is called from no file: the GradScaler cannot reach it; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            model, self.gen = amp.initialize(model, self.gen, opt_level="O1")
        else:
            # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in train.py
            #   (fit), which is called from no file: the GradScaler cannot reach it; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            model, [self.gen, self.critic] = amp.initialize(model, [self.gen, self.critic], opt_level="O1")
        return model
# file: train.py
import torch
from apexcompat import amp

from holder import Optimizers


def fit(model, batches, half):
    opts = Optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
    model = opts.set_amp(model, half)
    for x in batches:
        opts.gen.zero_grad()
        loss = model(x).mean()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (fit is called from no file, so the GradScaler cannot follow its
        #   callers); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        with amp.scale_loss(loss, opts.gen) as scaled:
            scaled.backward()
        opts.gen.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # a loss module that steps its own critic, built only as
        # ``getattr(import_module(...), "Name")(...)`` by a loss factory (DeepDeblur's loss
        # package): both files keep the shim, and their reasons say how the class is built,
        # not only that no file calls it
        "loss-class-built-by-getattr-of-a-runtime-module-says-so",
        before="""\
# file: train.py
import torch
from apex import amp

from losses import build_losses


def main(args, generator, critic_holder, batches):
    optimizer = args.make_optimizers(generator, critic_holder)
    [generator, critic_holder.critic], [optimizer.gen, optimizer.critic] = amp.initialize(
        [generator, critic_holder.critic], [optimizer.gen, optimizer.critic], opt_level="O1"
    )
    losses = build_losses(args, critic_holder, optimizer)
    for noise, real in batches:
        fake = generator(noise)
        for loss in losses:
            loss(fake, real)
# file: losses/__init__.py
from importlib import import_module


def build_losses(args, model, optimizer):
    found = []
    for kind in args.kinds:
        if kind == "gan":
            module = import_module("losses.gan")
            found.append(getattr(module, "GanLoss")(args, model, optimizer))
    return found
# file: losses/gan.py
import torch
from apex import amp


class GanLoss(torch.nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.critic = model.critic
        self.optimizer = optimizer

    def forward(self, fake, real):
        self.optimizer.critic.zero_grad()
        loss_d = self.critic(fake.detach()).mean() - self.critic(real).mean()
        with amp.scale_loss(loss_d, self.optimizer.critic) as scaled:
            scaled.backward()
        self.optimizer.critic.step()
        return -self.critic(fake).mean()
""",
        after="""\
# file: train.py
import torch
from apexcompat import amp

from losses import build_losses


def main(args, generator, critic_holder, batches):
    optimizer = args.make_optimizers(generator, critic_holder)
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   losses/gan.py (GanLoss), which is called directly from no file; it is built as
    #   `getattr(..., 'GanLoss')(...)` of a module imported by name at run time
    #   (losses/__init__.py:9, in build_losses): which class that is, no GradScaler route
    #   can tell: the GradScaler cannot reach it; nor can a module-level GradScaler stand
    #   in: losses/gan.py uses apex.amp too, and cannot import train.py under one dotted
    #   name; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    [generator, critic_holder.critic], [optimizer.gen, optimizer.critic] = amp.initialize(
        [generator, critic_holder.critic], [optimizer.gen, optimizer.critic], opt_level="O1"
    )
    losses = build_losses(args, critic_holder, optimizer)
    for noise, real in batches:
        fake = generator(noise)
        for loss in losses:
            loss(fake, real)
# file: losses/__init__.py
from importlib import import_module


def build_losses(args, model, optimizer):
    found = []
    for kind in args.kinds:
        if kind == "gan":
            module = import_module("losses.gan")
            found.append(getattr(module, "GanLoss")(args, model, optimizer))
    return found
# file: losses/gan.py
import torch
from apexcompat import amp


class GanLoss(torch.nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.critic = model.critic
        self.optimizer = optimizer

    def forward(self, fake, real):
        self.optimizer.critic.zero_grad()
        loss_d = self.critic(fake.detach()).mean() - self.critic(real).mean()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (GanLoss is called directly from no file; it is built as
        #   `getattr(..., 'GanLoss')(...)` of a module imported by name at run time
        #   (losses/__init__.py:9, in build_losses): which class that is, no GradScaler route
        #   can tell, so the GradScaler cannot follow its callers); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss_d, self.optimizer.critic) as scaled:
            scaled.backward()
        self.optimizer.critic.step()
        return -self.critic(fake).mean()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex.amp kept on self, read once other than as a member call (an assert): the shim,
        # for that reason; the training script beside it comes out native and now reads
        # torch.amp, a module's attribute, not an object's: a second run gives the same reason
        # and changes nothing (it used to name the script and write a second TODO)
        "amp-kept-on-self-beside-a-native-script-second-run-agrees",
        before=AMP_ON_SELF_PLUGIN.format(import_and_todo="        from apex import amp\n") + """\
# file: train.py
import torch
from apex import amp


def main(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main(None, [])
""",
        after=AMP_ON_SELF_PLUGIN.format(
            import_and_todo="        from apexcompat import amp\n"
            "        # TODO(apexcompat): apex.amp is stored as self.amp here; its uses through that attribute\n"
            "        #   cannot be followed (self.amp is read here other than as self.amp.<member>() in a\n"
            "        #   method of AmpPlugin); this file keeps apex.amp semantics through apexcompat.amp,\n"
            "        #   migrate it by hand\n"
        ) + """\
# file: train.py
import torch


def main(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    main(None, [])
""",
        codes=("APX101", "APX102", "APX201", "APX209", "APX220", "APX301", "APX311"),
    ),
    Example(
        # the same class, but another file reads an attribute named amp (the object it builds
        # may carry apex.amp there): the reads cannot all be proven apex.amp's, so the class
        # keeps it through the shim, with that reason
        "amp-kept-on-self-read-in-another-file-keeps-the-shim",
        before="""\
# file: src/models.py
import torch


class Classifier:
    def __init__(self, net, params):
        self.net = net.cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=params["lr"])
        self.use_amp = "amp" in params
        if self.use_amp:
            from apex import amp
            self.amp = amp
            self.net, self.optimizer = self.amp.initialize(
                self.net, self.optimizer, opt_level=params["amp"]["opt_level"]
            )

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        if self.use_amp:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
        return loss.item()
# file: train.py
from src.models import Classifier


def main(net, batches):
    model = Classifier(net, {"lr": 1e-3, "amp": {"opt_level": "O1"}})
    for x, y in batches:
        model.train_step(x, y)
    return model.amp.state_dict()


if __name__ == "__main__":
    main(None, [])
""",
        after="""\
# file: src/models.py
import torch


class Classifier:
    def __init__(self, net, params):
        self.net = net.cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=params["lr"])
        self.use_amp = "amp" in params
        if self.use_amp:
            from apexcompat import amp
            # TODO(apexcompat): apex.amp is stored as self.amp here; its uses through that attribute
            #   cannot be followed (an attribute named amp is also read off an object in train.py);
            #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            self.amp = amp
            self.net, self.optimizer = self.amp.initialize(
                self.net, self.optimizer, opt_level=params["amp"]["opt_level"]
            )

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        if self.use_amp:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
        return loss.item()
# file: train.py
from src.models import Classifier


def main(net, batches):
    model = Classifier(net, {"lr": 1e-3, "amp": {"opt_level": "O1"}})
    for x, y in batches:
        model.train_step(x, y)
    return model.amp.state_dict()


if __name__ == "__main__":
    main(None, [])
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex.amp kept on self in __init__ (imported there, under the switch) and read only as
        # self.amp.initialize there and self.amp.scale_loss in another method of the class, no
        # other file reading an attribute of that name: the reads are apex.amp's, so the class
        # keeps its GradScaler on self as for amp.<member> and the store goes (APX237)
        "amp-kept-on-self-in-init-read-by-its-methods",
        before="""\
# file: src/models.py
import torch


class Classifier:
    def __init__(self, net, params):
        self.net = net.cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=params["lr"])
        self.use_amp = "amp" in params
        if self.use_amp:
            from apex import amp
            self.amp = amp
            self.net, self.optimizer = self.amp.initialize(
                self.net, self.optimizer, opt_level=params["amp"]["opt_level"]
            )

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        if self.use_amp:
            with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
        return loss.item()
# file: train.py
from src.models import Classifier


def main(net, batches):
    model = Classifier(net, {"lr": 1e-3, "amp": {"opt_level": "O1"}})
    for x, y in batches:
        model.train_step(x, y)


if __name__ == "__main__":
    main(None, [])
""",
        after="""\
# file: src/models.py
import torch


class Classifier:
    def __init__(self, net, params):
        self.net = net.cuda()
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=params["lr"])
        self.use_amp = "amp" in params
        amp_enabled = bool(self.use_amp and params["amp"]["opt_level"] != "O0")
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(self.net(x), y)
        if self.use_amp:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
# file: train.py
from src.models import Classifier


def main(net, batches):
    model = Classifier(net, {"lr": 1e-3, "amp": {"opt_level": "O1"}})
    for x, y in batches:
        model.train_step(x, y)


if __name__ == "__main__":
    main(None, [])
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX237", "APX301", "APX311"),
    ),
    Example(
        # a method that clips amp.master_params (gradients apex had unscaled when scale_loss
        # exited) is also called from another file after a plain backward (allennlp's
        # learning-rate finder calls trainer.rescale_gradients()): a scaler.unscale_ inside it
        # would divide that caller's unscaled gradients by the scale, so it goes before this
        # file's call instead, where the scaled backward and the step are
        "master-params-method-called-from-another-file-is-unscaled-at-its-caller",
        before=CLIP_CALLED_ELSEWHERE,
        after='''\
# file: fitter.py
import torch


class Fitter:
    """Fits a network with gradient clipping."""

    def __init__(self, net, opt, half=None, max_norm=1.0):
        self.net = net
        self.opt = opt
        self.half = half
        self.max_norm = max_norm
        use_amp = self.half is not None and self.half != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def clip(self):
        params = list(self.net.parameters())
        return torch.nn.utils.clip_grad_norm_(params, self.max_norm)

    def step(self, x, y):
        self.opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        if self.half is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.unscale_(self.opt)
        self.clip()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.item()
# file: tools/lr_sweep.py
import torch


def sweep(fitter, batches, rates):
    """Tries each learning rate for one plain step."""
    for rate, (x, y) in zip(rates, batches):
        for group in fitter.opt.param_groups:
            group["lr"] = rate
        fitter.opt.zero_grad()
        torch.nn.functional.mse_loss(fitter.net(x), y).backward()
        fitter.clip()
        fitter.opt.step()
''',
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX322", "APX325"),
    ),
    Example(
        # ... but when the loss is stepped in another method than the one that scales it,
        # another file could call the method between the two, on gradients still scaled: the
        # file keeps apex.amp and says why
        "master-params-method-called-from-another-file-stepped-apart-keeps-the-shim",
        before=CLIP_CALLED_ELSEWHERE.replace(CLIP_STEP, CLIP_STEP_SPLIT),
        after=CLIP_CALLED_ELSEWHERE.replace(CLIP_STEP, CLIP_STEP_SPLIT)
        .replace("from apex import amp", "from apexcompat import amp")
        .replace("            params = list(amp.master_params(self.opt))\n",
                 CLIP_SPLIT_TODO + "            params = list(amp.master_params(self.opt))\n"),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the method that reads master_params is called on self by a class of another file that
        # shares no subclass with this one (the same trainer copied into two packages): that
        # call is the other class's own method, so neither keeps the other on the shim
        "master-params-method-self-called-by-an-unrelated-class-of-another-file",
        before="# file: dom/__init__.py\n# file: dom/trainer.py\n" + SPLIT_TRAINER
        + "# file: lm/__init__.py\n# file: lm/trainer.py\n" + SPLIT_TRAINER,
        after="# file: dom/__init__.py\n# file: dom/trainer.py\n" + SPLIT_TRAINER_NATIVE
        + "# file: lm/__init__.py\n# file: lm/trainer.py\n" + SPLIT_TRAINER_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311", "APX322"),
    ),
    Example(
        # ... but a subclass of it in another file calls the method on self after a plain
        # backward: that is this class's method, on gradients no GradScaler scaled
        "master-params-method-self-called-by-a-subclass-in-another-file-keeps-the-shim",
        before="# file: dom/__init__.py\n# file: dom/trainer.py\n" + SPLIT_TRAINER + SWEEPER,
        after="# file: dom/__init__.py\n# file: dom/trainer.py\n"
        + SPLIT_TRAINER.replace("from apex import amp", "from apexcompat import amp").replace(
            SPLIT_CLIP,
            "            # TODO(apexcompat): Trainer._train_batch() reads the gradients apex had unscaled, and\n"
            "            #   tools/sweep.py (in class Sweeper) calls a method of that name (after a backward no\n"
            "            #   GradScaler scales, if it is this one), so the unscale_ cannot go inside it; the loss\n"
            "            #   scaled in _forward() is not stepped there alone; this file keeps apex.amp semantics\n"
            "            #   through apexcompat.amp, migrate it by hand\n" + SPLIT_CLIP,
        )
        + SWEEPER,
        codes=("APX102", "APX220"),
    ),
    Example(
        # a subclass in another file overrides the base's scaling method and leaves the step to
        # the base's _train_batch(), which calls it on self: it scales through the base's
        # self.scaler, the base unscales before its clipping and steps; both files native
        "subclass-overrides-the-scaling-method-the-base-steps",
        before="# file: dom/__init__.py\n# file: dom/meta.py\n" + META_TRAINER
        + "# file: dom/trainer.py\n" + SPLIT_TRAINER,
        after="# file: dom/__init__.py\n# file: dom/meta.py\n" + META_TRAINER_NATIVE
        + "# file: dom/trainer.py\n" + SPLIT_TRAINER_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX239", "APX261", "APX301", "APX311", "APX322"),
    ),
    Example(
        # ... but the subclass scales only under a narrower test than the base's initialize, a
        # plain backward otherwise: the base's step would unscale gradients no GradScaler
        # scaled, so both files keep apex.amp and say why
        "subclass-scaling-under-a-narrower-test-keeps-the-shim",
        before="# file: dom/__init__.py\n# file: dom/meta.py\n" + META_TRAINER.replace(META_TEST, META_NARROW)
        + "# file: dom/trainer.py\n" + SPLIT_TRAINER,
        after="# file: dom/__init__.py\n# file: dom/meta.py\n"
        + META_TRAINER.replace(META_TEST, META_NARROW)
        .replace("from apex import amp", "from apexcompat import amp")
        .replace(META_SCALE, (
            "            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this\n"
            "            #   amp.scale_loss (the GradScaler plan across files was dropped: in dom/meta.py,\n"
            + META_NARROW_REASON.format(end=")")
            + "            #   semantics through apexcompat.amp, migrate it by hand\n" + META_SCALE
        ))
        + "# file: dom/trainer.py\n"
        + SPLIT_TRAINER.replace("from apex import amp", "from apexcompat import amp").replace(SPLIT_INIT, (
            "            # TODO(apexcompat): the GradScaler plan across files was dropped: in dom/meta.py,\n"
            + META_NARROW_REASON.format(end="")
            + "            #   semantics through apexcompat.amp, migrate it by hand\n" + SPLIT_INIT
        )),
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but a method of the subclass reads the gradients, which natively stay scaled until
        # the base's step: both files keep apex.amp and say why
        "subclass-overriding-the-scaling-method-reads-gradients-keeps-the-shim",
        before="# file: dom/__init__.py\n# file: dom/meta.py\n"
        + META_TRAINER.replace("out.detach())\n", "out.detach())\n" + META_GRAD_READ)
        + "# file: dom/trainer.py\n" + SPLIT_TRAINER,
        after="# file: dom/__init__.py\n# file: dom/meta.py\n"
        + META_TRAINER.replace("out.detach())\n", "out.detach())\n" + META_GRAD_READ)
        .replace("from apex import amp", "from apexcompat import amp")
        .replace(META_SCALE, (
            "            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this\n"
            "            #   amp.scale_loss (the GradScaler plan across files was dropped: in dom/meta.py,\n"
            + META_GRAD_REASON
            + "            #   amp.scale_loss ended)); this file keeps apex.amp semantics through apexcompat.amp,\n"
            "            #   migrate it by hand\n" + META_SCALE
        ))
        + "# file: dom/trainer.py\n"
        + SPLIT_TRAINER.replace("from apex import amp", "from apexcompat import amp").replace(SPLIT_INIT, (
            "            # TODO(apexcompat): the GradScaler plan across files was dropped: in dom/meta.py,\n"
            + META_GRAD_REASON
            + "            #   amp.scale_loss ended); this file keeps apex.amp semantics through apexcompat.amp,\n"
            "            #   migrate it by hand\n" + SPLIT_INIT
        )),
        codes=("APX102", "APX220"),
    ),
    Example(
        # a function of another module that scales the loss, handed to a runner as
        # ``module.function`` (SimpleCV's ``override_backward(default_backward.amp_backward)``):
        # the launcher's initialize reaches that amp.scale_loss, so both keep apex.amp (before, the
        # launcher went native without a GradScaler while the losses stayed on the shim); the
        # bound-backward route does not apply: the runner keeps the function, not a method
        "scaling-function-of-another-module-handed-on-keeps-the-launcher-on-the-shim",
        before="""\
# file: pkg/__init__.py
# file: pkg/backward.py
try:
    from apex import amp
except ImportError:
    pass


def amp_backward(self, total_loss, optimizer):
    with amp.scale_loss(total_loss, optimizer) as scaled_loss:
        scaled_loss.backward()
# file: pkg/runner.py
class Runner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.backward = None

    def override_backward(self, fn):
        self.backward = fn

    def train(self, batches):
        for x in batches:
            loss = self.model(x).sum()
            self.backward(self, loss, self.optimizer)
            self.optimizer.step()
# file: train.py
import torch
from apex import amp

from pkg import backward
from pkg.runner import Runner


def run(opt_level, batches):
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    runner = Runner(model, optimizer)
    runner.override_backward(backward.amp_backward)
    runner.train(batches)


if __name__ == "__main__":
    run("O1", [torch.randn(4, 2)])
""",
        after="""\
# file: pkg/__init__.py
# file: pkg/backward.py
try:
    from apexcompat import amp
except ImportError:
    pass


def amp_backward(self, total_loss, optimizer):
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss (amp_backward is read as backward.amp_backward in train.py and passed
    #   on as a value, never called directly, so the GradScaler cannot follow its callers,
    #   and run() in train.py binds amp_backward of pkg/backward.py onto runner, but
    #   Runner.override_backward() in pkg/runner.py is not the one statement `self.<attr> =
    #   types.MethodType(fn, self)`); this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    with amp.scale_loss(total_loss, optimizer) as scaled_loss:
        scaled_loss.backward()
# file: pkg/runner.py
class Runner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.backward = None

    def override_backward(self, fn):
        self.backward = fn

    def train(self, batches):
        for x in batches:
            loss = self.model(x).sum()
            self.backward(self, loss, self.optimizer)
            self.optimizer.step()
# file: train.py
import torch
from apexcompat import amp

from pkg import backward
from pkg.runner import Runner


def run(opt_level, batches):
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   pkg/backward.py (amp_backward), which is read as backward.amp_backward in train.py
    #   and passed on as a value, never called directly: the GradScaler cannot reach it;
    #   run() in train.py binds amp_backward of pkg/backward.py onto runner, but
    #   Runner.override_backward() in pkg/runner.py is not the one statement `self.<attr> =
    #   types.MethodType(fn, self)`; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    runner = Runner(model, optimizer)
    runner.override_backward(backward.amp_backward)
    runner.train(batches)


if __name__ == "__main__":
    run("O1", [torch.randn(4, 2)])
""",
        codes=("APX102", "APX220"),
    ),
    # a hook class built through a module bound by ``from pkg import hooks`` (cvpods' shape): the
    # call is followed (``submodule_calls``); the hook, kept in a list, hands its losses nowhere
    # the autocast can follow, which the reason says
    Example(
        "hook-built-through-a-module-from-imported-says-it-is-called",
        before="""\
# file: pkg/__init__.py
# file: pkg/hooks.py
from apex import amp


class BackwardHook:
    def __init__(self, trainer):
        self.trainer = trainer

    def after_step(self, loss):
        with amp.scale_loss(loss, self.trainer.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.trainer.optimizer.step()
# file: runner.py
from apex import amp

from pkg import hooks


class Runner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.hooks = [hooks.BackwardHook(self)]
""",
        after="""\
# file: pkg/__init__.py
# file: pkg/hooks.py
from apexcompat import amp


class BackwardHook:
    def __init__(self, trainer):
        self.trainer = trainer

    def after_step(self, loss):
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in runner.py, the
        #   hooks.BackwardHook instance is kept neither on self nor in a local name: the losses
        #   its after_step() is handed cannot be followed to put autocast around their forward
        #   passes); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        with amp.scale_loss(loss, self.trainer.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.trainer.optimizer.step()
# file: runner.py
from apexcompat import amp

from pkg import hooks


class Runner:
    def __init__(self, model, optimizer):
        # TODO(apexcompat): the GradScaler plan across files was dropped: in runner.py, the
        #   hooks.BackwardHook instance is kept neither on self nor in a local name: the losses
        #   its after_step() is handed cannot be followed to put autocast around their forward
        #   passes; this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.hooks = [hooks.BackwardHook(self)]
""",
        codes=("APX102", "APX220"),
    ),
    # a training function called through a submodule bound by ``from pkg import engine``: as
    # resolvable as ``import pkg.engine as engine``, since the package binds no other ``engine``
    Example(
        "function-called-through-a-from-imported-submodule-gets-the-scaler",
        before="""\
# file: pkg/__init__.py
from .engine import *
# file: pkg/engine.py
from apex import amp

__all__ = ["fit"]


def fit(model, batches, optimizer):
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: train.py
import torch
from apex import amp

from pkg import engine


def main():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    engine.fit(model, [torch.randn(4, 2)], optimizer)


if __name__ == "__main__":
    main()
""",
        after="""\
# file: pkg/__init__.py
from .engine import *
# file: pkg/engine.py
import torch

__all__ = ["fit"]


def fit(model, batches, optimizer, scaler):
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).sum()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: train.py
import torch

from pkg import engine


def main():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    engine.fit(model, [torch.randn(4, 2)], optimizer, scaler=scaler)


if __name__ == "__main__":
    main()
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX214", "APX301", "APX311"),
    ),
    # the same call where the package's ``__init__.py`` binds ``engine`` to something else
    # (``from pkg import engine`` reads the package's attribute first): not followed
    Example(
        "call-through-a-name-the-package-binds-itself-is-not-followed",
        before="""\
# file: pkg/__init__.py
from .legacy import engine
# file: pkg/legacy.py
class engine:
    @staticmethod
    def fit(model, batches, optimizer):
        pass
# file: pkg/engine.py
from apex import amp


def fit(model, batches, optimizer):
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: train.py
import torch
from apex import amp

from pkg import engine


def main():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    engine.fit(model, [torch.randn(4, 2)], optimizer)


if __name__ == "__main__":
    main()
""",
        after="""\
# file: pkg/__init__.py
from .legacy import engine
# file: pkg/legacy.py
class engine:
    @staticmethod
    def fit(model, batches, optimizer):
        pass
# file: pkg/engine.py
from apexcompat import amp


def fit(model, batches, optimizer):
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (fit is called as engine.fit(...) in train.py, through `from pkg
        #   import engine`, where the package may bind engine itself rather than its submodule:
        #   no GradScaler route follows that call, so the GradScaler cannot follow its callers);
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: train.py
import torch
from apexcompat import amp

from pkg import engine


def main():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   pkg/engine.py (fit), which is called as engine.fit(...) in train.py, through `from
    #   pkg import engine`, where the package may bind engine itself rather than its
    #   submodule: no GradScaler route follows that call: the GradScaler cannot reach it;
    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    engine.fit(model, [torch.randn(4, 2)], optimizer)


if __name__ == "__main__":
    main()
""",
        codes=("APX102", "APX220"),
    ),
    # a launcher whose initializes are in several functions (wetectron's train and train_cdb,
    # the second initializing twice in sequence): each function creates its own GradScaler and
    # hands it to the loop it calls (``several_launchers``)
    Example(
        "launcher-initializing-in-several-functions-gives-each-its-scaler",
        before="""\
# file: engine.py
from apex import amp


def fit(model, batches, optimizer):
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def fit_gated(model, gate, batches, optimizer, gate_optimizer):
    for x in batches:
        optimizer.zero_grad()
        loss = model(gate(x)).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        gate_optimizer.zero_grad()
        gate_loss = -model(gate(x)).sum()
        with amp.scale_loss(gate_loss, gate_optimizer) as scaled_gate_loss:
            scaled_gate_loss.backward()
        gate_optimizer.step()
# file: train.py
import torch
from apex import amp

from engine import fit, fit_gated


def pretrain(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fit(model, batches, optimizer)


def pretrain_gated(model, gate, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    gate_optimizer = torch.optim.SGD(gate.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    gate, gate_optimizer = amp.initialize(gate, gate_optimizer, opt_level="O1")
    fit_gated(model, gate, batches, optimizer, gate_optimizer)
""",
        after="""\
# file: engine.py
import torch


def fit(model, batches, optimizer, scaler):
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).sum()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def fit_gated(model, gate, batches, optimizer, gate_optimizer, scaler):
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(gate(x)).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        gate_optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            gate_loss = -model(gate(x)).sum()
        scaler.scale(gate_loss).backward()
        scaler.step(gate_optimizer)
        scaler.update()
# file: train.py
import torch

from engine import fit, fit_gated


def pretrain(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    fit(model, batches, optimizer, scaler=scaler)


def pretrain_gated(model, gate, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    gate_optimizer = torch.optim.SGD(gate.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cuda")
    fit_gated(model, gate, batches, optimizer, gate_optimizer, scaler=scaler)
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX214", "APX245", "APX301", "APX311"),
    ),
    # the same launcher with a function that calls the loop without initializing: it would have
    # no GradScaler to hand on, so no route plans for the launcher, and the reasons say why
    Example(
        "launcher-initializing-in-several-functions-with-a-stray-call-says-so",
        before="""\
# file: engine.py
from apex import amp


def fit(model, batches, optimizer):
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def fit_gated(model, gate, batches, optimizer, gate_optimizer):
    for x in batches:
        optimizer.zero_grad()
        loss = model(gate(x)).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        gate_optimizer.zero_grad()
        gate_loss = -model(gate(x)).sum()
        with amp.scale_loss(gate_loss, gate_optimizer) as scaled_gate_loss:
            scaled_gate_loss.backward()
        gate_optimizer.step()
# file: train.py
import torch
from apex import amp

from engine import fit, fit_gated


def pretrain(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fit(model, batches, optimizer)


def pretrain_gated(model, gate, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    gate_optimizer = torch.optim.SGD(gate.parameters(), lr=0.01)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    gate, gate_optimizer = amp.initialize(gate, gate_optimizer, opt_level="O1")
    fit_gated(model, gate, batches, optimizer, gate_optimizer)


def finetune(model, batches):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    fit(model, batches, optimizer)
""",
        after="""\
# file: engine.py
from apexcompat import amp


def fit(model, batches, optimizer):
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (fit is called only from train.py:10 (pretrain), where no GradScaler
        #   exists: train.py initializes amp in several functions (pretrain, pretrain_gated),
        #   and no GradScaler route plans for it (its finetune() calls fit() without
        #   initializing amp itself)); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def fit_gated(model, gate, batches, optimizer, gate_optimizer):
    for x in batches:
        optimizer.zero_grad()
        loss = model(gate(x)).sum()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (fit_gated is called only from train.py:18 (pretrain_gated), where no
        #   GradScaler exists: train.py initializes amp in several functions (pretrain,
        #   pretrain_gated), and no GradScaler route plans for it (its finetune() calls fit()
        #   without initializing amp itself)); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        gate_optimizer.zero_grad()
        gate_loss = -model(gate(x)).sum()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (fit_gated is called only from train.py:18 (pretrain_gated), where no
        #   GradScaler exists: train.py initializes amp in several functions (pretrain,
        #   pretrain_gated), and no GradScaler route plans for it (its finetune() calls fit()
        #   without initializing amp itself)); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(gate_loss, gate_optimizer) as scaled_gate_loss:
            scaled_gate_loss.backward()
        gate_optimizer.step()
# file: train.py
import torch
from apexcompat import amp

from engine import fit, fit_gated


def pretrain(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file: train.py initializes amp in several
    #   functions (pretrain, pretrain_gated), and no GradScaler route plans for it (its
    #   finetune() calls fit() without initializing amp itself); this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fit(model, batches, optimizer)


def pretrain_gated(model, gate, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    gate_optimizer = torch.optim.SGD(gate.parameters(), lr=0.01)
    # TODO(apexcompat): no amp.scale_loss in this file: train.py initializes amp in several
    #   functions (pretrain, pretrain_gated), and no GradScaler route plans for it (its
    #   finetune() calls fit() without initializing amp itself); this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    # TODO(apexcompat): no amp.scale_loss in this file: train.py initializes amp in several
    #   functions (pretrain, pretrain_gated), and no GradScaler route plans for it (its
    #   finetune() calls fit() without initializing amp itself); this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    gate, gate_optimizer = amp.initialize(gate, gate_optimizer, opt_level="O1")
    fit_gated(model, gate, batches, optimizer, gate_optimizer)


def finetune(model, batches):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    fit(model, batches, optimizer)
""",
        codes=("APX102", "APX220"),
    ),
    # DLE-GNMT's shape: the trainer computes the loss and hands it to a stepper object of another
    # file (kept on self) that scales it: autocast goes around the trainer's forward pass
    Example(
        "loss-handed-to-a-stepper-of-another-file-kept-on-self",
        before="""\
# file: trainer.py
import torch
import torch.nn.functional as F
from apex import amp

from steppers import AmpStepper, Fp32Stepper


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer = model, optimizer
        if fp16:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O2")
            self.stepper = AmpStepper(self.model)
        else:
            self.stepper = Fp32Stepper(self.model)

    def iterate(self, x, y, update):
        output = self.model(x)
        loss = F.cross_entropy(output, y)
        self.stepper.step(loss, self.optimizer, update)
        return loss.item()
# file: steppers.py
from apex import amp


class Fp32Stepper:
    def __init__(self, model):
        self.model = model

    def step(self, loss, optimizer, update):
        loss.backward()
        if update:
            optimizer.step()
            self.model.zero_grad()


class AmpStepper:
    def __init__(self, model):
        self.model = model

    def step(self, loss, optimizer, update):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if update:
            optimizer.step()
            self.model.zero_grad()
""",
        after="""\
# file: trainer.py
import torch
import torch.nn.functional as F

from steppers import AmpStepper, Fp32Stepper


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer = model, optimizer
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        if fp16:
            self.stepper = AmpStepper(self.model, scaler=self.scaler)
        else:
            self.stepper = Fp32Stepper(self.model)

    def iterate(self, x, y, update):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            output = self.model(x)
            loss = F.cross_entropy(output, y)
        self.stepper.step(loss, self.optimizer, update)
        return loss.item()
# file: steppers.py
class Fp32Stepper:
    def __init__(self, model):
        self.model = model

    def step(self, loss, optimizer, update):
        loss.backward()
        if update:
            optimizer.step()
            self.model.zero_grad()


class AmpStepper:
    def __init__(self, model, scaler):
        self.scaler = scaler
        self.model = model

    def step(self, loss, optimizer, update):
        self.scaler.scale(loss).backward()
        if update:
            self.scaler.step(optimizer)
            self.scaler.update()
            self.model.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311', 'APX314'),
    ),
    # the same with the stepper in a local name of the function that initializes
    Example(
        "loss-handed-to-a-stepper-of-another-file-in-a-local-name",
        before="""\
# file: train.py
import torch.nn.functional as F
from apex import amp

from steppers import AmpStepper


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    stepper = AmpStepper(model)
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        stepper.step(loss, optimizer)
# file: steppers.py
from apex import amp


class AmpStepper:
    def __init__(self, model):
        self.model = model

    def step(self, loss, optimizer):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        self.model.zero_grad()
""",
        after="""\
# file: train.py
import torch.nn.functional as F

from steppers import AmpStepper
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    stepper = AmpStepper(model, scaler=scaler)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(x), y)
        stepper.step(loss, optimizer)
# file: steppers.py
class AmpStepper:
    def __init__(self, model, scaler):
        self.scaler = scaler
        self.model = model

    def step(self, loss, optimizer):
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()
        self.model.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311'),
    ),
    # the stepper is handed to another function: the losses it gets cannot be followed there, so
    # nothing proves their forward passes would run under autocast
    Example(
        "stepper-passed-on-as-a-value-stays-on-apexcompat",
        before="""\
# file: train.py
import torch.nn.functional as F
from apex import amp

from steppers import AmpStepper


def fit(stepper, model, optimizer, batches):
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        stepper.step(loss, optimizer)


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    stepper = AmpStepper(model)
    fit(stepper, model, optimizer, batches)
# file: steppers.py
from apex import amp


class AmpStepper:
    def __init__(self, model):
        self.model = model

    def step(self, loss, optimizer):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        self.model.zero_grad()
""",
        after="""\
# file: train.py
import torch.nn.functional as F
from apexcompat import amp

from steppers import AmpStepper


def fit(stepper, model, optimizer, batches):
    for x, y in batches:
        loss = F.cross_entropy(model(x), y)
        stepper.step(loss, optimizer)


def train(model, optimizer, batches):
    # TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, stepper
    #   is used as a value: the losses handed to its step() cannot be followed; this file
    #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    stepper = AmpStepper(model)
    fit(stepper, model, optimizer, batches)
# file: steppers.py
from apexcompat import amp


class AmpStepper:
    def __init__(self, model):
        self.model = model

    def step(self, loss, optimizer):
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in train.py, stepper
        #   is used as a value: the losses handed to its step() cannot be followed); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        self.model.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    # DLE-GNMT's shape: a class of another file tunes apex's loss scaler in its __init__ through
    # a local alias; it gets the launcher's GradScaler, which the settings update where they stand
    Example(
        "loss-scaler-settings-in-a-class-of-another-file",
        before="""\
# file: train.py
import torch
from apex import amp

from stepper import AmpStepper


def main(data, init_scale, window):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    stepper = AmpStepper(model, optimizer, loss_scale=init_scale, scale_window=window)
    for x, y in data:
        stepper.train_step(x, y)
# file: stepper.py
import torch.nn.functional as F
import apex.amp._amp_state
from apex import amp


class AmpStepper:
    def __init__(self, model, optimizer, loss_scale=8192, scale_window=128):
        self.model = model
        self.optimizer = optimizer
        loss_scaler = apex.amp._amp_state.loss_scalers[0]
        loss_scaler._loss_scale = loss_scale
        loss_scaler._scale_seq_len = scale_window

    def train_step(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
# file: train.py
import torch

from stepper import AmpStepper


def main(data, init_scale, window):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    stepper = AmpStepper(model, optimizer, loss_scale=init_scale, scale_window=window, scaler=scaler)
    for x, y in data:
        stepper.train_step(x, y)
# file: stepper.py
import torch.nn.functional as F
import torch


class AmpStepper:
    def __init__(self, model, optimizer, loss_scale=8192, scale_window=128, *, scaler):
        self.scaler = scaler
        self.model = model
        self.optimizer = optimizer
        self.scaler.load_state_dict({**self.scaler.state_dict(), "scale": loss_scale})
        self.scaler.set_growth_interval(scale_window)

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=('APX101', 'APX201', 'APX208', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311'),
    ),
    # ``amp.initialize`` in the launcher, ``amp.scale_loss`` in the training function it
    # imports: the GradScaler is created in the launcher and passed on
    Example(
        "scaler-passed-to-a-function-of-another-file",
        before="""\
# file: train.py
import argparse

import torch
from apex import amp

from engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for epoch in range(10):
        train_one_epoch(model, optimizer, epoch)


if __name__ == "__main__":
    main()
""" + ENGINE_BEFORE,
        after="""\
# file: train.py
import argparse

import torch

from engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(10):
        train_one_epoch(model, optimizer, epoch, scaler=scaler)


if __name__ == "__main__":
    main()
""" + ENGINE_AFTER,
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311'),
    ),
    # a trainer class of another module scales the losses: its ``__init__`` takes the GradScaler
    # and keeps it on ``self``
    Example(
        "trainer-class-of-another-file",
        before="""\
# file: train.py
import torch
from apex import amp

from trainer import Trainer


def main():
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    trainer = Trainer(model, optimizer)
    trainer.fit(torch.randn(1000, 8, device="cuda"))
    torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, "last.pt")
# file: trainer.py
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train_step(self, batch):
        loss = self.model(batch).pow(2).mean()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, data):
        for batch in data.split(32):
            self.train_step(batch)
""",
        after="""\
# file: train.py
import torch

from trainer import Trainer


def main():
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    scaler = torch.amp.GradScaler("cuda")
    trainer = Trainer(model, optimizer, scaler=scaler)
    trainer.fit(torch.randn(1000, 8, device="cuda"))
    torch.save({"model": model.state_dict(), "amp": scaler.state_dict()}, "last.pt")
# file: trainer.py
import torch


class Trainer:
    def __init__(self, model, optimizer, scaler):
        self.scaler = scaler
        self.model = model
        self.optimizer = optimizer

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(batch).pow(2).mean()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()

    def fit(self, data):
        for batch in data.split(32):
            self.train_step(batch)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311', 'APX401'),
    ),
    # checkpoint helpers of another module save and load the amp state: they take the
    # GradScaler, and apex checkpoints still load
    Example(
        "checkpoint-helpers-of-another-file",
        before="""\
# file: train.py
import torch
from apex import amp

from checkpoint import load_checkpoint, save_checkpoint


def main(resume=None):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    if resume:
        load_checkpoint(resume, model, optimizer)
    for step in range(1000):
        loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    save_checkpoint("last.pt", model, optimizer)
# file: checkpoint.py
import torch
from apex import amp


def save_checkpoint(path, model, optimizer):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": amp.state_dict()}
    torch.save(state, path)


def load_checkpoint(path, model, optimizer):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    amp.load_state_dict(state["amp"])
""",
        after="""\
# file: train.py
import torch

from checkpoint import load_checkpoint, save_checkpoint


def main(resume=None):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    if resume:
        load_checkpoint(resume, model, optimizer, scaler=scaler)
    for step in range(1000):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    save_checkpoint("last.pt", model, optimizer, scaler=scaler)
# file: checkpoint.py
import torch


def load_scaler_state(scaler, state):
    \"\"\"Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    \"\"\"
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


def save_checkpoint(path, model, optimizer, scaler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": scaler.state_dict()}
    torch.save(state, path)


def load_checkpoint(path, model, optimizer, scaler):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    load_scaler_state(scaler, state["amp"])
""",
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311', 'APX401', 'APX402'),
    ),
    # a file on the shim whose amp code goes native while it keeps other apex names: its
    # `import apexcompat.amp` (read as `import apex.amp`) goes beside the `import apex` it sits
    # with (before: it stayed as `import apex.amp`, a module apex no longer ships)
    Example(
        "shim-import-beside-import-apex-goes-with-the-amp-code",
        before="""\
# file: build.py
try:
    import apexcompat.amp
    import apex
except ImportError:
    pass


def build(model, opt, optimizer):
    try:
        import apexcompat.amp
        import apex
    except ImportError:
        raise ImportError("no apex")
    if opt.level:
        model, optimizer = apexcompat.amp.initialize(model, optimizer, opt_level="O1")
    else:
        optimizer = apex.optimizers.FusedLAMB(optimizer.param_groups)
    return model, optimizer
# file: train.py
from build import build


def main(model, opt, optimizer):
    return build(model, opt, optimizer)
""",
        after="""\
# file: build.py
import torch

try:
    import apex
except ImportError:
    pass


def build(model, opt, optimizer):
    try:
        import apex
    except ImportError:
        raise ImportError("no apex")
    if opt.level:
        model.forward = torch.autocast("cuda", dtype=torch.float16)(model.forward)
    else:
        optimizer = apex.optimizers.FusedLAMB(optimizer.param_groups)
    return model, optimizer
# file: train.py
from build import build


def main(model, opt, optimizer):
    return build(model, opt, optimizer)
""",
        codes=("APX101", "APX229", "APX809"),
    ),
    # the trainer class is imported from its package, whose __init__ re-exports it with star
    # imports (pytorch-template's layout): the last star import that binds the name is known
    # (a static __all__ here; the other module's public names do not hold it), so the call is
    # followed as if the class were imported by name (before: the shim, 'calls through a star
    # import are not followed': severstal's sever/trainer)
    Example(
        "class-re-exported-by-a-star-import-is-followed",
        before="""\
# file: main.py
import torch
from apex import amp

from engine import Trainer


def main(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer).fit(batches)
# file: engine/__init__.py
from .meters import *
from .trainer import *
# file: engine/meters.py
class Meter:
    def __init__(self):
        self.total = 0.0
# file: engine/trainer.py
import torch
from apex import amp

__all__ = ["Trainer"]


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        for x in batches:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
""",
        after="""\
# file: main.py
import torch

from engine import Trainer


def main(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    Trainer(model, optimizer, scaler=scaler).fit(batches)
# file: engine/__init__.py
from .meters import *
from .trainer import *
# file: engine/meters.py
class Meter:
    def __init__(self):
        self.total = 0.0
# file: engine/trainer.py
import torch

__all__ = ["Trainer"]


class Trainer:
    def __init__(self, model, optimizer, scaler):
        self.scaler = scaler
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        for x in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = self.model(x).sum()
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311'),
    ),
    # the same with an __all__ computed at run time: what the star import binds is unknown,
    # and the reason says so
    Example(
        "fallback-class-re-exported-by-a-star-import-with-a-dynamic-all",
        before="""\
# file: main.py
import torch
from apex import amp

from engine import Trainer


def main(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer).fit(batches)
# file: engine/__init__.py
from .meters import *
from .trainer import *
# file: engine/meters.py
class Meter:
    def __init__(self):
        self.total = 0.0
# file: engine/trainer.py
import torch
from apex import amp

__all__ = ["Trainer"] + [n for n in dir() if n.startswith("make_")]


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        for x in batches:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
""",
        after="""\
# file: main.py
import torch
from apexcompat import amp

from engine import Trainer


def main(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   engine/trainer.py (Trainer), which is called in main.py, which imports it from
    #   engine, a package that re-exports it with a star import, but the __all__ of
    #   engine/trainer.py (star-imported) is not a static list of names: the GradScaler
    #   cannot reach it; nor can a module-level GradScaler stand in: engine/trainer.py uses
    #   apex.amp too, and cannot import main.py under one dotted name; this file keeps
    #   apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer).fit(batches)
# file: engine/__init__.py
from .meters import *
from .trainer import *
# file: engine/meters.py
class Meter:
    def __init__(self):
        self.total = 0.0
# file: engine/trainer.py
import torch
from apexcompat import amp

__all__ = ["Trainer"] + [n for n in dir() if n.startswith("make_")]


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        for x in batches:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Trainer is called in main.py, which imports it from engine, a
            #   package that re-exports it with a star import, but the __all__ of engine/trainer.py
            #   (star-imported) is not a static list of names, so the GradScaler cannot follow its
            #   callers); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
            #   hand
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
""",
        codes=('APX102', 'APX220'),
    ),
    # the trainer that scales derives from a base class of another file whose methods save and
    # load the amp state: the trainer keeps the GradScaler on self first thing in its __init__
    # (before the base's runs), the base is built nowhere and has no other subclass, so its
    # methods read it there and its file joins the component (before: all three kept the shim,
    # 'whose methods use amp where the GradScaler cannot reach them': severstal's layout)
    Example(
        "trainer-deriving-from-a-base-that-saves-the-amp-state-lends-it-the-scaler",
        before="""\
# file: main.py
import torch
from apex import amp

from trainer import Trainer


def main(loader):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer, loader).train(3)
# file: trainer.py
import torch
from apex import amp

from base_trainer import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, loader):
        super().__init__(model, optimizer)
        self.loader = loader

    def _train_epoch(self, epoch):
        for x in self.loader:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
# file: base_trainer.py
import torch
from apex import amp


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train(self, epochs):
        for epoch in range(epochs):
            self._train_epoch(epoch)
            self._save_checkpoint(epoch)

    def _train_epoch(self, epoch):
        raise NotImplementedError

    def _resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        amp.load_state_dict(state["amp"])

    def _save_checkpoint(self, epoch):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": amp.state_dict()}
        torch.save(state, f"ckpt{epoch}.pth")
""",
        after="""\
# file: main.py
import torch

from trainer import Trainer


def main(loader):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    Trainer(model, optimizer, loader, scaler=scaler).train(3)
# file: trainer.py
import torch

from base_trainer import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, loader, scaler):
        self.scaler = scaler
        super().__init__(model, optimizer)
        self.loader = loader

    def _train_epoch(self, epoch):
        for x in self.loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = self.model(x).sum()
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
# file: base_trainer.py
import torch


def load_scaler_state(scaler, state):
    \"\"\"Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    \"\"\"
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train(self, epochs):
        for epoch in range(epochs):
            self._train_epoch(epoch)
            self._save_checkpoint(epoch)

    def _train_epoch(self, epoch):
        raise NotImplementedError

    def _resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        load_scaler_state(self.scaler, state["amp"])

    def _save_checkpoint(self, epoch):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": self.scaler.state_dict()}
        torch.save(state, f"ckpt{epoch}.pth")
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311', 'APX401', 'APX402'),
    ),
    # another subclass of that base gets no GradScaler (no launcher builds it): its instances
    # would run the base's checkpoint code without one, so every file keeps the shim, and the
    # reason names that subclass
    Example(
        "fallback-base-saving-the-amp-state-with-a-subclass-no-launcher-builds",
        before="""\
# file: main.py
import torch
from apex import amp

from trainer import Trainer


def main(loader):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer, loader).train(3)
# file: trainer.py
import torch
from apex import amp

from base_trainer import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, loader):
        super().__init__(model, optimizer)
        self.loader = loader

    def _train_epoch(self, epoch):
        for x in self.loader:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
# file: base_trainer.py
import torch
from apex import amp


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train(self, epochs):
        for epoch in range(epochs):
            self._train_epoch(epoch)
            self._save_checkpoint(epoch)

    def _train_epoch(self, epoch):
        raise NotImplementedError

    def _resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        amp.load_state_dict(state["amp"])

    def _save_checkpoint(self, epoch):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": amp.state_dict()}
        torch.save(state, f"ckpt{epoch}.pth")
# file: evaluate.py
from base_trainer import BaseTrainer


class Evaluator(BaseTrainer):
    def _train_epoch(self, epoch):
        pass
""",
        after="""\
# file: main.py
import torch
from apexcompat import amp

from trainer import Trainer


def main(loader):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): the losses are scaled in trainer.py (Trainer), which cannot get the
    #   GradScaler: Trainer derives from BaseTrainer in base_trainer.py, whose methods save
    #   or load the amp state: they could read the GradScaler its subclasses keep on self,
    #   but Evaluator in evaluate.py derives from it too and does not get the GradScaler;
    #   nor can a module-level GradScaler stand in (the GradScaler plan across files was
    #   dropped: in main.py, the losses are scaled in trainer.py (Trainer), which cannot get
    #   the GradScaler: Trainer derives from BaseTrainer in base_trainer.py, whose methods
    #   save or load the amp state: they could read the GradScaler its subclasses keep on
    #   self, but Evaluator in evaluate.py derives from it too and does not get the
    #   GradScaler); this file keeps apex.amp semantics through apexcompat.amp, migrate it
    #   by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    Trainer(model, optimizer, loader).train(3)
# file: trainer.py
import torch
from apexcompat import amp

from base_trainer import BaseTrainer


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, loader):
        super().__init__(model, optimizer)
        self.loader = loader

    def _train_epoch(self, epoch):
        for x in self.loader:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Trainer derives from BaseTrainer in base_trainer.py, whose methods
            #   save or load the amp state: they could read the GradScaler its subclasses keep on
            #   self, but Evaluator in evaluate.py derives from it too and does not get the
            #   GradScaler; nor can a module-level GradScaler stand in (the GradScaler plan across
            #   files was dropped: in main.py, the losses are scaled in trainer.py (Trainer), which
            #   cannot get the GradScaler: Trainer derives from BaseTrainer in base_trainer.py,
            #   whose methods save or load the amp state: they could read the GradScaler its
            #   subclasses keep on self, but Evaluator in evaluate.py derives from it too and does
            #   not get the GradScaler)); this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
# file: base_trainer.py
import torch
from apexcompat import amp


class BaseTrainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def train(self, epochs):
        for epoch in range(epochs):
            self._train_epoch(epoch)
            self._save_checkpoint(epoch)

    def _train_epoch(self, epoch):
        raise NotImplementedError

    def _resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
        #   amp.initialize, which is created in another file and cannot reach this line
        #   (BaseTrainer is subclassed, passed on or stored in trainer.py, never called
        #   directly, so the GradScaler cannot follow its callers; nor can a module-level
        #   GradScaler stand in (the GradScaler plan across files was dropped: in main.py, the
        #   losses are scaled in trainer.py (Trainer), which cannot get the GradScaler: Trainer
        #   derives from BaseTrainer in base_trainer.py, whose methods save or load the amp
        #   state: they could read the GradScaler its subclasses keep on self, but Evaluator in
        #   evaluate.py derives from it too and does not get the GradScaler)): pass that scaler
        #   here and call `scaler.load_state_dict(state["amp"])` instead (a checkpoint apex
        #   wrote holds {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s,
        #   _growth_tracker=n into scaler.state_dict() and load that). apexcompat.amp's state is
        #   set up only by its own amp.initialize, so this line fails once that file is migrated
        amp.load_state_dict(state["amp"])

    def _save_checkpoint(self, epoch):
        # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
        #   which is created in another file and cannot reach this line (BaseTrainer is
        #   subclassed, passed on or stored in trainer.py, never called directly, so the
        #   GradScaler cannot follow its callers; nor can a module-level GradScaler stand in
        #   (the GradScaler plan across files was dropped: in main.py, the losses are scaled in
        #   trainer.py (Trainer), which cannot get the GradScaler: Trainer derives from
        #   BaseTrainer in base_trainer.py, whose methods save or load the amp state: they could
        #   read the GradScaler its subclasses keep on self, but Evaluator in evaluate.py
        #   derives from it too and does not get the GradScaler)): pass that scaler here and
        #   call `scaler.state_dict()` instead. apexcompat.amp's state is set up only by its own
        #   amp.initialize, so this line fails once that file is migrated
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": amp.state_dict()}
        torch.save(state, f"ckpt{epoch}.pth")
# file: evaluate.py
from base_trainer import BaseTrainer


class Evaluator(BaseTrainer):
    def _train_epoch(self, epoch):
        pass
""",
        codes=('APX102', 'APX220', 'APX403'),
    ),
    # DL-Art-School's layout: the base class of another file saves and loads the amp state on
    # self, and the class deriving from it initializes amp in its own __init__ (one loss scaler
    # per step there, num_losses=len(...): one GradScaler serves them); that __init__ keeps the
    # GradScaler on self where it is created, and nothing it runs calls the base's methods, so
    # they read it there; FeatureModel derives from the base too but is built nowhere, so no
    # run of the repository has one (before: the base kept the shim, 'no route keeps that
    # GradScaler on self for the base's methods', and failed once the trainer was migrated)
    Example(
        "initializing-subclass-keeps-the-scaler-on-self-for-its-base",
        before="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch
from apex import amp

from base_model import BaseModel
from steps import Step


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.nets = [torch.nn.Linear(4, 1).cuda() for _ in opt["steps"]]
        self.steps = [Step(net) for net in self.nets]
        for step in self.steps:
            self.optimizers.append(step.optimizer)
        if "amp_opt_level" in opt:
            self.nets, self.optimizers = amp.initialize(
                self.nets, self.optimizers, opt_level=opt["amp_opt_level"], num_losses=len(opt["steps"])
            )

    def optimize_parameters(self, batch):
        for loss_id, step in enumerate(self.steps):
            step.do_step(batch, loss_id)
# file: steps.py
import torch
from apex import amp


class Step:
    def __init__(self, net):
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def do_step(self, batch, loss_id):
        loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer, loss_id) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
# file: base_model.py
import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.optimizers = []

    def save_training_state(self, step):
        state = {"step": step, "optimizers": [o.state_dict() for o in self.optimizers]}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        for o, s in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(s)
        if "amp" in state:
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        after="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch

from base_model import BaseModel
from steps import Step


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.nets = [torch.nn.Linear(4, 1).cuda() for _ in opt["steps"]]
        use_amp = "amp_opt_level" in opt and opt["amp_opt_level"] != "O0"
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.scaler = scaler
        self.steps = [Step(net, scaler=scaler) for net in self.nets]
        for step in self.steps:
            self.optimizers.append(step.optimizer)

    def optimize_parameters(self, batch):
        for loss_id, step in enumerate(self.steps):
            step.do_step(batch, loss_id)
# file: steps.py
import torch


class Step:
    def __init__(self, net, scaler):
        self.scaler = scaler
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)

    def do_step(self, batch, loss_id):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
# file: base_model.py
import torch


def load_scaler_state(scaler, state):
    \"\"\"Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    \"\"\"
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.optimizers = []

    def save_training_state(self, step):
        state = {"step": step, "optimizers": [o.state_dict() for o in self.optimizers]}
        if "amp_opt_level" in self.opt:
            state["amp"] = self.scaler.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        for o, s in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(s)
        if "amp" in state:
            load_scaler_state(self.scaler, state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        codes=('APX101', 'APX201', 'APX202', 'APX203', 'APX209', 'APX213', 'APX214', 'APX259', 'APX301', 'APX302', 'APX311', 'APX401', 'APX402'),
    ),
    # the same, where the subclass scales in a method of its own: the GradScaler is created on
    # self already, under the name the base's methods read, so no line is added
    Example(
        "initializing-subclass-keeping-the-scaler-on-self-already-lends-it-to-its-base",
        before="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
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
        if "amp_opt_level" in opt:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level=opt["amp_opt_level"])

    def optimize_parameters(self, batch):
        loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
# file: base_model.py
import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        after="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch

from base_model import BaseModel


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        use_amp = "amp_opt_level" in opt and opt["amp_opt_level"] != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def optimize_parameters(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
# file: base_model.py
import torch


def load_scaler_state(scaler, state):
    \"\"\"Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    \"\"\"
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            state["amp"] = self.scaler.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            load_scaler_state(self.scaler, state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        codes=('APX101', 'APX201', 'APX202', 'APX209', 'APX259', 'APX301', 'APX311', 'APX401', 'APX402'),
    ),
    # a sibling class of the base is built (train.py): its instances would run the base's
    # methods without a GradScaler, where apex.amp had the trainer's: the base keeps the shim,
    # and the reason names where the sibling is built
    Example(
        "fallback-base-of-an-initializing-subclass-with-a-sibling-built-elsewhere",
        before="""\
# file: train.py
from feature_model import FeatureModel
from trainer import Trainer


def main(opt, loader):
    model = FeatureModel(opt) if opt.get("features") else Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
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
        if "amp_opt_level" in opt:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level=opt["amp_opt_level"])

    def optimize_parameters(self, batch):
        loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
# file: base_model.py
import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        after="""\
# file: train.py
from feature_model import FeatureModel
from trainer import Trainer


def main(opt, loader):
    model = FeatureModel(opt) if opt.get("features") else Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch

from base_model import BaseModel


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        use_amp = "amp_opt_level" in opt and opt["amp_opt_level"] != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def optimize_parameters(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
# file: base_model.py
import torch
from apexcompat import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
            #   which is created in another file and cannot reach this line (BaseModel is a base
            #   class whose methods only save or load amp's state on self, derived from by Trainer
            #   in trainer.py, which initializes amp in a method, but no GradScaler can be kept on
            #   self for them: FeatureModel in feature_model.py derives from it too and initializes
            #   nothing (it is built in train.py:6, in main): it would run them without one, so the
            #   GradScaler cannot follow its callers): pass that scaler here and call
            #   `scaler.state_dict()` instead. apexcompat.amp's state is set up only by its own
            #   amp.initialize, so this line fails once that file is migrated
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (BaseModel is a base class whose methods only save or load amp's state on self,
            #   derived from by Trainer in trainer.py, which initializes amp in a method, but no
            #   GradScaler can be kept on self for them: FeatureModel in feature_model.py derives
            #   from it too and initializes nothing (it is built in train.py:6, in main): it would
            #   run them without one, so the GradScaler cannot follow its callers): pass that scaler
            #   here and call `scaler.load_state_dict(state["amp"])` instead (a checkpoint apex
            #   wrote holds {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s,
            #   _growth_tracker=n into scaler.state_dict() and load that). apexcompat.amp's state is
            #   set up only by its own amp.initialize, so this line fails once that file is migrated
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        codes=('APX101', 'APX102', 'APX201', 'APX202', 'APX209', 'APX301', 'APX311', 'APX403'),
    ),
    # the subclass's __init__ reaches a method of the base that loads the amp state
    # (self.load() -> self.resume_training()): that it runs only after the GradScaler is kept
    # on self is not proven, so the base keeps the shim
    Example(
        "fallback-base-of-an-initializing-subclass-whose-init-runs-its-methods",
        before="""\
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
        if "amp_opt_level" in opt:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level=opt["amp_opt_level"])
        self.load()

    def load(self):
        if self.opt.get("resume"):
            self.resume_training(self.opt["resume"])

    def optimize_parameters(self, batch):
        loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
# file: base_model.py
import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        after="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch

from base_model import BaseModel


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        use_amp = "amp_opt_level" in opt and opt["amp_opt_level"] != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.load()

    def load(self):
        if self.opt.get("resume"):
            self.resume_training(self.opt["resume"])

    def optimize_parameters(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
# file: base_model.py
import torch
from apexcompat import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
            #   which is created in another file and cannot reach this line (BaseModel is a base
            #   class whose methods only save or load amp's state on self, derived from by Trainer
            #   in trainer.py, which initializes amp in a method, but no GradScaler can be kept on
            #   self for them: Trainer.__init__ runs resume_training(), which uses amp: that it runs
            #   only after the GradScaler is kept on self is not proven, so the GradScaler cannot
            #   follow its callers): pass that scaler here and call `scaler.state_dict()` instead.
            #   apexcompat.amp's state is set up only by its own amp.initialize, so this line fails
            #   once that file is migrated
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (BaseModel is a base class whose methods only save or load amp's state on self,
            #   derived from by Trainer in trainer.py, which initializes amp in a method, but no
            #   GradScaler can be kept on self for them: Trainer.__init__ runs resume_training(),
            #   which uses amp: that it runs only after the GradScaler is kept on self is not
            #   proven, so the GradScaler cannot follow its callers): pass that scaler here and call
            #   `scaler.load_state_dict(state["amp"])` instead (a checkpoint apex wrote holds
            #   {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n
            #   into scaler.state_dict() and load that). apexcompat.amp's state is set up only by
            #   its own amp.initialize, so this line fails once that file is migrated
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        codes=('APX101', 'APX102', 'APX201', 'APX202', 'APX209', 'APX301', 'APX311', 'APX403'),
    ),
    # the subclass's __init__ hands self to other code (Hook(self)), which may call the base's
    # methods before the GradScaler exists: the base keeps the shim
    Example(
        "fallback-base-of-an-initializing-subclass-whose-init-hands-self-on",
        before="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch
from apex import amp

from base_model import BaseModel
from hooks import Hook


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.hooks = [Hook(self)]
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        if "amp_opt_level" in opt:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level=opt["amp_opt_level"])

    def optimize_parameters(self, batch):
        loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
# file: hooks.py
class Hook:
    def __init__(self, model):
        self.model = model
# file: base_model.py
import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        after="""\
# file: train.py
from trainer import Trainer


def main(opt, loader):
    model = Trainer(opt)
    if opt.get("resume"):
        model.resume_training(opt["resume"])
    for step, batch in enumerate(loader):
        model.optimize_parameters(batch)
        model.save_training_state(step)
# file: trainer.py
import torch

from base_model import BaseModel
from hooks import Hook


class Trainer(BaseModel):
    def __init__(self, opt):
        super(Trainer, self).__init__(opt)
        self.hooks = [Hook(self)]
        self.net = torch.nn.Linear(4, 1).cuda()
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        use_amp = "amp_opt_level" in opt and opt["amp_opt_level"] != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def optimize_parameters(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
# file: hooks.py
class Hook:
    def __init__(self, model):
        self.model = model
# file: base_model.py
import torch
from apexcompat import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt

    def save_training_state(self, step):
        state = {"step": step, "optimizer": self.optimizer.state_dict()}
        if "amp_opt_level" in self.opt:
            # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
            #   which is created in another file and cannot reach this line (BaseModel is a base
            #   class whose methods only save or load amp's state on self, derived from by Trainer
            #   in trainer.py, which initializes amp in a method, but no GradScaler can be kept on
            #   self for them: Trainer.__init__() hands self on to other code, which may call them
            #   before the GradScaler exists, so the GradScaler cannot follow its callers): pass
            #   that scaler here and call `scaler.state_dict()` instead. apexcompat.amp's state is
            #   set up only by its own amp.initialize, so this line fails once that file is migrated
            state["amp"] = amp.state_dict()
        torch.save(state, f"{step}.state")

    def resume_training(self, path):
        state = torch.load(path)
        self.optimizer.load_state_dict(state["optimizer"])
        if "amp" in state:
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (BaseModel is a base class whose methods only save or load amp's state on self,
            #   derived from by Trainer in trainer.py, which initializes amp in a method, but no
            #   GradScaler can be kept on self for them: Trainer.__init__() hands self on to other
            #   code, which may call them before the GradScaler exists, so the GradScaler cannot
            #   follow its callers): pass that scaler here and call
            #   `scaler.load_state_dict(state["amp"])` instead (a checkpoint apex wrote holds
            #   {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n
            #   into scaler.state_dict() and load that). apexcompat.amp's state is set up only by
            #   its own amp.initialize, so this line fails once that file is migrated
            amp.load_state_dict(state["amp"])
# file: feature_model.py
from base_model import BaseModel


class FeatureModel(BaseModel):
    def optimize_parameters(self, batch):
        pass
""",
        codes=('APX101', 'APX102', 'APX201', 'APX202', 'APX209', 'APX301', 'APX311', 'APX403'),
    ),
    # a TODO names another file's call (tune.py's), whose line the first run moves (the unused
    # import above it goes): the TODO names its file and definition, not the line, so a
    # second run words it the same, finds it already there and writes nothing (when TODOs
    # quoted the line: a second copy, then the number's change)
    Example(
        "todo-naming-a-moved-line-written-once",
        before="""\
# file: train.py
import torch
from apex import amp

from engine import fit


def main():
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fit(model, optimizer)
# file: engine.py
import torch
from apex import amp


def fit(model, optimizer):
    for _ in range(100):
        loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: tune.py
import torch
from apex import amp

from engine import fit


def tune(model, optimizer):
    fit(model, optimizer)
""",
        after="""\
# file: train.py
import torch
from apexcompat import amp

from engine import fit


def main():
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): the losses are scaled in engine.py (fit), which cannot get the
    #   GradScaler: fit is also called from tune.py (in tune()), where no GradScaler exists;
    #   nor can a module-level GradScaler stand in (the GradScaler plan across files was
    #   dropped: in train.py, the losses are scaled in engine.py (fit), which cannot get the
    #   GradScaler: fit is also called from tune.py (in tune()), where no GradScaler
    #   exists); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
    #   hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fit(model, optimizer)
# file: engine.py
import torch
from apexcompat import amp


def fit(model, optimizer):
    for _ in range(100):
        loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (fit is also called from tune.py (in tune()), where no GradScaler
        #   exists; nor can a module-level GradScaler stand in (the GradScaler plan across files
        #   was dropped: in train.py, the losses are scaled in engine.py (fit), which cannot get
        #   the GradScaler: fit is also called from tune.py (in tune()), where no GradScaler
        #   exists)); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: tune.py
import torch

from engine import fit


def tune(model, optimizer):
    fit(model, optimizer)
""",
        codes=("APX101", "APX102", "APX220"),
    ),
    # the training function is also called where no GradScaler exists: no plan is proven, both
    # files stay on apexcompat.amp, and the report names the caller
    Example(
        "caller-without-a-scaler-keeps-the-shim",
        before="""\
# file: train.py
import argparse

import torch
from apex import amp

from engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for epoch in range(10):
        train_one_epoch(model, optimizer, epoch)


if __name__ == "__main__":
    main()
# file: engine.py
import torch
from apex import amp


def train_one_epoch(model, optimizer, epoch):
    for _ in range(100):
        x = torch.randn(32, 8, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: evaluate.py
import torch

from engine import train_one_epoch


def finetune(model, optimizer):
    train_one_epoch(model, optimizer, 0)
""",
        after="""\
# file: train.py
import argparse

import torch
from apexcompat import amp

from engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default="O1")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): the losses are scaled in engine.py (train_one_epoch), which cannot
    #   get the GradScaler: train_one_epoch is also called from evaluate.py (in finetune()),
    #   where no GradScaler exists; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for epoch in range(10):
        train_one_epoch(model, optimizer, epoch)


if __name__ == "__main__":
    main()
# file: engine.py
import torch
from apexcompat import amp


def train_one_epoch(model, optimizer, epoch):
    for _ in range(100):
        x = torch.randn(32, 8, device="cuda")
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (train_one_epoch is also called from evaluate.py (in finetune()),
        #   where no GradScaler exists); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: evaluate.py
import torch

from engine import train_one_epoch


def finetune(model, optimizer):
    train_one_epoch(model, optimizer, 0)
""",
        codes=("APX102", "APX220"),
    ),
    # a checkpoint module whose loader is also called by an evaluation script: that script runs
    # in a process of its own, where apex's amp state never existed (its amp.load_state_dict
    # raised there, or loaded a loss scaler nothing scaled with), so the loader takes the
    # GradScaler as `scaler=None` and uses it only when given; the launcher's calls pass it
    Example(
        "checkpoint-loader-also-called-by-a-script-that-runs-alone-takes-an-optional-scaler",
        before="""\
# file: train.py
import torch
from apex import amp

from checkpoint import export, load_checkpoint, save_checkpoint


def build():
    return torch.nn.Linear(8, 1).cuda()


def main(resume=None):
    model = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    if resume:
        load_checkpoint(resume, model, optimizer)
    for _ in range(100):
        loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    save_checkpoint("last.pt", model, optimizer)
    export(model, "model.pt")


if __name__ == "__main__":
    main()
# file: checkpoint.py
import torch
from apex import amp


def load_checkpoint(path, model, optimizer=None, with_amp=True):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    if with_amp and "amp" in state:
        amp.load_state_dict(state["amp"])
    return state.get("epoch", 0)


def export(model, path):
    torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, path)


def save_checkpoint(path, model, optimizer):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    state["amp"] = amp.state_dict()
    torch.save(state, path)
# file: evaluate.py
import sys

import torch

from checkpoint import export, load_checkpoint
from train import build


def evaluate(path):
    model = build()
    load_checkpoint(path, model, with_amp=False)
    export(model, "eval.pt")
    return model(torch.ones(1, 8, device="cuda"))


if __name__ == "__main__":
    print(evaluate(sys.argv[1]))
""",
        after="""\
# file: train.py
import torch

from checkpoint import export, load_checkpoint, save_checkpoint


def build():
    return torch.nn.Linear(8, 1).cuda()


def main(resume=None):
    model = build()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    if resume:
        load_checkpoint(resume, model, optimizer, scaler=scaler)
    for _ in range(100):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    save_checkpoint("last.pt", model, optimizer, scaler=scaler)
    export(model, "model.pt", scaler=scaler)


if __name__ == "__main__":
    main()
# file: checkpoint.py
import torch


"""
        + HELPER
        + """

def load_checkpoint(path, model, optimizer=None, with_amp=True, *, scaler=None):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    if with_amp and "amp" in state and scaler is not None:
        load_scaler_state(scaler, state["amp"])
    return state.get("epoch", 0)


def export(model, path, scaler=None):
    torch.save({"model": model.state_dict(), "amp": (scaler.state_dict() if scaler is not None else {})}, path)


def save_checkpoint(path, model, optimizer, scaler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    state["amp"] = scaler.state_dict()
    torch.save(state, path)
# file: evaluate.py
import sys

import torch

from checkpoint import export, load_checkpoint
from train import build


def evaluate(path):
    model = build()
    load_checkpoint(path, model, with_amp=False)
    export(model, "eval.pt")
    return model(torch.ones(1, 8, device="cuda"))


if __name__ == "__main__":
    print(evaluate(sys.argv[1]))
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX214", "APX301", "APX311", "APX401", "APX402"),
    ),
    # the same loader, but the script without a GradScaler trains first, in its own process,
    # through the launcher's function: there apex loaded the checkpoint's loss scale into the
    # live loss scaler, which a skipped load would not; no plan is proven, the report says where
    Example(
        "checkpoint-loader-also-called-by-a-script-that-trains-first-keeps-the-shim",
        before=TRAINS_FIRST,
        after=TRAINS_FIRST.replace("from apex import amp", "from apexcompat import amp")
        .replace("    model, optimizer = amp.initialize(", TRAINS_FIRST_INIT_TODO + "    model, optimizer = amp.initialize(")
        .replace('    amp.load_state_dict(state["amp"])', TRAINS_FIRST_LOAD_TODO + '    amp.load_state_dict(state["amp"])'),
        codes=("APX102", "APX220", "APX403"),
    ),
    # a class built before amp.initialize whose method loads the amp state when its flag says
    # so (Enigmatisms/NeRF's ProposalNetwork.loadFromFile(path, use_amp)), also built and
    # loaded by a script without apex that runs alone: there apex's amp.load_state_dict
    # raised (no amp.initialize ever ran in that process), so the method takes the GradScaler
    # as `scaler=None` and loads it only when given; the launcher's call passes it, the
    # script's call stays as it is
    Example(
        "method-loading-amp-state-also-called-by-a-script-that-runs-alone-takes-an-optional-scaler",
        before=NET_LOADER_BEFORE,
        after="""\
# file: average.py
import sys

import torch

from model import Net


def average(paths, use_amp):
    nets = [Net() for _ in paths]
    for net, path in zip(nets, paths):
        net.load_from(path, use_amp)
    return [sum(ps) / len(ps) for ps in zip(*(net.parameters() for net in nets))]


if __name__ == "__main__":
    print(average(sys.argv[1:], use_amp=True))
# file: model.py
import torch


"""
        + HELPER
        + """

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.layer(x)

    def load_from(self, path, use_amp=False, *, scaler=None):
        state = torch.load(path, map_location="cpu")
        self.load_state_dict(state["model"])
        if use_amp:
            if scaler is not None:
                load_scaler_state(scaler, state["amp"])
# file: train.py
import torch

from model import Net


def main(resume=None, use_amp=True):
    net = Net().cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    if resume:
        net.load_from(resume, use_amp, scaler=scaler)
    for _ in range(100):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save({"model": net.state_dict(), "amp": scaler.state_dict()}, "last.pt")


if __name__ == "__main__":
    main()
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX214", "APX301", "APX311", "APX401", "APX402"),
    ),
    # the same method, but the script trains first through the launcher's function: there
    # apex loaded the checkpoint's loss scale into the live loss scaler, which a skipped load
    # would not; no plan is proven, and the report names the script's call of the method and
    # why that script does not run alone
    Example(
        "method-loading-amp-state-also-called-by-a-script-that-trains-first-keeps-the-shim",
        before=NET_LOADER_BEFORE.replace(
            "from model import Net\n\n\ndef average(paths, use_amp):\n",
            "import train\nfrom model import Net\n\n\ndef average(paths, use_amp):\n    train.main()\n",
        ),
        after="""\
# file: average.py
import sys

import torch

import train
from model import Net


def average(paths, use_amp):
    train.main()
    nets = [Net() for _ in paths]
    for net, path in zip(nets, paths):
        net.load_from(path, use_amp)
    return [sum(ps) / len(ps) for ps in zip(*(net.parameters() for net in nets))]


if __name__ == "__main__":
    print(average(sys.argv[1:], use_amp=True))
# file: model.py
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(8, 1)

    def forward(self, x):
        return self.layer(x)

    def load_from(self, path, use_amp=False):
        state = torch.load(path, map_location="cpu")
        self.load_state_dict(state["model"])
        if use_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (Net.load_from is also called from average.py (in average()), where no GradScaler
            #   exists, and that file does not run alone (main of train.py initializes amp for
            #   training)): pass that scaler here and call `scaler.load_state_dict(state["amp"])`
            #   instead (a checkpoint apex wrote holds {"loss_scaler0": {"loss_scale": s,
            #   "unskipped": n}}: put scale=s, _growth_tracker=n into scaler.state_dict() and load
            #   that). apexcompat.amp's state is set up only by its own amp.initialize, so this line
            #   fails once that file is migrated
            amp.load_state_dict(state["amp"])
# file: train.py
import torch
from apexcompat import amp

from model import Net


def main(resume=None, use_amp=True):
    net = Net().cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    # TODO(apexcompat): the amp state is saved or loaded in model.py (Net), which cannot get
    #   the GradScaler: Net.load_from is also called from average.py (in average()), where
    #   no GradScaler exists, and that file does not run alone (main of train.py initializes
    #   amp for training); this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
    net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
    if resume:
        net.load_from(resume, use_amp)
    for _ in range(100):
        loss = net(torch.randn(32, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    torch.save({"model": net.state_dict(), "amp": amp.state_dict()}, "last.pt")


if __name__ == "__main__":
    main()
""",
        codes=("APX102", "APX220", "APX403"),
    ),
    # a scaler wrapper class without __init__ (timm's ApexScaler) beside its native sibling, built
    # in the launcher's apex branch: it would become a GradScaler holder, but the forward pass is
    # in the launcher's loop, out of the wrapper's reach, and would train in float32; so the
    # plan is dropped and both files stay on apexcompat.amp, saying why
    Example(
        "scaler-wrapper-with-the-forward-out-of-reach-keeps-the-shim",
        before="""\
# file: train.py
import argparse

import torch

from utils import ApexScaler, NativeScaler

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp-impl", default="apex")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_scaler = None
    if args.amp_impl == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp_impl == "native":
        loss_scaler = NativeScaler()
    for _ in range(10):
        with torch.autocast("cuda", enabled=args.amp_impl == "native"):
            loss = model(torch.randn(4, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()
    torch.save({"model": model.state_dict(), "amp": loss_scaler.state_dict()}, "ckpt.pt")
# file: utils/__init__.py
from .scalers import ApexScaler, NativeScaler
# file: utils/scalers.py
import torch
from torch.nn.utils import clip_grad_norm_

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if clip_grad is not None:
            clip_grad_norm_(amp.master_params(optimizer), clip_grad)
        optimizer.step()

    def state_dict(self):
        if "state_dict" in amp.__dict__:
            return amp.state_dict()

    def load_state_dict(self, state_dict):
        if "load_state_dict" in amp.__dict__:
            amp.load_state_dict(state_dict)


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        if clip_grad is not None:
            self._scaler.unscale_(optimizer)
            clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict):
        self._scaler.load_state_dict(state_dict)
""",
        after="""\
# file: train.py
import argparse

import torch

from utils import ApexScaler, NativeScaler

try:
    from apexcompat import amp
    has_apex = True
except ImportError:
    has_apex = False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp-impl", default="apex")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loss_scaler = None
    if args.amp_impl == "apex":
        # TODO(apexcompat): the GradScaler plan across files was dropped: in utils/scalers.py,
        #   the forward pass and loss are not next to this amp.scale_loss: wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand; this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp_impl == "native":
        loss_scaler = NativeScaler()
    for _ in range(10):
        with torch.autocast("cuda", enabled=args.amp_impl == "native"):
            loss = model(torch.randn(4, 8, device="cuda")).pow(2).mean()
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()
    torch.save({"model": model.state_dict(), "amp": loss_scaler.state_dict()}, "ckpt.pt")
# file: utils/__init__.py
from .scalers import ApexScaler, NativeScaler
# file: utils/scalers.py
import torch
from torch.nn.utils import clip_grad_norm_

try:
    from apexcompat import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in utils/scalers.py,
        #   the forward pass and loss are not next to this amp.scale_loss: wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if clip_grad is not None:
            clip_grad_norm_(amp.master_params(optimizer), clip_grad)
        optimizer.step()

    def state_dict(self):
        if "state_dict" in amp.__dict__:
            return amp.state_dict()

    def load_state_dict(self, state_dict):
        if "load_state_dict" in amp.__dict__:
            amp.load_state_dict(state_dict)


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        if clip_grad is not None:
            self._scaler.unscale_(optimizer)
            clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict):
        self._scaler.load_state_dict(state_dict)
""",
        codes=("APX102", "APX220"),
    ),
    # the same shape with the scaler classes in the repository: ApexScaler becomes a holder of
    # the launcher's GradScaler, and the launcher binds its no-op amp_autocast, which the
    # training function gets beside the wrapper, to torch.autocast on the apex branch
    Example(
        "scaler-wrapper-under-the-launchers-autocast-variable",
        before="""\
# file: train.py
import argparse
from contextlib import suppress
from functools import partial

import torch

from utils import ApexScaler, NativeScaler

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False


def train_one_epoch(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
    for x, y in loader:
        with amp_autocast():
            output = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(output, y.cuda())
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp-impl", default="apex")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    loss_scaler = None
    if args.amp_impl == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp_impl == "native":
        amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
    if loss_scaler is not None:
        torch.save({loss_scaler.state_dict_key: loss_scaler.state_dict()}, "scaler.pt")
""" + TIMM_STYLE_SCALERS,
        after="""\
# file: train.py
import argparse
from contextlib import suppress
from functools import partial

import torch

from utils import ApexScaler, NativeScaler

has_apex = True


def train_one_epoch(model, loader, optimizer, amp_autocast=suppress, loss_scaler=None):
    for x, y in loader:
        with amp_autocast():
            output = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(output, y.cuda())
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp-impl", default="apex")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    loss_scaler = None
    use_amp = args.amp_impl == "apex"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    if args.amp_impl == "apex":
        amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)
        loss_scaler = ApexScaler(scaler=scaler)
    elif args.amp_impl == "native":
        amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
    if loss_scaler is not None:
        torch.save({loss_scaler.state_dict_key: loss_scaler.state_dict()}, "scaler.pt")
# file: utils/__init__.py
from .cuda import ApexScaler, NativeScaler
# file: utils/cuda.py
import torch
from torch.nn.utils import clip_grad_norm_

has_apex = True


class ApexScaler:
    state_dict_key = "amp"

    def __init__(self, scaler):
        self.scaler = scaler

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self.scaler.scale(loss).backward()
        if clip_grad is not None:
            self.scaler.unscale_(optimizer)
            clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), clip_grad)
        self.scaler.step(optimizer)
        self.scaler.update()

    def state_dict(self):
        return self.scaler.state_dict()


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        if clip_grad is not None:
            self._scaler.unscale_(optimizer)
            clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()
""",
        codes=('APX101', 'APX103', 'APX201', 'APX213', 'APX214', 'APX215', 'APX301', 'APX311', 'APX321', 'APX401'),
    ),
    # the training function gets the wrapper but not the autocast variable: no forward pass
    # of its losses can be put under autocast, so the plan is dropped and both files keep the shim
    Example(
        "scaler-wrapper-with-the-autocast-variable-out-of-reach-keeps-the-shim",
        before="""\
# file: train.py
import argparse
from contextlib import suppress
from functools import partial

import torch

from utils import ApexScaler, NativeScaler

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False


def train_one_epoch(model, loader, optimizer, loss_scaler=None):
    for x, y in loader:
        output = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(output, y.cuda())
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()


def validate(model, loader, amp_autocast=suppress):
    with torch.no_grad(), amp_autocast():
        return sum(model(x.cuda()).sum().item() for x, _ in loader)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp-impl", default="apex")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    loss_scaler = None
    if args.amp_impl == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp_impl == "native":
        amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, loss_scaler=loss_scaler)
        validate(model, loader, amp_autocast=amp_autocast)
    if loss_scaler is not None:
        torch.save({loss_scaler.state_dict_key: loss_scaler.state_dict()}, "scaler.pt")
""" + TIMM_STYLE_SCALERS,
        after="""\
# file: train.py
import argparse
from contextlib import suppress
from functools import partial

import torch

from utils import ApexScaler, NativeScaler

try:
    from apexcompat import amp
    has_apex = True
except ImportError:
    has_apex = False


def train_one_epoch(model, loader, optimizer, loss_scaler=None):
    for x, y in loader:
        output = model(x.cuda())
        loss = torch.nn.functional.cross_entropy(output, y.cuda())
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=1.0, parameters=model.parameters())
        else:
            loss.backward()
            optimizer.step()


def validate(model, loader, amp_autocast=suppress):
    with torch.no_grad(), amp_autocast():
        return sum(model(x.cuda()).sum().item() for x, _ in loader)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--amp-impl", default="apex")
    args = parser.parse_args()
    model = torch.nn.Linear(8, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    loss_scaler = None
    if args.amp_impl == "apex":
        # TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, the
        #   forward passes of the losses handed to ApexScaler cannot be put under torch.autocast
        #   on this branch: loss_scaler is passed to train_one_epoch() without amp_autocast;
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp_impl == "native":
        amp_autocast = partial(torch.autocast, device_type="cuda", dtype=torch.float16)
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, loss_scaler=loss_scaler)
        validate(model, loader, amp_autocast=amp_autocast)
    if loss_scaler is not None:
        torch.save({loss_scaler.state_dict_key: loss_scaler.state_dict()}, "scaler.pt")
# file: utils/__init__.py
from .cuda import ApexScaler, NativeScaler
# file: utils/cuda.py
import torch
from torch.nn.utils import clip_grad_norm_

try:
    from apexcompat import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in train.py, the
        #   forward passes of the losses handed to ApexScaler cannot be put under torch.autocast
        #   on this branch: loss_scaler is passed to train_one_epoch() without amp_autocast);
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if clip_grad is not None:
            clip_grad_norm_(amp.master_params(optimizer), clip_grad)
        optimizer.step()

    def state_dict(self):
        return amp.state_dict()


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self):
        self._scaler = torch.amp.GradScaler("cuda")

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        if clip_grad is not None:
            self._scaler.unscale_(optimizer)
            clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()
""",
        codes=("APX102", "APX220"),
    ),
    # alternative initializes in the launcher (if/elif: dynamic or static scale, none without
    # --fp16): the launcher still creates the one scaler the other file's function gets
    Example(
        "alternative-initializes-in-the-launcher",
        before="""\
# file: train.py
import argparse

import torch
from apex import amp

from engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--loss-scale", type=float, default=0)
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16 and args.loss_scale == 0:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    elif args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale=64)
    for epoch in range(10):
        train_one_epoch(model, optimizer, epoch)


if __name__ == "__main__":
    main()
""" + ENGINE_BEFORE,
        after="""\
# file: train.py
import argparse

import torch

from engine import train_one_epoch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--loss-scale", type=float, default=0)
    args = parser.parse_args()
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    if args.fp16 and args.loss_scale == 0:
        scaler = torch.amp.GradScaler("cuda")
    elif args.fp16:
        # TODO(apexcompat): static loss_scale=64: the GradScaler keeps this scale, but unlike
        #   apex it skips a step whose grads hold inf/nan, which apex took; check that this is
        #   acceptable
        scaler = torch.amp.GradScaler("cuda", init_scale=64, growth_interval=10**9)
        scaler.set_backoff_factor(1.0)
    for epoch in range(10):
        train_one_epoch(model, optimizer, epoch, scaler=scaler)


if __name__ == "__main__":
    main()
""" + ENGINE_AFTER,
        codes=("APX101", "APX101", "APX201", "APX201", "APX204", "APX209", "APX213", "APX214", "APX301", "APX311"),
    ),
    # the loss is scaled in a train step class that a decorator registers and the trainer
    # calls through the registry, with the task that holds the optimizer: no call reaches it,
    # so no GradScaler can; both files keep apexcompat.amp, say where the losses are scaled
    # and name the decorator the class is handed to
    Example(
        "train-step-in-a-registry",
        before="""\
# file: task.py
import torch
from apex import amp


class Task:
    def __init__(self, model, optimizer, amp_args=None):
        self.model, self.optimizer, self.amp_args = model, optimizer, amp_args

    def prepare(self):
        if self.amp_args is not None:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **self.amp_args)
# file: steps.py
import torch
from apex import amp

STEPS = {}


def register_step(name):
    def add(cls):
        STEPS[name] = cls
        return cls

    return add


@register_step("standard")
class StandardStep:
    def __call__(self, task, x, y):
        loss = torch.nn.functional.mse_loss(task.model(x), y)
        task.optimizer.zero_grad()
        with amp.scale_loss(loss, task.optimizer) as scaled_loss:
            scaled_loss.backward()
        task.optimizer.step()
        return loss
""",
        after="""\
# file: task.py
import torch
from apexcompat import amp


class Task:
    def __init__(self, model, optimizer, amp_args=None):
        self.model, self.optimizer, self.amp_args = model, optimizer, amp_args

    def prepare(self):
        if self.amp_args is not None:
            # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in steps.py
            #   (StandardStep), which is handed to its decorator @register_step('standard'), which
            #   may keep it to build it by name, never called directly: the GradScaler cannot reach
            #   it; nor can a module-level GradScaler stand in: steps.py uses apex.amp too, and
            #   import task would bind a name it uses; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **self.amp_args)
# file: steps.py
import torch
from apexcompat import amp

STEPS = {}


def register_step(name):
    def add(cls):
        STEPS[name] = cls
        return cls

    return add


@register_step("standard")
class StandardStep:
    def __call__(self, task, x, y):
        loss = torch.nn.functional.mse_loss(task.model(x), y)
        task.optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (StandardStep is handed to its decorator @register_step('standard'),
        #   which may keep it to build it by name, never called directly, so the GradScaler
        #   cannot follow its callers); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, task.optimizer) as scaled_loss:
            scaled_loss.backward()
        task.optimizer.step()
        return loss
""",
        codes=('APX102', 'APX102', 'APX220', 'APX220'),
    ),
    # the model class owns its update (GAN.train_step scales two losses, loss_id 0 and 1) and
    # is built before amp.initialize: train_step takes the GradScalers, one per loss id, and
    # the launcher passes them; reading GAN.LATENT hands the class to nobody
    Example(
        "model-steps-itself-built-before-the-scaler",
        before="""\
# file: train.py
import torch
from apex import amp

from nets import GAN


def main(loader, resume=None):
    model = GAN().cuda()
    opt_g = torch.optim.Adam(model.generator.parameters())
    opt_d = torch.optim.Adam(model.discriminator.parameters())
    model, [opt_g, opt_d] = amp.initialize(model, [opt_g, opt_d], opt_level="O1", num_losses=2)
    if resume:
        amp.load_state_dict(torch.load(resume)["amp"])
    for real in loader:
        noise = torch.randn(real.size(0), GAN.LATENT).cuda()
        model.train_step(real, noise, opt_g, opt_d)
    torch.save({"model": model.state_dict(), "amp": amp.state_dict()}, "last.pt")
# file: nets.py
import torch
from apex import amp


class GAN(torch.nn.Module):
    LATENT = 8

    def __init__(self):
        super().__init__()
        self.generator = torch.nn.Linear(self.LATENT, 2)
        self.discriminator = torch.nn.Linear(2, 1)

    def train_step(self, real, noise, opt_g, opt_d):
        opt_d.zero_grad()
        fake = self.generator(noise)
        loss_d = self.discriminator(fake.detach()).mean() - self.discriminator(real).mean()
        with amp.scale_loss(loss_d, opt_d, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        loss_g = -self.discriminator(fake).mean()
        with amp.scale_loss(loss_g, opt_g, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        opt_g.step()
""",
        after="""\
# file: train.py
import torch

from nets import GAN


"""
        + HELPER
        + "\n\n"
        + LIST_HELPER
        + """

def main(loader, resume=None):
    model = GAN().cuda()
    opt_g = torch.optim.Adam(model.generator.parameters())
    opt_d = torch.optim.Adam(model.discriminator.parameters())
    scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
    if resume:
        load_scaler_states(scalers, torch.load(resume)["amp"])
    for real in loader:
        noise = torch.randn(real.size(0), GAN.LATENT).cuda()
        model.train_step(real, noise, opt_g, opt_d, scalers=scalers)
    torch.save({"model": model.state_dict(), "amp": [loss_scaler.state_dict() for loss_scaler in scalers]}, "last.pt")
# file: nets.py
import torch


class GAN(torch.nn.Module):
    LATENT = 8

    def __init__(self):
        super().__init__()
        self.generator = torch.nn.Linear(self.LATENT, 2)
        self.discriminator = torch.nn.Linear(2, 1)

    def train_step(self, real, noise, opt_g, opt_d, scalers):
        opt_d.zero_grad()
        with torch.autocast(next((p.device.type for p in self.parameters()), "cuda"), dtype=torch.float16, enabled=scalers[0].is_enabled()):
            fake = self.generator(noise)
            loss_d = self.discriminator(fake.detach()).mean() - self.discriminator(real).mean()
        scalers[0].scale(loss_d).backward()
        scalers[0].step(opt_d)
        scalers[0].update()
        opt_g.zero_grad()
        with torch.autocast(next((p.device.type for p in self.parameters()), "cuda"), dtype=torch.float16, enabled=scalers[0].is_enabled()):
            loss_g = -self.discriminator(fake).mean()
        scalers[1].scale(loss_g).backward()
        scalers[1].step(opt_g)
        scalers[1].update()
""",
        codes=(
            "APX101",
            "APX101",
            "APX201",
            "APX203",
            "APX209",
            "APX209",
            "APX213",
            "APX214",
            "APX301",
            "APX301",
            "APX311",
            "APX311",
            "APX401",
            "APX402",
        ),
    ),
    # apex.amp handed to checkpoint helpers of another file that only save/load its state
    # (and test that it was given): they are given the GradScaler; loading converts an apex
    # checkpoint's entry for it and hands anything else (apex.amp from a caller that keeps
    # it) the entry as it is
    Example(
        "amp-given-to-state-only-helpers",
        before="""\
# file: train.py
import torch
from apex import amp

from checkpoints import restore, snapshot


def main(model, optimizer, loader, resume=None):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    if resume:
        restore(resume, model, optimizer, amp=amp)
    for x in loader:
        loss = model(x).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    snapshot("last.pt", model, optimizer, amp=amp)
# file: checkpoints.py
\"\"\"Saving and resuming, with or without apex (give apex.amp as ``amp``).\"\"\"
import torch


def snapshot(path, model, optimizer, amp=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp is not None:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def restore(path, model, optimizer, amp=None):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if amp is not None and "amp" in state:
        amp.load_state_dict(state["amp"])
""",
        after="""\
# file: train.py
import torch

from checkpoints import restore, snapshot


def main(model, optimizer, loader, resume=None):
    scaler = torch.amp.GradScaler("cuda")
    if resume:
        restore(resume, model, optimizer, amp=scaler)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    snapshot("last.pt", model, optimizer, amp=scaler)
# file: checkpoints.py
\"\"\"Saving and resuming, with or without apex (give apex.amp as ``amp``).\"\"\"
import torch


"""
        + PASSING_HELPER
        + """

def snapshot(path, model, optimizer, amp=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp is not None:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def restore(path, model, optimizer, amp=None):
    state = torch.load(path)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if amp is not None and "amp" in state:
        load_scaler_state(amp, state["amp"])
""",
        codes=("APX101", "APX201", "APX209", "APX223", "APX223", "APX224", "APX224", "APX301", "APX311"),
    ),
    # the same, apex.amp handed only where apex runs (``amp=(amp) if use_amp else None``,
    # Enigmatisms/NeRF's saveModel): the GradScaler goes in that branch (it said "apex.amp is
    # passed on as a value here" and kept the shim)
    Example(
        "amp-or-none-given-to-a-state-only-helper",
        before="""\
# file: train.py
import torch
from apex import amp

from helpers import save_model


def main(model, optimizer, loader, use_amp):
    if use_amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).mean()
        optimizer.zero_grad()
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
    save_model(model, "last.pt", opt=optimizer, amp=(amp) if use_amp else None)
# file: helpers.py
import torch


def save_model(model, path, opt=None, amp=None):
    checkpoint = {"model": model.state_dict()}
    if not amp is None:
        checkpoint["amp"] = amp.state_dict()
    if not opt is None:
        checkpoint["optimizer"] = opt.state_dict()
    torch.save(checkpoint, path)
""",
        after="""\
# file: train.py
import torch

from helpers import save_model


def main(model, optimizer, loader, use_amp):
    amp_enabled = bool(use_amp)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp_enabled):
            loss = model(x).mean()
        optimizer.zero_grad()
        if use_amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
    save_model(model, "last.pt", opt=optimizer, amp=scaler if use_amp else None)
# file: helpers.py
import torch


def save_model(model, path, opt=None, amp=None):
    checkpoint = {"model": model.state_dict()}
    if not amp is None:
        checkpoint["amp"] = amp.state_dict()
    if not opt is None:
        checkpoint["optimizer"] = opt.state_dict()
    torch.save(checkpoint, path)
""",
        codes=("APX101", "APX201", "APX209", "APX223", "APX301", "APX311"),
    ),
    # Enigmatisms/NeRF's shape: the amp state is loaded by methods of two model classes, one
    # of them built only as its subclass of another file (``Field`` as ``MipField``), one name
    # of which may hold torch's DistributedDataParallel wrapper (no method of the model on it:
    # AttributeError either way), and a render script, run instead of training by the same
    # ``__main__`` block, loads it after an inference initialize: that run never trains, so its
    # calls pass nothing (it kept apex.amp: "subclassed ... never called directly", "does not
    # run alone", "not proven to call")
    Example(
        "state-methods-of-a-subclass-built-model-beside-a-render-only-run",
        before=SUBCLASS_BUILT_LOADERS,
        after="""# file: train.py
import argparse

import torch
from torch import nn

from mip import MipField
from proposal import Proposal
from render import render_only


def main(args):
    field = MipField(args.width).cuda()
    proposal = Proposal(args.width).cuda()
    if args.ddp:
        field = nn.parallel.DistributedDataParallel(field)
    opt = torch.optim.Adam(list(field.parameters()) + list(proposal.parameters()), lr=1e-3)
    use_amp = bool(args.amp)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    if args.resume:
        field.loadFromFile(args.field_path, args.amp, scaler=scaler)
        proposal.loadFromFile(args.proposal_path, args.amp, scaler=scaler)
    for _ in range(args.steps):
        x = torch.rand(8, 3).cuda()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = (field(x).sum(-1) * proposal(x).squeeze(-1)).pow(2).mean()
        opt.zero_grad()
        if args.amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(opt)
        scaler.update()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--ddp", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--field-path", default="field.pt")
    parser.add_argument("--proposal-path", default="proposal.pt")
    args = parser.parse_args()
    if args.render:
        render_only(args)
    else:
        main(args)
# file: render.py
import torch

from mip import MipField
from proposal import Proposal


def render_only(args):
    field = MipField(args.width).cuda()
    proposal = Proposal(args.width).cuda()
    use_amp = bool(args.amp)
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        field.loadFromFile(args.field_path, args.amp)
        proposal.loadFromFile(args.proposal_path, args.amp)
    with torch.no_grad():
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            return field(torch.rand(8, 3).cuda()) * proposal(torch.rand(8, 3).cuda())
# file: fields.py
import torch
from torch import nn


"""
        + HELPER
        + """

class Field(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layer = nn.Linear(3, width)

    def loadFromFile(self, path, use_amp=False, *, scaler=None):
        save = torch.load(path)
        self.load_state_dict(save["model"])
        if use_amp:
            if scaler is not None:
                load_scaler_state(scaler, save["amp"])
# file: mip.py
from torch import nn

from fields import Field


class MipField(Field):
    def __init__(self, width):
        super().__init__(width)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        return self.head(self.layer(x))
# file: proposal.py
import torch
from torch import nn


"""
        + HELPER
        + """

class Proposal(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def forward(self, x):
        return self.net(x)

    def loadFromFile(self, path, use_amp=False, *, scaler=None):
        save = torch.load(path)
        self.load_state_dict(save["model"])
        if use_amp:
            if scaler is not None:
                load_scaler_state(scaler, save["amp"])
""",
        codes=("APX101", "APX201", "APX206", "APX209", "APX213", "APX214", "APX301", "APX311", "APX402"),
    ),
    # the same, but the subclass redefines the state method, calling the base's through
    # super() as it was written: that call would pass no GradScaler, so the component keeps
    # apex.amp through the shim, with the reason
    Example(
        "state-method-redefined-by-the-subclass-keeps-the-shim",
        before=SUBCLASS_BUILT_LOADERS.replace(
            "        return self.head(self.layer(x))\n",
            "        return self.head(self.layer(x))\n\n    def loadFromFile(self, path, use_amp=False):\n"
            "        super().loadFromFile(path, use_amp)\n        print(\"loaded\", path)\n",
        ).replace(
            "    field.loadFromFile(args.field_path, args.amp)\n    proposal.loadFromFile(args.proposal_path, args.amp)\n",
            "",
        ),
        after="""# file: train.py
import argparse

import torch
from torch import nn

from mip import MipField
from proposal import Proposal
from render import render_only


def main(args):
    field = MipField(args.width).cuda()
    proposal = Proposal(args.width).cuda()
    if args.ddp:
        field = nn.parallel.DistributedDataParallel(field)
    opt = torch.optim.Adam(list(field.parameters()) + list(proposal.parameters()), lr=1e-3)
    if args.amp:
        from apexcompat import amp
        # TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, the amp
        #   state is saved or loaded in fields.py (Field), which cannot get the GradScaler:
        #   MipField in mip.py redefines loadFromFile() of Field; this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        [field, proposal], opt = amp.initialize([field, proposal], opt, opt_level="O1")
    if args.resume:
        field.loadFromFile(args.field_path, args.amp)
        proposal.loadFromFile(args.proposal_path, args.amp)
    for _ in range(args.steps):
        x = torch.rand(8, 3).cuda()
        loss = (field(x).sum(-1) * proposal(x).squeeze(-1)).pow(2).mean()
        opt.zero_grad()
        if args.amp:
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        opt.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--render", action="store_true")
    parser.add_argument("--amp", action="store_true")
    parser.add_argument("--ddp", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--field-path", default="field.pt")
    parser.add_argument("--proposal-path", default="proposal.pt")
    args = parser.parse_args()
    if args.render:
        render_only(args)
    else:
        main(args)
# file: render.py
import torch

from mip import MipField
from proposal import Proposal


def render_only(args):
    field = MipField(args.width).cuda()
    proposal = Proposal(args.width).cuda()
    use_amp = bool(args.amp)
    with torch.no_grad():
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            return field(torch.rand(8, 3).cuda()) * proposal(torch.rand(8, 3).cuda())
# file: fields.py
import torch
from torch import nn


class Field(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.layer = nn.Linear(3, width)

    def loadFromFile(self, path, use_amp=False):
        save = torch.load(path)
        self.load_state_dict(save["model"])
        if use_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.load_state_dict(save["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (MipField in mip.py redefines loadFromFile() of Field): pass that scaler here and
            #   call `scaler.load_state_dict(save["amp"])` instead (a checkpoint apex wrote holds
            #   {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n
            #   into scaler.state_dict() and load that). apexcompat.amp's state is set up only by
            #   its own amp.initialize, so this line fails once that file is migrated
            amp.load_state_dict(save["amp"])
# file: mip.py
from torch import nn

from fields import Field


class MipField(Field):
    def __init__(self, width):
        super().__init__(width)
        self.head = nn.Linear(width, 4)

    def forward(self, x):
        return self.head(self.layer(x))

    def loadFromFile(self, path, use_amp=False):
        super().loadFromFile(path, use_amp)
        print("loaded", path)
# file: proposal.py
import torch
from torch import nn


class Proposal(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.net = nn.Linear(3, 1)

    def forward(self, x):
        return self.net(x)

    def loadFromFile(self, path, use_amp=False):
        save = torch.load(path)
        self.load_state_dict(save["model"])
        if use_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.load_state_dict(save["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line (the
            #   GradScaler plan across files was dropped: in train.py, the amp state is saved or
            #   loaded in fields.py (Field), which cannot get the GradScaler: MipField in mip.py
            #   redefines loadFromFile() of Field): pass that scaler here and call
            #   `scaler.load_state_dict(save["amp"])` instead (a checkpoint apex wrote holds
            #   {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s, _growth_tracker=n
            #   into scaler.state_dict() and load that). apexcompat.amp's state is set up only by
            #   its own amp.initialize, so this line fails once that file is migrated
            amp.load_state_dict(save["amp"])
""",
        codes=("APX101", "APX102", "APX206", "APX220", "APX403"),
    ),
    # the same, apex.amp kept on self by a helper class, and a helper that clips
    # amp.master_params(optimizer): the optimizer's parameters, unscaled before the call
    Example(
        "amp-kept-by-a-helper-class-and-master-params",
        before="""\
# file: train.py
import torch
from apex import amp

from tools import Checkpointer, clip_gradients


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    checkpointer = Checkpointer(model, optimizer, amp=amp)
    for x in loader:
        loss = model(x).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip_gradients(amp, optimizer, 1.0)
        optimizer.step()
    checkpointer.save("last.pt")
# file: tools.py
\"\"\"Training tools that also take apex.amp (as ``amp``).\"\"\"
import torch


class Checkpointer:
    def __init__(self, model, optimizer, amp=None):
        self.model = model
        self.optimizer = optimizer
        self.amp = amp

    def save(self, path):
        state = {"model": self.model.state_dict()}
        if self.amp is not None:
            state["amp"] = self.amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if self.amp is not None:
            self.amp.load_state_dict(state["amp"])


def clip_gradients(amp, optimizer, max_norm):
    return torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
""",
        after="""\
# file: train.py
import torch

from tools import Checkpointer, clip_gradients


def main(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    checkpointer = Checkpointer(model, optimizer, amp=scaler)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clip_gradients(scaler, optimizer, 1.0)
        scaler.step(optimizer)
        scaler.update()
    checkpointer.save("last.pt")
# file: tools.py
\"\"\"Training tools that also take apex.amp (as ``amp``).\"\"\"
import torch


"""
        + PASSING_HELPER
        + """

class Checkpointer:
    def __init__(self, model, optimizer, amp=None):
        self.model = model
        self.optimizer = optimizer
        self.amp = amp

    def save(self, path):
        state = {"model": self.model.state_dict()}
        if self.amp is not None:
            state["amp"] = self.amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if self.amp is not None:
            load_scaler_state(self.amp, state["amp"])


def clip_gradients(amp, optimizer, max_norm):
    return torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)
""",
        codes=("APX101", "APX201", "APX209", "APX223", "APX223", "APX224", "APX224", "APX301", "APX311", "APX325"),
    ),
    # mmcv's runner and hooks (Swin-Det and the mmdet/mmseg forks): nothing in the repository
    # calls the hook that scales or the runner subclass that checkpoints; mmcv hands them the
    # runner, which the launcher builds with the initialized optimizer: the runner carries the
    # GradScaler too (disabled when the config's fp16 is off), mmcv's @auto_fp16 runs the
    # decorated forward passes under autocast once fp16_enabled is set (mmcv >= 1.3.2), and the
    # checkpoint function of the runner's package is given the GradScaler
    Example(
        "mmcv-runner-carries-the-scaler-to-its-hooks",
        before="""\
# file: det/apis/train.py
import torch
from mmcv.runner import build_optimizer, build_runner

from custom.runner import EpochBasedRunnerAmp

try:
    import apex
except ImportError:
    print("apex is not installed")


def train_detector(model, data_loaders, cfg):
    optimizer = build_optimizer(model, cfg.optimizer)
    if cfg.optimizer_config.get("type") == "AccumOptimizerHook":
        if cfg.optimizer_config.get("use_fp16", False):
            model, optimizer = apex.amp.initialize(model.cuda(), optimizer, opt_level="O1")
            for m in model.modules():
                if hasattr(m, "fp16_enabled"):
                    m.fp16_enabled = True
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer, work_dir=cfg.work_dir))
    runner.register_training_hooks(cfg.lr_config, cfg.optimizer_config, cfg.checkpoint_config)
    if cfg.resume_from:
        runner.resume(cfg.resume_from)
    runner.run(data_loaders, cfg.workflow)
"""
        + MMCV_MODEL
        + """\
# file: det/core/hooks.py
from mmcv.runner import HOOKS, OptimizerHook

try:
    import apex
except ImportError:
    print("apex is not installed")


@HOOKS.register_module()
class AccumOptimizerHook(OptimizerHook):
"""
        + ACCUMULATING_HOOK_METHODS
        + """\
# file: custom/runner/checkpoint.py
import torch

try:
    import apex
except ImportError:
    print("apex is not installed")


def save_checkpoint(model, filename, optimizer=None, meta=None):
    checkpoint = {"meta": meta or {}, "state_dict": model.state_dict()}
    if optimizer is not None:
        checkpoint["optimizer"] = optimizer.state_dict()
    checkpoint["amp"] = apex.amp.state_dict()
    torch.save(checkpoint, filename)
# file: custom/runner/epoch_based_runner.py
import os.path as osp

from mmcv.runner import RUNNERS, EpochBasedRunner

from .checkpoint import save_checkpoint

try:
    import apex
except ImportError:
    print("apex is not installed")


@RUNNERS.register_module()
class EpochBasedRunnerAmp(EpochBasedRunner):
    def save_checkpoint(self, out_dir, filename_tmpl="epoch_{}.pth", save_optimizer=True, meta=None):
        filepath = osp.join(out_dir, filename_tmpl.format(self.epoch + 1))
        optimizer = self.optimizer if save_optimizer else None
        save_checkpoint(self.model, filepath, optimizer=optimizer, meta=meta)

    def resume(self, checkpoint, resume_optimizer=True):
        checkpoint = self.load_checkpoint(checkpoint)
        self._epoch = checkpoint["meta"]["epoch"]
        if "optimizer" in checkpoint and resume_optimizer:
            self.optimizer.load_state_dict(checkpoint["optimizer"])
        if "amp" in checkpoint:
            apex.amp.load_state_dict(checkpoint["amp"])
""",
        after="""\
# file: det/apis/train.py
import torch
from mmcv.runner import build_optimizer, build_runner

from custom.runner import EpochBasedRunnerAmp


def train_detector(model, data_loaders, cfg):
    optimizer = build_optimizer(model, cfg.optimizer)
    if cfg.optimizer_config.get("type") == "AccumOptimizerHook":
        if cfg.optimizer_config.get("use_fp16", False):
            model = model.cuda()
            for m in model.modules():
                if hasattr(m, "fp16_enabled"):
                    m.fp16_enabled = True
    use_amp = bool(cfg.optimizer_config.get("type") == "AccumOptimizerHook" and \
cfg.optimizer_config.get("use_fp16", False))
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer, work_dir=cfg.work_dir))
    runner.grad_scaler = scaler
    runner.register_training_hooks(cfg.lr_config, cfg.optimizer_config, cfg.checkpoint_config)
    if cfg.resume_from:
        runner.resume(cfg.resume_from)
    runner.run(data_loaders, cfg.workflow)
"""
        + MMCV_MODEL
        + """\
# file: det/core/hooks.py
from mmcv.runner import HOOKS, OptimizerHook


@HOOKS.register_module()
class AccumOptimizerHook(OptimizerHook):
    def __init__(self, update_interval=1, grad_clip=None, use_fp16=False):
        self.update_interval = update_interval
        self.grad_clip = grad_clip
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        runner.outputs["loss"] /= self.update_interval
        runner.grad_scaler.scale(runner.outputs["loss"]).backward()
        if self.every_n_iters(runner, self.update_interval):
            if self.grad_clip is not None:
                runner.grad_scaler.unscale_(runner.optimizer)
                self.clip_grads(runner.model.parameters())
            runner.grad_scaler.step(runner.optimizer)
            runner.grad_scaler.update()
            runner.optimizer.zero_grad()
# file: custom/runner/checkpoint.py
import torch


def save_checkpoint(model, filename, optimizer=None, meta=None, *, scaler):
    checkpoint = {"meta": meta or {}, "state_dict": model.state_dict()}
    if optimizer is not None:
        checkpoint["optimizer"] = optimizer.state_dict()
    checkpoint["amp"] = scaler.state_dict()
    torch.save(checkpoint, filename)
# file: custom/runner/epoch_based_runner.py
import os.path as osp

from mmcv.runner import RUNNERS, EpochBasedRunner

from .checkpoint import save_checkpoint


"""
        + HELPER
        + """\


@RUNNERS.register_module()
class EpochBasedRunnerAmp(EpochBasedRunner):
    def save_checkpoint(self, out_dir, filename_tmpl="epoch_{}.pth", save_optimizer=True, meta=None):
        filepath = osp.join(out_dir, filename_tmpl.format(self.epoch + 1))
        optimizer = self.optimizer if save_optimizer else None
        save_checkpoint(self.model, filepath, optimizer=optimizer, meta=meta, scaler=self.grad_scaler)

    def resume(self, checkpoint, resume_optimizer=True):
        checkpoint = self.load_checkpoint(checkpoint)
        self._epoch = checkpoint["meta"]["epoch"]
        if "optimizer" in checkpoint and resume_optimizer:
            self.optimizer.load_state_dict(checkpoint["optimizer"])
        if "amp" in checkpoint:
            load_scaler_state(self.grad_scaler, checkpoint["amp"])
""",
        codes=("APX101", "APX103", "APX201", "APX213", "APX214", "APX225", "APX226", "APX301", "APX311", "APX314",
               "APX316", "APX325", "APX401", "APX402"),
    ),
    # the same shape with the runner built by calling its class (Video-Swin-Transformer,
    # sweep6): ``Runner = EpochBasedRunnerAmp; runner = Runner(model, optimizer=...)`` on the
    # amp branch, mmcv's own runner on the other; each runner the launcher builds carries the
    # GradScaler (disabled off fp16), and a test that builds a runner for other hooks (it
    # never names the fp16 hook) does not count as a runner without one
    Example(
        "mmcv-runner-built-by-its-class-in-both-branches-carries-the-scaler",
        before="""\
# file: vid/apis/train.py
import torch
from mmcv.runner import EpochBasedRunner, build_optimizer

from custom.runner import EpochBasedRunnerAmp

try:
    import apex
except ImportError:
    print("apex is not installed")


def train_model(model, data_loaders, cfg):
    optimizer = build_optimizer(model, cfg.optimizer)
    use_amp = False
    if cfg.optimizer_config.get("type") == "DistOptimizerHook":
        if cfg.optimizer_config.get("use_fp16", False):
            model, optimizer = apex.amp.initialize(model.cuda(), optimizer, opt_level="O1")
            for m in model.modules():
                if hasattr(m, "fp16_enabled"):
                    m.fp16_enabled = True
            use_amp = True
    if use_amp:
        Runner = EpochBasedRunnerAmp
        runner = Runner(model, optimizer=optimizer, work_dir=cfg.work_dir, amp=use_amp)
    else:
        Runner = EpochBasedRunner
        runner = Runner(model, optimizer=optimizer, work_dir=cfg.work_dir)
    runner.register_training_hooks(cfg.lr_config, cfg.optimizer_config, cfg.checkpoint_config)
    if cfg.resume_from:
        runner.resume(cfg.resume_from, resume_amp=use_amp)
    runner.run(data_loaders, cfg.workflow)
# file: vid/models/recognizer.py
import torch
from mmcv.runner import auto_fp16


class Recognizer(torch.nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head
        self.fp16_enabled = False

    @auto_fp16(apply_to=("imgs",))
    def forward(self, imgs, label):
        return self.head.loss(self.backbone(imgs), label)

    def train_step(self, data, optimizer):
        return dict(loss=self(**data))
# file: vid/core/hooks.py
from mmcv.runner import HOOKS, OptimizerHook

try:
    import apex
except ImportError:
    print("apex is not installed")


@HOOKS.register_module()
class DistOptimizerHook(OptimizerHook):
"""
        + ACCUMULATING_HOOK_METHODS
        + """\
# file: custom/runner/__init__.py
from .epoch_based_runner import EpochBasedRunnerAmp

__all__ = ["EpochBasedRunnerAmp"]
# file: custom/runner/epoch_based_runner.py
import mmcv

try:
    import apex
except ImportError:
    print("apex is not installed")


class EpochBasedRunnerAmp(mmcv.runner.EpochBasedRunner):
    def __init__(self, model, optimizer=None, work_dir=None, amp=False):
        super().__init__(model, optimizer=optimizer, work_dir=work_dir)
        self.amp = amp

    def resume(self, checkpoint, resume_optimizer=True, resume_amp=False):
        checkpoint = self.load_checkpoint(checkpoint)
        self._epoch = checkpoint["meta"]["epoch"]
        if "optimizer" in checkpoint and resume_optimizer:
            self.optimizer.load_state_dict(checkpoint["optimizer"])
        if "amp" in checkpoint and resume_amp:
            apex.amp.load_state_dict(checkpoint["amp"])
# file: tests/test_lr_hooks.py
from mmcv.runner import build_runner


def test_lr_hook(model, optimizer, tmp_path):
    runner = build_runner(dict(type="EpochBasedRunner", max_epochs=1), default_args=dict(
        model=model, optimizer=optimizer, work_dir=str(tmp_path)))
    runner.register_lr_hook(dict(policy="step", step=[1]))
""",
        after="""\
# file: vid/apis/train.py
import torch
from mmcv.runner import EpochBasedRunner, build_optimizer

from custom.runner import EpochBasedRunnerAmp


def train_model(model, data_loaders, cfg):
    optimizer = build_optimizer(model, cfg.optimizer)
    use_amp = False
    if cfg.optimizer_config.get("type") == "DistOptimizerHook":
        if cfg.optimizer_config.get("use_fp16", False):
            model = model.cuda()
            for m in model.modules():
                if hasattr(m, "fp16_enabled"):
                    m.fp16_enabled = True
            use_amp = True
    amp_enabled = bool(cfg.optimizer_config.get("type") == "DistOptimizerHook" and cfg.optimizer_config.get("use_fp16", False))
    scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)
    if use_amp:
        Runner = EpochBasedRunnerAmp
        runner = Runner(model, optimizer=optimizer, work_dir=cfg.work_dir, amp=use_amp)
        runner.grad_scaler = scaler
    else:
        Runner = EpochBasedRunner
        runner = Runner(model, optimizer=optimizer, work_dir=cfg.work_dir)
        runner.grad_scaler = scaler
    runner.register_training_hooks(cfg.lr_config, cfg.optimizer_config, cfg.checkpoint_config)
    if cfg.resume_from:
        runner.resume(cfg.resume_from, resume_amp=use_amp)
    runner.run(data_loaders, cfg.workflow)
# file: vid/models/recognizer.py
import torch
from mmcv.runner import auto_fp16


class Recognizer(torch.nn.Module):
    def __init__(self, backbone, head):
        super().__init__()
        self.backbone = backbone
        self.head = head
        self.fp16_enabled = False

    @auto_fp16(apply_to=("imgs",))
    def forward(self, imgs, label):
        return self.head.loss(self.backbone(imgs), label)

    def train_step(self, data, optimizer):
        return dict(loss=self(**data))
# file: vid/core/hooks.py
from mmcv.runner import HOOKS, OptimizerHook


@HOOKS.register_module()
class DistOptimizerHook(OptimizerHook):
    def __init__(self, update_interval=1, grad_clip=None, use_fp16=False):
        self.update_interval = update_interval
        self.grad_clip = grad_clip
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        runner.outputs["loss"] /= self.update_interval
        runner.grad_scaler.scale(runner.outputs["loss"]).backward()
        if self.every_n_iters(runner, self.update_interval):
            if self.grad_clip is not None:
                runner.grad_scaler.unscale_(runner.optimizer)
                self.clip_grads(runner.model.parameters())
            runner.grad_scaler.step(runner.optimizer)
            runner.grad_scaler.update()
            runner.optimizer.zero_grad()
# file: custom/runner/__init__.py
from .epoch_based_runner import EpochBasedRunnerAmp

__all__ = ["EpochBasedRunnerAmp"]
# file: custom/runner/epoch_based_runner.py
import mmcv


"""
        + HELPER
        + """\


class EpochBasedRunnerAmp(mmcv.runner.EpochBasedRunner):
    def __init__(self, model, optimizer=None, work_dir=None, amp=False):
        super().__init__(model, optimizer=optimizer, work_dir=work_dir)
        self.amp = amp

    def resume(self, checkpoint, resume_optimizer=True, resume_amp=False):
        checkpoint = self.load_checkpoint(checkpoint)
        self._epoch = checkpoint["meta"]["epoch"]
        if "optimizer" in checkpoint and resume_optimizer:
            self.optimizer.load_state_dict(checkpoint["optimizer"])
        if "amp" in checkpoint and resume_amp:
            load_scaler_state(self.grad_scaler, checkpoint["amp"])
# file: tests/test_lr_hooks.py
from mmcv.runner import build_runner


def test_lr_hook(model, optimizer, tmp_path):
    runner = build_runner(dict(type="EpochBasedRunner", max_epochs=1), default_args=dict(
        model=model, optimizer=optimizer, work_dir=str(tmp_path)))
    runner.register_lr_hook(dict(policy="step", step=[1]))
""",
        codes=("APX101", "APX103", "APX201", "APX225", "APX226", "APX301", "APX311", "APX314", "APX316", "APX325",
               "APX402"),
    ),
    # the losses are scaled in a function another file only reads (SimpleCV hands its
    # amp_backward to the launcher as a value): the shim stays, and the reason says so (it
    # said "called from no file"), sweep6
    Example(
        "fallback-scaling-function-handed-on-as-a-module-attribute",
        before="""\
# file: launch.py
from apex import amp

from core import backward
from engine import Launcher


def run(model, optimizer, opt_level):
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    launcher = Launcher(model, optimizer)
    launcher.override_backward(backward.amp_backward)
    launcher.train()
# file: engine.py
class Launcher:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.backward = lambda loss, optimizer: loss.backward()

    def override_backward(self, fn):
        self.backward = fn

    def train(self):
        for x in range(3):
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            self.backward(loss, self.optimizer)
            self.optimizer.step()
# file: core/backward.py
try:
    from apex import amp
except ImportError:
    pass


def amp_backward(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
""",
        after="""\
# file: launch.py
from apexcompat import amp

from core import backward
from engine import Launcher


def run(model, optimizer, opt_level):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   core/backward.py (amp_backward), which is read as backward.amp_backward in launch.py
    #   and passed on as a value, never called directly: the GradScaler cannot reach it;
    #   run() in launch.py binds amp_backward of core/backward.py onto launcher, but
    #   Launcher.override_backward() in engine.py is not the one statement `self.<attr> =
    #   types.MethodType(fn, self)`; nor can a module-level GradScaler stand in:
    #   core/backward.py uses apex.amp too, and cannot import launch.py under one dotted
    #   name; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    launcher = Launcher(model, optimizer)
    launcher.override_backward(backward.amp_backward)
    launcher.train()
# file: engine.py
class Launcher:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.backward = lambda loss, optimizer: loss.backward()

    def override_backward(self, fn):
        self.backward = fn

    def train(self):
        for x in range(3):
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            self.backward(loss, self.optimizer)
            self.optimizer.step()
# file: core/backward.py
try:
    from apexcompat import amp
except ImportError:
    pass


def amp_backward(loss, optimizer):
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss (amp_backward is read as backward.amp_backward in launch.py and
    #   passed on as a value, never called directly, so the GradScaler cannot follow its
    #   callers, and run() in launch.py binds amp_backward of core/backward.py onto
    #   launcher, but Launcher.override_backward() in engine.py is not the one statement
    #   `self.<attr> = types.MethodType(fn, self)`); this file keeps apex.amp semantics
    #   through apexcompat.amp, migrate it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
""",
        codes=("APX102", "APX220"),
    ),
    # a class called through `from fitter import *` (Kaggle-2020-Alaska2's Fitter): fitter.py
    # has no __all__ and defines the public name after its own star import, the launcher binds
    # it nowhere else and no star import after that one binds it, so the call is followed as if
    # the name were imported (before: the shim, 'calls through a star import are not
    # followed')
    Example(
        "scaling-class-called-through-a-star-import",
        before="""\
# file: main.py
from apex import amp

from helpers import *
from fitter import *


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fitter = Fitter(model, optimizer)
    for x in loader:
        fitter.step(x)
# file: helpers.py
import os


def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
# file: fitter.py
from apex import amp

from helpers import *


class Fitter:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, x):
        loss = self.model(x).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
# file: main.py
from helpers import *
from fitter import *
import torch


def main(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    fitter = Fitter(model, optimizer, scaler=scaler)
    for x in loader:
        fitter.step(x)
# file: helpers.py
import os


def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
# file: fitter.py
from helpers import *
import torch


class Fitter:
    def __init__(self, model, optimizer, scaler):
        self.scaler = scaler
        self.model = model
        self.optimizer = optimizer

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(x).sum()
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311'),
    ),
    # a later star import of a module outside the repository may bind the same name: which
    # class the call builds is unknown, and the reason says so
    Example(
        "fallback-star-import-from-outside-the-repository-after-it",
        before="""\
# file: main.py
from apex import amp

from fitter import *
from torchvision.models import *


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fitter = Fitter(model, optimizer)
    for x in loader:
        fitter.step(x)
# file: helpers.py
import os


def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
# file: fitter.py
from apex import amp

from helpers import *


class Fitter:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, x):
        loss = self.model(x).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
# file: main.py
from apexcompat import amp

from fitter import *
from torchvision.models import *


def main(model, optimizer, loader):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in fitter.py
    #   (Fitter), which is called in main.py, which imports it with `from fitter import *`,
    #   but `from torchvision.models import *` imports a module outside the repository: the
    #   GradScaler cannot reach it; nor can a module-level GradScaler stand in (the
    #   GradScaler plan across files was dropped: in fitter.py, the forward pass and loss
    #   are not next to this amp.scale_loss: wrap them in `with torch.autocast("cuda",
    #   dtype=torch.float16):` by hand); this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    fitter = Fitter(model, optimizer)
    for x in loader:
        fitter.step(x)
# file: helpers.py
import os


def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
# file: fitter.py
from apexcompat import amp

from helpers import *


class Fitter:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, x):
        loss = self.model(x).sum()
        self.optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (Fitter is called in main.py, which imports it with `from fitter
        #   import *`, but `from torchvision.models import *` imports a module outside the
        #   repository, so the GradScaler cannot follow its callers; nor can a module-level
        #   GradScaler stand in (the GradScaler plan across files was dropped: in fitter.py, the
        #   forward pass and loss are not next to this amp.scale_loss: wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand)); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        codes=('APX102', 'APX220'),
    ),
    # the launcher binds the name again itself: not followed, with that reason
    Example(
        "fallback-star-imported-name-bound-again",
        before="""\
# file: main.py
from apex import amp

from helpers import *
from fitter import *


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for Fitter in (Fitter,):
        fitter = Fitter(model, optimizer)
    for x in loader:
        fitter.step(x)
# file: helpers.py
import os


def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
# file: fitter.py
from apex import amp

from helpers import *


class Fitter:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, x):
        loss = self.model(x).sum()
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
# file: main.py
from apexcompat import amp

from helpers import *
from fitter import *


def main(model, optimizer, loader):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in fitter.py
    #   (Fitter), which is called in main.py, which imports it with `from fitter import *`,
    #   but main.py also binds the name Fitter itself: the GradScaler cannot reach it; nor
    #   can a module-level GradScaler stand in (the GradScaler plan across files was
    #   dropped: in fitter.py, the forward pass and loss are not next to this
    #   amp.scale_loss: wrap them in `with torch.autocast("cuda", dtype=torch.float16):` by
    #   hand); this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for Fitter in (Fitter,):
        fitter = Fitter(model, optimizer)
    for x in loader:
        fitter.step(x)
# file: helpers.py
import os


def seed_everything(seed):
    os.environ["PYTHONHASHSEED"] = str(seed)
# file: fitter.py
from apexcompat import amp

from helpers import *


class Fitter:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def step(self, x):
        loss = self.model(x).sum()
        self.optimizer.zero_grad()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (Fitter is called in main.py, which imports it with `from fitter
        #   import *`, but main.py also binds the name Fitter itself, so the GradScaler cannot
        #   follow its callers; nor can a module-level GradScaler stand in (the GradScaler plan
        #   across files was dropped: in fitter.py, the forward pass and loss are not next to
        #   this amp.scale_loss: wrap them in `with torch.autocast("cuda",
        #   dtype=torch.float16):` by hand)); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        codes=('APX102', 'APX220'),
    ),
    # the star-imported class is followed, and the launcher builds it before amp.initialize
    # (Kaggle-2020-Alaska2's Fitter, which makes its own optimizer, then initializes
    # fitter.model, fitter.optimizer): its constructor cannot take the GradScaler, so the
    # launcher puts it on the instance where it is created, on every path (APX248), and the
    # methods that used amp read it on self (before: the shim, 'this site comes before
    # amp.initialize in the same function', said of the initialize)
    Example(
        "class-built-before-the-initialize-gets-the-scaler-on-the-instance",
        before="""\
# file: main.py
from apex import amp

from fitter import *


def main(model, loader, fp16):
    fitter = Fitter(model, loader)
    if fp16:
        fitter.model, fitter.optimizer = amp.initialize(fitter.model, fitter.optimizer, opt_level="O1")
    fitter.fit()
# file: fitter.py
import torch
from apex import amp


class Fitter:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for epoch in range(2):
            self.train_one_epoch()
            self.save("ckpt.pth")

    def train_one_epoch(self):
        for x in self.loader:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "amp": amp.state_dict()}, path)
""",
        after="""\
# file: main.py
from fitter import *
import torch


def main(model, loader, fp16):
    fitter = Fitter(model, loader)
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    fitter.scaler = scaler
    fitter.fit()
# file: fitter.py
import torch


class Fitter:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for epoch in range(2):
            self.train_one_epoch()
            self.save("ckpt.pth")

    def train_one_epoch(self):
        for x in self.loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = self.model(x).sum()
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "amp": self.scaler.state_dict()}, path)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX248', 'APX301', 'APX311', 'APX401'),
    ),
    # the launcher runs a method of that instance before the initialize (a checkpoint saved
    # before training): the GradScaler, whose switch reads nothing bound in between, is made
    # before the instance is built and handed to its constructor, so it is there for that save
    Example(
        "class-built-and-used-before-the-initialize-takes-a-scaler-made-first",
        before="""\
# file: main.py
from apex import amp

from fitter import *


def main(model, loader, fp16):
    fitter = Fitter(model, loader)
    fitter.save("untrained.pth")
    if fp16:
        fitter.model, fitter.optimizer = amp.initialize(fitter.model, fitter.optimizer, opt_level="O1")
    fitter.fit()
# file: fitter.py
import torch
from apex import amp


class Fitter:
    def __init__(self, model, loader):
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for epoch in range(2):
            self.train_one_epoch()
            self.save("ckpt.pth")

    def train_one_epoch(self):
        for x in self.loader:
            loss = self.model(x).sum()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "amp": amp.state_dict()}, path)
""",
        after="""\
# file: main.py
from fitter import *
import torch


def main(model, loader, fp16):
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    fitter = Fitter(model, loader, scaler=scaler)
    fitter.save("untrained.pth")
    fitter.fit()
# file: fitter.py
import torch


class Fitter:
    def __init__(self, model, loader, scaler):
        self.scaler = scaler
        self.model = model
        self.loader = loader
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)

    def fit(self):
        for epoch in range(2):
            self.train_one_epoch()
            self.save("ckpt.pth")

    def train_one_epoch(self):
        for x in self.loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = self.model(x).sum()
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "amp": self.scaler.state_dict()}, path)
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311', 'APX401'),
    ),
    Example(
        "optimizer-wrapper-stepped-for-the-scaled-optimizer",
        before="""\
# file: optim.py
class WarmupOptimizer:
    \"\"\"Holds a torch optimizer; step(where=...) sets its lr for that point of training first.\"\"\"

    def __init__(self, optimizer, base_lr, warmup=0.1):
        self.optimizer = optimizer
        self.base_lr = base_lr
        self.warmup = warmup

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def step(self, *, closure=None, where):
        for group in self.optimizer.param_groups:
            group["lr"] = self.base_lr * min(1.0, where / self.warmup)
        if closure is None:
            self.optimizer.step()
        else:
            self.optimizer.step(closure)

    def zero_grad(self):
        self.optimizer.zero_grad()
# file: task.py
import torch
from apex import amp
from torch.nn.utils import clip_grad_norm_

from optim import WarmupOptimizer


class Task:
    def __init__(self, model, use_native=False):
        self.model = model
        self.opt = None
        self.use_native = use_native
        self.native_scaler = torch.amp.GradScaler("cuda") if use_native else None

    def set_optimizer(self, optimizer: WarmupOptimizer):
        self.opt = optimizer

    def prepare(self, amp_args=None):
        if amp_args is not None and not self.use_native:
            self.model, self.opt.optimizer = amp.initialize(self.model, self.opt.optimizer, **amp_args)

    def train_step(self, x, where):
        with torch.autocast("cuda", enabled=self.use_native):
            loss = self.model(x).mean()
        self.opt.zero_grad()
        if self.use_native:
            self.native_scaler.scale(loss).backward()
            self.native_scaler.step(self.opt, where=where)
            self.native_scaler.update()
        else:
            with amp.scale_loss(loss, self.opt.optimizer) as scaled_loss:
                scaled_loss.backward()
            clip_grad_norm_(amp.master_params(self.opt.optimizer), 1.0)
            self.opt.step(where=where)
""",
        after="""\
# file: optim.py
class WarmupOptimizer:
    \"\"\"Holds a torch optimizer; step(where=...) sets its lr for that point of training first.\"\"\"

    def __init__(self, optimizer, base_lr, warmup=0.1):
        self.optimizer = optimizer
        self.base_lr = base_lr
        self.warmup = warmup

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def step(self, *, closure=None, where):
        for group in self.optimizer.param_groups:
            group["lr"] = self.base_lr * min(1.0, where / self.warmup)
        if closure is None:
            self.optimizer.step()
        else:
            self.optimizer.step(closure)

    def zero_grad(self):
        self.optimizer.zero_grad()
# file: task.py
import torch
from torch.nn.utils import clip_grad_norm_

from optim import WarmupOptimizer


class Task:
    def __init__(self, model, use_native=False):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.opt = None
        self.use_native = use_native
        self.native_scaler = torch.amp.GradScaler("cuda") if use_native else None

    def set_optimizer(self, optimizer: WarmupOptimizer):
        self.opt = optimizer

    def prepare(self, amp_args=None):
        amp_options = dict(amp_args) if (amp_args is not None and not self.use_native) else {"enabled": False}
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        self.scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
        self.scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)

    def train_step(self, x, where):
        with torch.autocast("cuda", enabled=self.use_native or self.scaler.is_enabled()):
            loss = self.model(x).mean()
        self.opt.zero_grad()
        if self.use_native:
            self.native_scaler.scale(loss).backward()
            self.native_scaler.step(self.opt, where=where)
            self.native_scaler.update()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.opt)
            clip_grad_norm_((p for group in self.opt.optimizer.param_groups for p in group["params"]), 1.0)
            self.scaler.step(self.opt, where=where)
            self.scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX228", "APX261", "APX301", "APX321"),
    ),
    Example(
        # apex.amp imported inside __init__ is bound there only: the class's other methods do
        # not see it, so their amp.scale_loss is no site and no scaler is handed to the class
        # (it would not take one); the launcher keeps apex.amp semantics, and its reason names
        # that scale_loss (before: 'the losses are scaled elsewhere'; Bert-Multi-Label's shape)
        "amp-imported-in-another-method",
        before=AMP_IMPORTED_IN_ANOTHER_METHOD.format(
            launcher_import="        from apex import amp\n",
            trainer_import="        if fp16:\n"
            "            from apex import amp  # bound in __init__ only: fit() below cannot see it\n",
            fit_todo="",
            guard="",
        ),
        after=AMP_IMPORTED_IN_ANOTHER_METHOD.format(
            launcher_import="        from apexcompat import amp\n"
            "        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in trainer.py\n"
            "        #   (Trainer.fit()), whose amp.scale_loss reads a name amp that is not bound there, so\n"
            "        #   it raises NameError, in the original too (APX234): fix that first; this file keeps\n"
            "        #   apex.amp semantics through apexcompat.amp, migrate it by hand\n",
            trainer_import="",
            fit_todo="                # TODO(apexcompat): amp.scale_loss: the name amp is bound only inside __init__() "
            "(its\n"
            "                #   apex.amp import), so this line raises NameError when it runs, in the original too;\n"
            "                #   import apex.amp where it is used (or keep it on self) before migrating\n",
            guard="",
        ),
        codes=("APX101", "APX102", "APX220", "APX234"),
    ),
    Example(
        # the same trainer run by a script (a __main__ guard, imported by no file): what the
        # script runs, followed through the repository, reaches no amp.scale_loss but that one,
        # which raises NameError before it scales, in the original too. apex never scaled a loss
        # of this initialize, so it becomes autocast around the model's forward (no GradScaler)
        # and the migrated run fails at the same line under the same flags
        "initialize-whose-only-scale-loss-reads-an-unbound-amp-gets-autocast",
        before=AMP_IMPORTED_IN_ANOTHER_METHOD.format(
            launcher_import="        from apex import amp\n",
            trainer_import="        if fp16:\n"
            "            from apex import amp  # bound in __init__ only: fit() below cannot see it\n",
            fit_todo="",
            guard=SCRIPT_GUARD,
        ),
        after=AMP_IMPORTED_IN_ANOTHER_METHOD.format(
            launcher_import="",
            trainer_import="",
            fit_todo="                # TODO(apexcompat): amp.scale_loss: the name amp is bound only inside __init__() "
            "(its\n"
            "                #   apex.amp import), so this line raises NameError when it runs, in the original too;\n"
            "                #   import apex.amp where it is used (or keep it on self) before migrating\n",
            guard=SCRIPT_GUARD,
        ).replace(
            '        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")\n',
            '        model.forward = torch.autocast("cuda", dtype=torch.float16)(model.forward)\n',
        ),
        codes=("APX101", "APX229", "APX234"),
    ),
    Example(
        # the launcher script holds both the initialize (in main()) and the amp.scale_loss that
        # cannot see its amp (in train()); other scripts import it, but none can run main(): one
        # takes a class, one star-imports it and defines a main of its own after that import.
        # The launcher star-imports a module of the repository, whose definitions all count as
        # reached. No loss is scaled: autocast around the forward, and the same NameError
        "launcher-imported-by-scripts-that-cannot-run-its-initialize-gets-autocast",
        before=tagger_launcher("Tagger"),
        after=tagger_launcher(
            "Tagger",
            '        model.forward = torch.autocast("cuda", dtype=torch.float16)(model.forward)\n',
            UNBOUND_TRAIN_TODO,
        ),
        codes=("APX101", "APX229", "APX234"),
    ),
    Example(
        # the same, but one script imports main() itself: it may run the initialize and go on
        # with what it does, which the proof does not follow; the reason stays the NameError's
        "fallback-launcher-whose-initializing-main-another-script-imports",
        before=tagger_launcher("Tagger, main as train_tagger"),
        after=tagger_launcher(
            "Tagger, main as train_tagger",
            TAGGER_INITIALIZE.replace("from apex import", "from apexcompat import").replace(
                "        model, optimizer",
                "        # TODO(apexcompat): the amp.scale_loss of this file (in train()) reads a name amp that\n"
                "        #   is not bound there, so it raises NameError, in the original too (APX234): fix that\n"
                "        #   first; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n"
                "        model, optimizer",
            ),
            UNBOUND_TRAIN_TODO,
        ),
        codes=("APX102", "APX220", "APX234"),
    ),
    Example(
        # an evaluation script's initialize reaches no amp.scale_loss: what it calls (run_test
        # of the training script, not train) is followed through the repository, so apex
        # never scaled a loss of it and it gets autocast without a GradScaler, while the
        # training script beside it gets its own; a second run agrees (it used to see no
        # scale_loss left anywhere and migrate the file the first run had kept)
        "evaluation-initialize-beside-a-training-script",
        before=EVALUATION_BESIDE_TRAINING.format(
            train_import="from apex import amp\n", train_body=EVAL_TRAIN_APEX, test_import="from apex import amp\n",
            borrowed="run_test", test_body=EVAL_INIT_APEX, called="run_test", args="batches",
        ),
        after=EVALUATION_BESIDE_TRAINING.format(
            train_import="", train_body=EVAL_TRAIN_NATIVE, test_import="", borrowed="run_test",
            test_body="    model.forward = torch.autocast(\"cuda\", dtype=torch.float16, "
            "enabled=(\"O1\" if fp16 else \"O0\") != \"O0\")(model.forward)\n",
            called="run_test", args="batches",
        ),
        codes=("APX101", "APX201", "APX209", "APX229", "APX301", "APX311"),
    ),
    Example(
        # ... but one that calls the training function reaches its amp.scale_loss: it keeps
        # apex.amp, and so does the second run
        "evaluation-initialize-that-calls-the-training-function",
        before=EVALUATION_BESIDE_TRAINING.format(
            train_import="from apex import amp\n", train_body=EVAL_TRAIN_APEX, test_import="from apex import amp\n",
            borrowed="train", test_body=EVAL_INIT_APEX, called="train", args="optimizer, batches",
        ),
        after=EVALUATION_BESIDE_TRAINING.format(
            train_import="", train_body=EVAL_TRAIN_NATIVE, test_import="from apexcompat import amp\n",
            borrowed="train",
            test_body="    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled elsewhere;\n"
            "    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n" + EVAL_INIT_APEX,
            called="train", args="optimizer, batches",
        ),
        codes=("APX101", "APX102", "APX201", "APX209", "APX220", "APX301", "APX311"),
    ),
    Example(
        # no file names scale_loss: apex never scaled a loss of this initialize (O1 casts only),
        # so no GradScaler is made; the encoder's forward runs under autocast wherever it is called
        "initialize-without-any-scale-loss",
        before=INITIALIZE_WITHOUT_SCALE_LOSS.format(
            setup_import="from apex import amp\n",
            setup_body="        encoder, optimizer = amp.initialize(encoder, optimizer, opt_level=\"O1\")\n",
        ),
        after=INITIALIZE_WITHOUT_SCALE_LOSS.format(
            setup_import="",
            setup_body="        encoder.forward = torch.autocast(torch.device(args.device).type, dtype=torch.float16)"
            "(encoder.forward)\n",
        ),
        codes=("APX101", "APX229"),
    ),
    Example(
        # E2E-ASR: apex.amp kept on self in the method that initializes, read nowhere else:
        # the attribute is a local name for it; no file scales a loss, so the forward is cast
        "initialize-through-self-attribute-of-its-own-method-without-any-scale-loss",
        before="""\
# file: solver.py
import torch


class Solver:
    def __init__(self, model, optimizer, use_amp):
        self.model, self.optimizer, self.use_amp = model, optimizer, use_amp
        for key, value in {"grad_clip": 5.0}.items():
            setattr(self, key, value)

    def enable_apex(self):
        if self.use_amp:
            from apex import amp
            self.amp_lib = amp
            self.model, self.optimizer = self.amp_lib.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()

# file: train.py
import torch

from solver import Solver


if __name__ == "__main__":
    net = torch.nn.Linear(4, 1).cuda()
    solver = Solver(net, torch.optim.SGD(net.parameters(), lr=0.1), use_amp=True)
    solver.enable_apex()
    solver.step(torch.randn(8, 4).cuda(), torch.randn(8, 1).cuda())
""",
        after="""\
# file: solver.py
import torch


class Solver:
    def __init__(self, model, optimizer, use_amp):
        self.model, self.optimizer, self.use_amp = model, optimizer, use_amp
        for key, value in {"grad_clip": 5.0}.items():
            setattr(self, key, value)

    def enable_apex(self):
        if self.use_amp:
            self.model.forward = torch.autocast("cuda", dtype=torch.float16)(self.model.forward)

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.grad_clip)
        self.optimizer.step()

# file: train.py
import torch

from solver import Solver


if __name__ == "__main__":
    net = torch.nn.Linear(4, 1).cuda()
    solver = Solver(net, torch.optim.SGD(net.parameters(), lr=0.1), use_amp=True)
    solver.enable_apex()
    solver.step(torch.randn(8, 4).cuda(), torch.randn(8, 1).cuda())
""",
        codes=("APX101", "APX229"),
    ),
    Example(
        # ... but read in another method, it may be read before the store: the shim, saying so
        "amp-kept-on-self-outside-init-and-read-in-another-method-keeps-the-shim",
        before="""\
# file: solver.py
from apex import amp


class Solver:
    def enable_apex(self):
        self.amp_lib = amp
        self.model, self.optimizer = self.amp_lib.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, loss):
        with self.amp_lib.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
""",
        after="""\
# file: solver.py
from apexcompat import amp


class Solver:
    def enable_apex(self):
        # TODO(apexcompat): apex.amp is stored as self.amp_lib here; its uses through that
        #   attribute cannot be followed (self.amp_lib is read outside enable_apex(), the method
        #   that stores apex.amp on self, which is not __init__: it may be read before the
        #   store); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        self.amp_lib = amp
        self.model, self.optimizer = self.amp_lib.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, loss):
        with self.amp_lib.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but a file that keeps apex's loss-scaler state needs a scaler that nothing feeds:
        # the reason says exactly that instead of "the losses are scaled elsewhere"
        "initialize-without-any-scale-loss-but-its-state-saved",
        before=INITIALIZE_WITHOUT_SCALE_LOSS.format(
            setup_import="from apex import amp\n",
            setup_body="        encoder, optimizer = amp.initialize(encoder, optimizer, opt_level=\"O1\")\n"
            "        torch.save(amp.state_dict(), \"amp.pt\")\n",
        ),
        after=INITIALIZE_WITHOUT_SCALE_LOSS.format(
            setup_import="from apexcompat import amp\n",
            setup_body="        # TODO(apexcompat): no file of the repository calls amp.scale_loss, so apex trained "
            "this\n"
            "        #   model without loss scaling; but this file still uses apex's loss scaler\n"
            "        #   (state_dict); this file keeps apex.amp semantics through apexcompat.amp, migrate it\n"
            "        #   by hand\n"
            "        encoder, optimizer = amp.initialize(encoder, optimizer, opt_level=\"O1\")\n"
            "        torch.save(amp.state_dict(), \"amp.pt\")\n",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex.amp kept on the options object the launcher hands its step function: the proof
        # covers every read of opts.amp (here, a same-file function only the launcher calls,
        # handed opts after the store) and every place opts goes to after it (report.py reads
        # no .amp), so the GradScaler goes on opts where it is created, on every path
        "amp-kept-on-the-options-object",
        before=AMP_ON_OPTIONS.format(
            report_import="", forward=APEX_FORWARD, backward=APEX_BACKWARD, step=APEX_STEP,
            setup=APEX_SETUP.format(init_todo="", todo=""), after_loop="", report_torch="", report_extra="",
        ),
        after=AMP_ON_OPTIONS.format(
            report_import="",
            forward="    with torch.autocast(\"cuda\", dtype=torch.float16, enabled=opts.scaler.is_enabled()):\n"
            "        loss = torch.nn.functional.cross_entropy(net(inputs), targets)\n",
            backward="        opts.scaler.scale(loss).backward()\n",
            step="    opts.scaler.step(opt)\n    opts.scaler.update()\n",
            setup="    use_amp = bool(opts.fp16 and opts.fp16_opt_level != \"O0\")\n"
            "    scaler = torch.amp.GradScaler(\"cuda\", enabled=use_amp)\n"
            "    opts.scaler = scaler\n",
            after_loop="", report_torch="", report_extra="",
        ).replace(
            "    if opts.fp16:\n        opts.scaler.scale(loss).backward()\n    else:\n        loss.backward()\n",
            "    opts.scaler.scale(loss).backward()\n",
        ),
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX237", "APX301", "APX311", "APX316"),
    ),
    Example(
        # ... but handed to a function of another file that reads .amp (save_state saves
        # opts.amp's state): that read is not covered, so the launcher keeps apex.amp, with the
        # reason
        "amp-kept-on-the-options-object-read-elsewhere",
        before=AMP_ON_OPTIONS.format(
            report_import=", save_state", forward=APEX_FORWARD, backward=APEX_BACKWARD, step=APEX_STEP,
            setup=APEX_SETUP.format(init_todo="", todo=""), after_loop="    save_state(opts, net)\n",
            report_torch="import torch\n", report_extra=SAVE_STATE,
        ),
        after=AMP_ON_OPTIONS.format(
            report_import=", save_state", forward=APEX_FORWARD, backward=APEX_BACKWARD, step=APEX_STEP,
            setup=APEX_SETUP.format(init_todo=_init_todo_read_in("opts.amp", "report.py"), todo=OPTIONS_STORE_TODO).replace(
                "from apex import", "from apexcompat import"
            ),
            after_loop="    save_state(opts, net)\n", report_torch="import torch\n", report_extra=SAVE_STATE,
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the same with the scaling in a method: the launcher hands the options to fit() of a
        # trainer object it picks from a table of classes; every call in the repository of a
        # method named fit() that fills the options' slot is the launcher's, after the store,
        # handing opts (net.train() fills none; stats.fit is a module's): fit() reads the
        # GradScaler from opts.scaler
        "amp-kept-on-the-options-object-read-in-a-method",
        before=AMP_ON_OPTIONS_METHOD.format(
            forward=METHOD_FORWARD, backward=METHOD_BACKWARD, step=METHOD_STEP,
            setup=APEX_SETUP.format(init_todo="", todo=""), tune=METHOD_MODULE_MEMBER,
        ),
        after=AMP_ON_OPTIONS_METHOD.format(
            forward="            with torch.autocast(\"cuda\", dtype=torch.float16, enabled=opts.scaler.is_enabled()):\n"
            "                loss = self.compute(net, batch)\n",
            backward="                opts.scaler.scale(loss).backward()\n",
            step="                opts.scaler.step(opt)\n                opts.scaler.update()\n",
            setup="    use_amp = bool(opts.fp16 and opts.fp16_opt_level != \"O0\")\n"
            "    scaler = torch.amp.GradScaler(\"cuda\", enabled=use_amp)\n"
            "    opts.scaler = scaler\n",
            tune=METHOD_MODULE_MEMBER,
        ).replace(
            "            if opts.fp16:\n                opts.scaler.scale(loss).backward()\n"
            "            else:\n                loss.backward()\n",
            "            opts.scaler.scale(loss).backward()\n",
        ),
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX237", "APX301", "APX311", "APX314", "APX316"),
    ),
    # ... but another file calls a method named fit() with something in that slot (its
    # receiver is not followed: it may be a trainer of this file, handed options that never
    # hold the GradScaler): the launcher keeps apex.amp, with the reason
    _method_route_refused("amp-kept-on-the-options-object-read-in-a-method-called-elsewhere", METHOD_TUNE,
                          "cannot be followed (a method named fit() is given a value for opts in main.py, which\n"
                          "this route does not follow); this file keeps apex.amp semantics through\n"
                          "apexcompat.amp, migrate it by hand"),
    # ... or another file has a class of its own with a method of that name reading .amp
    # (the launcher's receiver is not followed: it may be one of those)
    _method_route_refused("amp-kept-on-the-options-object-read-in-a-method-defined-elsewhere", METHOD_ELSEWHERE,
                          "cannot be followed (a class of main.py also defines fit() and reads .amp: the\n"
                          "launcher's call of fit() may reach it); this file keeps apex.amp semantics through\n"
                          "apexcompat.amp, migrate it by hand", reader="main.py"),
    # ... or another file reads an attribute of that name other than by a call (hands a
    # trainer's fit to a thread): its calls there are not known
    _method_route_refused("amp-kept-on-the-options-object-read-in-a-method-handed-on", METHOD_AS_VALUE,
                          "cannot be followed (an attribute named fit is read other than by a call in main.py,\n"
                          "so the calls of StepTrainer.fit() are not known); this file keeps apex.amp semantics\n"
                          "through apexcompat.amp, migrate it by hand"),
    Example(
        # a model factory of another file initializes both networks of a GAN (apex replaced its
        # loss scalers at the second initialize: one GradScaler serves both optimizers) and
        # returns them to one caller, which hands each loss to a backward helper: the factory
        # returns the GradScaler as one more value, the caller unpacks it, passes it to the
        # helper and puts its forward passes under autocast
        "model-factory-returns-the-scaler-to-its-caller",
        before=GAN_FACTORY.format(main=GAN_MAIN),
        after="""\
# file: nets/__init__.py
# file: nets/build.py
import torch


def build_gan(cfg):
    gen = torch.nn.Linear(16, 16).cuda()
    disc = torch.nn.Linear(16, 1).cuda()
    opt_g = torch.optim.Adam(gen.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(disc.parameters(), lr=2e-4)
    use_amp = bool(cfg.amp)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    return gen, disc, opt_g, opt_d, scaler
# file: train.py
import torch

from nets.build import build_gan


def backward_step(cfg, loss, optimizer, scaler):
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def main(cfg, batches):
    gen, disc, opt_g, opt_d, scaler = build_gan(cfg)
    for real in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            fake = gen(torch.randn_like(real))
            loss_d = disc(fake.detach()).mean() - disc(real).mean()
            loss_g = -disc(fake).mean()
        backward_step(cfg, loss_g, opt_g, scaler)
        backward_step(cfg, loss_d, opt_d, scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX244", "APX245", "APX301", "APX311", "APX316"),
    ),
    Example(
        # ... but the caller keeps what the factory returns in one name and unpacks it later:
        # the GradScaler cannot be returned with it, so the component keeps apex.amp, with the
        # reason at every site
        "model-factory-result-not-unpacked-keeps-the-shim",
        before=GAN_FACTORY.format(main=GAN_MAIN_KEPT),
        after=GAN_FACTORY.format(main=GAN_MAIN_KEPT)
        .replace("from apex import", "from apexcompat import")
        .replace(
            "        gen, opt_g = amp.initialize",
            GAN_FACTORY_TODO.format(indent="        ") + "        gen, opt_g = amp.initialize",
        )
        .replace(
            "        disc, opt_d = amp.initialize",
            GAN_FACTORY_TODO.format(indent="        ") + "        disc, opt_d = amp.initialize",
        )
        .replace(
            "        with amp.scale_loss",
            "        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this\n"
            "        #   amp.scale_loss (the GradScaler plan across files was dropped: in train.py, what\n"
            "        #   build_gan() returns is not unpacked into names by one statement of main() itself, so\n"
            "        #   the GradScaler it would return cannot be unpacked with it); this file keeps apex.amp\n"
            "        #   semantics through apexcompat.amp, migrate it by hand\n"
            "        with amp.scale_loss",
        ),
        codes=("APX102", "APX220"),
    ),
]

# --- apex.amp handed to a state consumer that is left as it is ---------------------------------

#: a run-state class whose method keeps amp's state, built by its constructor or by a class
#: method that returns cls(...)
RUN_STATE = """\
# file: progress.py
\"\"\"What a run saves besides the weights.\"\"\"
import torch


class RunState:
    def __init__(self, amp_state=None):
        self.amp_state = amp_state

    @classmethod
    def from_file(cls, path):
        return cls(amp_state=torch.load(path).get("amp"))

    def track_amp(self, amp):
        self.amp_state = amp.state_dict()

    def to_dict(self):
        return {"amp": self.amp_state}
"""
#: a resume helper that loads every keyword object from its own entry
KEYWORD_RESTART = """\
# file: resume.py
\"\"\"Resume whatever objects are given, each from its own entry{what}.\"\"\"
import torch


def restart(path, **objects):
    checkpoint = torch.load(path)
    for key, value in objects.items():
{body}"""
KEYWORD_LAUNCHER = """\
# file: train.py
import torch
{amp_import}
from resume import restart
{helpers}

def main(model, optimizer, loader, path):
{body}"""
KEYWORD_APEX_BODY = """\
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
{todo}    restart(path, model=model, optimizer=optimizer, amp=amp)
    for x in loader:
        loss = model(x).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    torch.save({{"model": model.state_dict(), "amp": amp.state_dict()}}, path)
"""
KEYWORD_LOADS = "        if key in checkpoint:\n            value.load_state_dict(checkpoint[key])\n"
KEYWORD_MOVES = "        value.load_state_dict(checkpoint[key])\n        value.cuda()\n"

REPOSITORY_EXAMPLES += [
    Example(
        # the launcher hands apex.amp to a method of a class of another file; every binding of
        # the receiver builds that class (its constructor, or a class method whose every return
        # is cls(...)), and the method only saves the state: it is given the GradScaler, whose
        # state_dict() is spelled the same (progress.py is left as it is)
        "amp-handed-to-a-state-method",
        before="""\
# file: train.py
import torch
from apex import amp

from progress import RunState


def main(model, optimizer, loader, resume=None):
    if resume:
        state = RunState.from_file(resume)
    else:
        state = RunState()
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    if state.amp_state is not None:
        amp.load_state_dict(state.amp_state)
    state.track_amp(amp)
    for x in loader:
        loss = model(x).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    torch.save(state.to_dict(), "last.pt")
"""
        + RUN_STATE,
        after="""\
# file: train.py
import torch

from progress import RunState


"""
        + HELPER
        + """

def main(model, optimizer, loader, resume=None):
    if resume:
        state = RunState.from_file(resume)
    else:
        state = RunState()
    scaler = torch.amp.GradScaler("cuda")
    if state.amp_state is not None:
        load_scaler_state(scaler, state.amp_state)
    state.track_amp(scaler)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save(state.to_dict(), "last.pt")
"""
        + RUN_STATE,
        codes=("APX101", "APX201", "APX209", "APX223", "APX301", "APX311", "APX402"),
    ),
    Example(
        # apex.amp handed by keyword to a helper that loads every keyword object through its
        # **kwargs loop (the model and optimizer too, so the helper cannot be rewritten): it is
        # given ScalerCheckpoint(scaler), whose load_state_dict reads an apex entry too
        "amp-handed-to-a-keyword-restorer",
        before=KEYWORD_LAUNCHER.format(
            amp_import="from apex import amp\n", helpers="", body=KEYWORD_APEX_BODY.format(todo="")
        )
        + KEYWORD_RESTART.format(what="", body=KEYWORD_LOADS),
        after=KEYWORD_LAUNCHER.format(
            amp_import="",
            helpers="\n\n" + HELPER + "\n\n" + HOLDER,
            body="""\
    scaler = torch.amp.GradScaler("cuda")
    restart(path, model=model, optimizer=optimizer, amp=ScalerCheckpoint(scaler))
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    torch.save({"model": model.state_dict(), "amp": scaler.state_dict()}, path)
""",
        )
        + KEYWORD_RESTART.format(what="", body=KEYWORD_LOADS),
        codes=("APX101", "APX201", "APX209", "APX242", "APX301", "APX311", "APX401"),
    ),
    Example(
        # ... but the loop also moves each object (value.cuda()): not proven to use apex.amp
        # only for its state, so the launcher keeps apex.amp, with the reason
        "amp-handed-to-a-keyword-restorer-that-does-more",
        before=KEYWORD_LAUNCHER.format(
            amp_import="from apex import amp\n", helpers="", body=KEYWORD_APEX_BODY.format(todo="")
        )
        + KEYWORD_RESTART.format(what=", and put them on the GPU", body=KEYWORD_MOVES),
        after=KEYWORD_LAUNCHER.format(
            amp_import="from apexcompat import amp\n",
            helpers="",
            body=KEYWORD_APEX_BODY.format(
                todo="    # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed;\n"
                "    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n"
            ),
        )
        + KEYWORD_RESTART.format(what=", and put them on the GPU", body=KEYWORD_MOVES),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the initialize in a base class's method under a run-once guard, the loss scaled in a
        # subclass's override in another file: the base keeps the GradScaler on self (made in
        # the guard's branch, a disabled one where __init__ sets the flag); the subclass uses
        # the inherited self.scaler, unscaling before its clipping; both files native together
        "base-class-initializes-subclass-in-another-file-scales",
        before=_heir_apex("apex", "self.optimizer"),
        after=HEIR_BASE.format(
            base_import="\n",
            heir_import="\n",
            disabled="        self.scaler = torch.amp.GradScaler(enabled=False)\n",
            init='            self.scaler = torch.amp.GradScaler("cuda")\n',
            base_step=HEIR_NATIVE_STEP.format(clip=""),
            heir_step=HEIR_NATIVE_STEP.format(clip="        self.scaler.unscale_(self.optimizer)\n" + HEIR_CLIP),
        ),
        codes=("APX101", "APX103", "APX201", "APX209", "APX238", "APX239", "APX301", "APX311", "APX316", "APX325"),
    ),
    Example(
        # ... but the subclass scales its loss for another optimizer than the one the base
        # initialized: no GradScaler of the base steps it, so the subclass keeps apex.amp, and
        # with it the base class (they share apex's state): both files on the shim, each with why
        "base-class-initializes-subclass-scales-another-optimizer",
        before=_heir_apex("apex", "self.head_optimizer"),
        after=_heir_apex(
            "apexcompat",
            "self.head_optimizer",
            base_todo="            # TODO(apexcompat): the GradScaler plan across files was dropped: in\n"
            + HEIR_REASON.format(close=""),
            heir_todo="            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach"
            " this\n            #   amp.scale_loss (the GradScaler plan across files was dropped: in\n"
            + HEIR_REASON.format(close=")"),
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex.amp kept on the options object by two launchers, the losses scaled in the step
        # function of one of them that the other imports: every file that names train_batch
        # stores apex.amp on what it hands it, so the files are migrated together, each
        # launcher putting the GradScaler on its options under one name (args.scaler), the
        # shared step reading it there (autocast, unscale_ before the clipping, step/update)
        "amp-kept-on-the-options-object-shared-across-launchers",
        before=SHARED_STEP.format(
            **SHARED_STEP_APEX,
            classify_setup=SHARED_STEP_SETUP.format(package="apex", todo_init="", todo_store=""),
            regress_setup=SHARED_STEP_SETUP.format(package="apex", todo_init="", todo_store=""), probe="",
        ),
        after=SHARED_STEP.format(
            forward="    with torch.autocast(torch.device(args.device).type, dtype=torch.float16, "
            "enabled=args.scaler.is_enabled()):\n"
            "        loss = torch.nn.functional.cross_entropy(model(inputs), labels)\n",
            backward="        args.scaler.scale(loss).backward()\n",
            step="    args.scaler.unscale_(optimizer)\n"
            "    clip_grad_norm_(model.parameters(), args.max_grad_norm)\n"
            "    args.scaler.step(optimizer)\n    args.scaler.update()\n",
            classify_setup=SHARED_STEP_NATIVE_SETUP, regress_setup=SHARED_STEP_NATIVE_SETUP, probe="",
        ).replace(
            "    if args.fp16:\n        args.scaler.scale(loss).backward()\n    else:\n        loss.backward()\n",
            "    args.scaler.scale(loss).backward()\n",
        ),
        codes=("APX101", "APX201", "APX202", "APX209", "APX237", "APX301", "APX311", "APX316", "APX325"),
    ),
    Example(
        # ... but a third file hands the shared step an options object on which it stores no
        # apex.amp (it never sets apex up): no GradScaler would be there, so both launchers
        # keep apex.amp, each with the reason
        "amp-kept-on-the-options-object-shared-with-a-file-without-it",
        before=SHARED_STEP.format(
            **SHARED_STEP_APEX,
            classify_setup=SHARED_STEP_SETUP.format(package="apex", todo_init="", todo_store=""),
            regress_setup=SHARED_STEP_SETUP.format(package="apex", todo_init="", todo_store=""),
            probe=SHARED_STEP_PROBE,
        ),
        after=SHARED_STEP.format(
            **SHARED_STEP_APEX,
            classify_setup=SHARED_STEP_SETUP.format(
                package="apexcompat", todo_init=SHARED_STEP_INIT_TODO,
                todo_store="        # TODO(apexcompat): apex.amp is stored as args.amp here; its uses through that "
                "attribute\n"
                "        #   cannot be followed (train_batch() is also called from probe.py, which stores no\n"
                "        #   apex.amp as .amp on what it hands it as args, so no GradScaler would be there); this\n"
                "        #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n",
            ),
            regress_setup=SHARED_STEP_SETUP.format(
                package="apexcompat", todo_init=_init_todo_read_in("args.amp", "classify.py"),
                todo_store="        # TODO(apexcompat): apex.amp is stored as args.amp here; its uses through that "
                "attribute\n"
                "        #   cannot be followed (train_batch() of classify.py reads .amp but cannot be given the\n"
                "        #   GradScaler: train_batch() is also called from probe.py, which stores no apex.amp as\n"
                "        #   .amp on what it hands it as args, so no GradScaler would be there); this file keeps\n"
                "        #   apex.amp semantics through apexcompat.amp, migrate it by hand\n",
            ),
            probe=SHARED_STEP_PROBE,
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # a setup helper of a package initializes and returns the model and optimizer to two
        # scripts, each unpacking its result in its own statement and scaling its own losses
        # (neither script runs the other): every call of the helper makes one GradScaler and
        # returns it as one more value; each script unpacks its own and trains with it
        "model-factory-returns-a-scaler-to-each-of-its-callers",
        before="""\
# file: tools/__init__.py
# file: tools/setup.py
import torch


def prepare(model, optimizer, fp16, level="O1"):
    model.cuda()
    if fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    return model, optimizer
# file: pretrain.py
import torch
from apex import amp

from tools.setup import prepare


def pretrain(args, batches):
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = prepare(model, optimizer, args.fp16)
    for x in batches:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
        else:
            loss.backward()
        optimizer.step()
# file: finetune.py
import torch
from apex import amp

from tools.setup import prepare


def finetune(args, batches, labels):
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, optimizer = prepare(model, optimizer, args.fp16, level=args.level)
    for x, y in zip(batches, labels):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
""",
        after="""\
# file: tools/__init__.py
# file: tools/setup.py
import torch


def prepare(model, optimizer, fp16, level="O1"):
    model.cuda()
    use_amp = bool(fp16 and level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    return model, optimizer, scaler
# file: pretrain.py
import torch

from tools.setup import prepare


def pretrain(args, batches):
    model = torch.nn.Linear(8, 8)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, scaler = prepare(model, optimizer, args.fp16)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: finetune.py
import torch

from tools.setup import prepare


def finetune(args, batches, labels):
    model = torch.nn.Linear(8, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model, optimizer, scaler = prepare(model, optimizer, args.fp16, level=args.level)
    for x, y in zip(batches, labels):
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX244", "APX255", "APX301", "APX311", "APX316", "APX321"),
    ),
    Example(
        # a package's placement helper initializes and returns the model and optimizer to the
        # __init__ of two trainer classes in two scripts, each keeping them on self for the
        # methods that scale, clip and save: the helper makes one GradScaler per call and returns
        # it last; each __init__ unpacks it straight onto self under the name the class's methods
        # then use (as a class whose own __init__ initializes keeps it), disabled when fp16 is off
        "model-factory-returns-a-scaler-to-the-init-of-each-trainer-class",
        before="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def place(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer
# file: retrieval.py
import torch

from kit.setup import place


class RetrievalTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        model = torch.nn.Linear(16, 16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model, optimizer = place(model, optimizer, cfg.device, cfg.fp16, cfg.level)
        self.encoder = model
        self.opt = optimizer

    def train_epoch(self, batches):
        for query, passage in batches:
            scores = self.encoder(query) @ self.encoder(passage).t()
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(query)))
            if self.cfg.fp16:
                from apex import amp

                with amp.scale_loss(loss, self.opt) as scaled:
                    scaled.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(self.opt), 2.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.encoder.parameters(), 2.0)
            self.opt.step()
            self.opt.zero_grad()

    def save(self, path):
        state = {"encoder": self.encoder.state_dict(), "optimizer": self.opt.state_dict()}
        if self.cfg.fp16:
            from apex import amp

            state["amp"] = amp.state_dict()
        torch.save(state, path)
# file: reader.py
import torch

from kit.setup import place


class ReaderTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        reader = torch.nn.Linear(16, 2)
        optimizer = torch.optim.SGD(reader.parameters(), lr=0.1)
        reader, optimizer = place(reader, optimizer, cfg.device, cfg.fp16)
        self.reader = reader
        self.opt = optimizer

    def train_epoch(self, batches):
        for x, span in batches:
            loss = torch.nn.functional.cross_entropy(self.reader(x), span)
            if self.cfg.fp16:
                from apex import amp

                with amp.scale_loss(loss, self.opt) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            self.opt.step()
            self.opt.zero_grad()
""",
        after="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def place(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    use_amp = bool(fp16 and level != "O0")
    scaler = torch.amp.GradScaler(torch.device(device).type, enabled=use_amp)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer, scaler
# file: retrieval.py
import torch

from kit.setup import place


class RetrievalTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        model = torch.nn.Linear(16, 16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model, optimizer, self.scaler = place(model, optimizer, cfg.device, cfg.fp16, cfg.level)
        self.encoder = model
        self.opt = optimizer

    def train_epoch(self, batches):
        for query, passage in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                scores = self.encoder(query) @ self.encoder(passage).t()
                loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(query)))
            if self.cfg.fp16:
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(self.opt)
                torch.nn.utils.clip_grad_norm_((p for group in self.opt.param_groups for p in group["params"]), 2.0)
            else:
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(self.opt)
                torch.nn.utils.clip_grad_norm_(self.encoder.parameters(), 2.0)
            self.scaler.step(self.opt)
            self.scaler.update()
            self.opt.zero_grad()

    def save(self, path):
        state = {"encoder": self.encoder.state_dict(), "optimizer": self.opt.state_dict()}
        if self.cfg.fp16:
            state["amp"] = self.scaler.state_dict()
        torch.save(state, path)
# file: reader.py
import torch

from kit.setup import place


class ReaderTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        reader = torch.nn.Linear(16, 2)
        optimizer = torch.optim.SGD(reader.parameters(), lr=0.1)
        reader, optimizer, self.scaler = place(reader, optimizer, cfg.device, cfg.fp16)
        self.reader = reader
        self.opt = optimizer

    def train_epoch(self, batches):
        for x, span in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = torch.nn.functional.cross_entropy(self.reader(x), span)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.opt)
            self.scaler.update()
            self.opt.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX244", "APX255", "APX301", "APX311", "APX316", "APX321",
               "APX401"),
    ),
    Example(
        # the same helper called from a trainer class's __init__, but a subclass in another file
        # defines an __init__ that does not call the base's: its instances would have no
        # GradScaler on self when the inherited methods scale, so the helper and the class keep
        # apex.amp (through the shim) together, with that reason
        "model-factory-kept-when-a-subclass-skips-the-receiving-init",
        before="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def place(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer
# file: retrieval.py
import torch

from kit.setup import place


class RetrievalTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        model = torch.nn.Linear(16, 16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model, optimizer = place(model, optimizer, cfg.device, cfg.fp16)
        self.encoder = model
        self.optimizer = optimizer

    def train_epoch(self, batches):
        for query, passage in batches:
            scores = self.encoder(query) @ self.encoder(passage).t()
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(query)))
            if self.cfg.fp16:
                from apex import amp

                with amp.scale_loss(loss, self.optimizer) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
# file: distill.py
import torch

from retrieval import RetrievalTrainer


class DistillTrainer(RetrievalTrainer):
    def __init__(self, cfg, student):
        self.cfg = cfg
        self.encoder = student
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.01)
""",
        after="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def place(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apexcompat import amp

        # TODO(apexcompat): DistillTrainer in distill.py derives from RetrievalTrainer but its
        #   __init__ does not call the base's, so its instances would lack the GradScaler
        #   RetrievalTrainer.__init__ would keep on self; this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer
# file: retrieval.py
import torch

from kit.setup import place


class RetrievalTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        model = torch.nn.Linear(16, 16)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
        model, optimizer = place(model, optimizer, cfg.device, cfg.fp16)
        self.encoder = model
        self.optimizer = optimizer

    def train_epoch(self, batches):
        for query, passage in batches:
            scores = self.encoder(query) @ self.encoder(passage).t()
            loss = torch.nn.functional.cross_entropy(scores, torch.arange(len(query)))
            if self.cfg.fp16:
                from apexcompat import amp

                # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
                #   amp.scale_loss (the model factory it calls keeps apex.amp: DistillTrainer in
                #   distill.py derives from RetrievalTrainer but its __init__ does not call the base's,
                #   so its instances would lack the GradScaler RetrievalTrainer.__init__ would keep on
                #   self); this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
                with amp.scale_loss(loss, self.optimizer) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
# file: distill.py
import torch

from retrieval import RetrievalTrainer


class DistillTrainer(RetrievalTrainer):
    def __init__(self, cfg, student):
        self.cfg = cfg
        self.encoder = student
        self.optimizer = torch.optim.SGD(student.parameters(), lr=0.01)
""",
        codes=("APX102", "APX220"),
    ),
]

#: apex.amp (or None) handed to the launcher's own epoch function, which another file imports
AMP_PARAM_IMPORTED = (
    "# file: train.py\n"
    + AMP_OR_NONE_GIVEN
    + """\
# file: finetune.py
import torch

from train import run_epoch


def finetune(model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    run_epoch(model, optimizer, loader, None, 1.0)
"""
)

REPOSITORY_EXAMPLES.append(
    Example(
        # the epoch function would take the GradScaler in apex.amp's slot (APX230), but
        # finetune.py calls it too and would still hand it None (or apex.amp): train.py keeps
        # apex.amp through the shim and says where the other use is
        "amp-or-none-argument-of-a-function-another-file-imports",
        before=AMP_PARAM_IMPORTED,
        after=AMP_PARAM_IMPORTED.replace("from apex import amp", "from apexcompat import amp").replace(
            "        amp_state = run_epoch(model, optimizer, loader, amp, args.clip)\n",
            "        # TODO(apexcompat): apex.amp (or None) is given to run_epoch() as its parameter amp, and\n"
            "        #   run_epoch is also used from finetune.py:8, which would still hand it apex.amp or\n"
            "        #   None, so that parameter cannot carry the GradScaler; this file keeps apex.amp\n"
            "        #   semantics through apexcompat.amp, migrate it by hand\n"
            "        amp_state = run_epoch(model, optimizer, loader, amp, args.clip)\n",
        ),
        codes=("APX102", "APX220"),
    )
)

#: a setup helper that initializes and returns model and optimizer, the trainer class that
#: scales (its own method runs the model and the loss), and an evaluation script without
#: apex.amp that builds its model through the same helper
FACTORY_WITH_EVAL_SCRIPT = """\
# file: kit/__init__.py
# file: kit/place.py
import torch


def place(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer
# file: train.py
import torch

from kit.place import place


class ReaderTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = cfg.device
        reader = torch.nn.Linear(16, 2)
        optimizer = torch.optim.AdamW(reader.parameters(), lr=1e-4)
        self.reader, self.optimizer = place(reader, optimizer, cfg.device, cfg.fp16)

    def _loss_of(self, batch):
        inputs, targets = batch
        logits = self.reader(inputs.to(self.device))
        return torch.nn.functional.cross_entropy(logits, targets.to(self.device))

    def train_epoch(self, batches):
        for batch in batches:
            loss = self._loss_of(batch)
            if self.cfg.fp16:
                from apex import amp

                with amp.scale_loss(loss, self.optimizer) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
# file: evaluate.py
import torch

from kit.place import place


def evaluate(cfg, batches):
    reader, _ = place(torch.nn.Linear(16, 2), None, cfg.device)
    baseline = place(torch.nn.Linear(16, 2), None, cfg.device)[0]
    reader.eval()
    with torch.no_grad():
        return sum((reader(x).argmax(-1) == y).sum().item() for x, y in batches), baseline
"""

REPOSITORY_EXAMPLES.append(
    Example(
        # the helper returns the GradScaler to the trainer's __init__ (kept on self; the method
        # that runs the model and the loss goes under autocast), and the evaluation script,
        # which has no apex.amp and is otherwise left alone, takes the extra value into `_`
        # (APX235); its call indexed [0] keeps working as it is
        "model-factory-also-called-from-a-file-without-apex",
        before=FACTORY_WITH_EVAL_SCRIPT,
        after="""\
# file: kit/__init__.py
# file: kit/place.py
import torch


def place(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    use_amp = bool(fp16 and level != "O0")
    scaler = torch.amp.GradScaler(torch.device(device).type, enabled=use_amp)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer, scaler
# file: train.py
import torch

from kit.place import place


class ReaderTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = cfg.device
        reader = torch.nn.Linear(16, 2)
        optimizer = torch.optim.AdamW(reader.parameters(), lr=1e-4)
        self.reader, self.optimizer, self.scaler = place(reader, optimizer, cfg.device, cfg.fp16)

    def _loss_of(self, batch):
        inputs, targets = batch
        logits = self.reader(inputs.to(self.device))
        return torch.nn.functional.cross_entropy(logits, targets.to(self.device))

    def train_epoch(self, batches):
        for batch in batches:
            with torch.autocast(torch.device(self.device).type, dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = self._loss_of(batch)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
# file: evaluate.py
import torch

from kit.place import place


def evaluate(cfg, batches):
    reader, _, _ = place(torch.nn.Linear(16, 2), None, cfg.device)
    baseline = place(torch.nn.Linear(16, 2), None, cfg.device)[0]
    reader.eval()
    with torch.no_grad():
        return sum((reader(x).argmax(-1) == y).sum().item() for x, y in batches), baseline
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX235", "APX244", "APX301", "APX311", "APX316"),
    )
)

#: a restorer class of another module that keeps the amp state, and a sibling class nothing builds
RESTORER_CLASSES = """\


class KeyedRestorer:
    \"\"\"Keeps every object handed in by keyword; nothing builds it yet.\"\"\"

    def __init__(self, cfg, **objects):
        self.path = os.path.join(cfg.output_dir, "restore.pt")
        self.objects = objects
        self.amp = cfg.fp16

    def save(self):
        state = {k: v.state_dict() for k, v in self.objects.items()}
        if self.amp:
            state["amp"] = amp.state_dict()
        torch.save(state, self.path)


class RunRestorer:
    def __init__(self, cfg, model, optimizer):
        self.path = os.path.join(cfg.output_dir, "restore.pt")
        self.model = model
        self.optimizer = optimizer
        self.amp = cfg.fp16
        self.every = cfg.save_steps
        self.step_done = 0
        if os.path.exists(self.path):
            self.restore()

    def step(self):
        self.step_done += 1
        if self.step_done % self.every == 0:
            self.save()

    def save(self):
        state = {"step": self.step_done, "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        if self.amp:
            state["amp"] = amp.state_dict()
        torch.save(state, self.path)

    def restore(self):
        state = torch.load(self.path)
        self.step_done = state["step"]
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.amp:
            amp.load_state_dict(state["amp"])
"""
#: what the launcher and the restorers become
KEEP_SCALER = "        self.scaler = scaler\n"
RESTORER_CLASSES_NATIVE = (
    RESTORER_CLASSES.replace("(self, cfg, **objects):\n", "(self, cfg, *, scaler, **objects):\n" + KEEP_SCALER)
    .replace("(self, cfg, model, optimizer):\n", "(self, cfg, model, optimizer, scaler):\n" + KEEP_SCALER)
    .replace("amp.state_dict()", "self.scaler.state_dict()")
    .replace('amp.load_state_dict(state["amp"])', 'load_scaler_state(self.scaler, state["amp"])')
)
RESTORER_LAUNCHER = """\
# file: train.py
import torch
from apex import amp

from utils.restore import RunRestorer as Restorer


def main(cfg):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model, optimizer = amp.initialize(model, optimizer, enabled=cfg.fp16, opt_level="O2")
    restorer = Restorer(cfg, model, optimizer)
    for step in range(restorer.step_done, cfg.steps):
        loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        restorer.step()
"""
RESTORER_LAUNCHER_NATIVE = """\
# file: train.py
import torch

from utils.restore import RunRestorer as Restorer


def main(cfg):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    use_amp = bool(cfg.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    restorer = Restorer(cfg, model, optimizer, scaler=scaler)
    for step in range(restorer.step_done, cfg.steps):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(torch.randn(32, 8, device="cuda")).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        restorer.step()
"""
def _imported_as_the_unbuilt_name(launcher: str) -> str:
    """``launcher`` importing RunRestorer under the name of the sibling class nothing builds."""
    return launcher.replace("RunRestorer as Restorer", "RunRestorer as KeyedRestorer").replace(
        "= Restorer(", "= KeyedRestorer("
    )


#: a restorer also built by a script without apex.amp (the before text; TODOs in the kept one)
SHARED_RESTORER = RESTORER_LAUNCHER.replace("utils.restore import RunRestorer as", "restore import") + """\
# file: evaluate.py
import torch

from restore import Restorer


def main(cfg):
    model = torch.nn.Linear(8, 1)
    restorer = Restorer(cfg, model, torch.optim.SGD(model.parameters(), lr=0.0))
    print(model(torch.randn(4, 8)), restorer.step_done)
# file: restore.py
import torch
from apex import amp


class Restorer:
    def __init__(self, cfg, model, optimizer):
        self.path = cfg.restore_path
        self.model = model
        self.optimizer = optimizer
        self.step_done = 0
        if cfg.resume:
            state = torch.load(self.path)
            self.step_done = state["step"]
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            amp.load_state_dict(state["amp"])

    def step(self):
        self.step_done += 1
        state = {"step": self.step_done, "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        torch.save(dict(state, amp=amp.state_dict()), self.path)
"""
SHARED_RESTORER_TODOS = (
    """\
    # TODO(apexcompat): the amp state is saved or loaded in restore.py (Restorer), which
    #   cannot get the GradScaler: Restorer is also called from evaluate.py (in main()),
    #   where no GradScaler exists; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
""",
    """\
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (Restorer is also called from evaluate.py (in main()), where no GradScaler exists):
            #   pass that scaler here and call `scaler.load_state_dict(state["amp"])` instead (a
            #   checkpoint apex wrote holds {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put
            #   scale=s, _growth_tracker=n into scaler.state_dict() and load that). apexcompat.amp's
            #   state is set up only by its own amp.initialize, so this line fails once that file is
            #   migrated
""",
    """\
        # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
        #   which is created in another file and cannot reach this line (Restorer is also called
        #   from evaluate.py (in main()), where no GradScaler exists): pass that scaler here and
        #   call `scaler.state_dict()` instead. apexcompat.amp's state is set up only by its own
        #   amp.initialize, so this line fails once that file is migrated
""",
)

#: a module whose update method is handed what its forward() returned (two repository examples)
FORWARD_FED_MODULE = """\
# file: gan.py
import torch
import torch.nn as nn
from apex import amp


class Pair(nn.Module):
    def __init__(self, fp16):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.gen_opt = torch.optim.SGD(self.gen.parameters(), lr=0.1)
        self.fp16 = fp16
        if fp16:
            self.gen, self.gen_opt = amp.initialize(self.gen, self.gen_opt, opt_level="O1")

    def forward(self, x):
        fake = self.gen(x)
        return fake, x

    def gen_update(self, fake, real):
        self.gen_opt.zero_grad()
        again = self.gen(fake)
        loss = (again - real).abs().mean()
        if self.fp16:
            with amp.scale_loss(loss, self.gen_opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.gen_opt.step()
"""
FORWARD_FED_LAUNCHER = """\
# file: train.py
from gan import Pair


def main(batches, fp16):
    pair = Pair(fp16).cuda()
    for x in batches:
        fake, real = pair.forward(x.cuda())
        pair.gen_update(fake.clone(), real)
"""
FORWARD_FED_OTHER_CALLER = """\


def finetune(pair, batches):
    for x in batches:
        pair.gen_update(pair.gen(x), x)
"""

REPOSITORY_EXAMPLES += [
    # a restorer class of another module, imported under another name, saves and loads the amp
    # state of the launcher's run: its ``__init__`` takes the GradScaler and the launcher passes
    # it; a sibling class no file of the repository builds takes it too (a required parameter:
    # a construction elsewhere fails at once, not at its first checkpoint)
    Example(
        "restorer-class-of-another-file-beside-one-nothing-builds",
        before=RESTORER_LAUNCHER + "# file: utils/restore.py\nimport os\n\nimport torch\nfrom apex import amp\n"
        + RESTORER_CLASSES,
        after=RESTORER_LAUNCHER_NATIVE + "# file: utils/restore.py\nimport os\n\nimport torch\n\n\n" + HELPER
        + RESTORER_CLASSES_NATIVE,
        codes=("APX101", "APX201", "APX202", "APX209", "APX213", "APX214", "APX301", "APX311", "APX401", "APX402"),
    ),
    # ... where the launcher imports the built class under the name of the one nothing builds
    # (``RunRestorer as KeyedRestorer``): its calls of that name are RunRestorer's, so the
    # sibling is still unbuilt and takes the GradScaler too
    Example(
        "restorer-imported-under-the-name-of-its-unbuilt-sibling",
        before=_imported_as_the_unbuilt_name(RESTORER_LAUNCHER) + "# file: utils/restore.py\nimport os\n\nimport torch\nfrom apex import amp\n"
        + RESTORER_CLASSES,
        after=_imported_as_the_unbuilt_name(RESTORER_LAUNCHER_NATIVE) + "# file: utils/restore.py\nimport os\n\nimport torch\n\n\n" + HELPER
        + RESTORER_CLASSES_NATIVE,
        codes=("APX101", "APX201", "APX202", "APX209", "APX213", "APX214", "APX301", "APX311", "APX401", "APX402"),
    ),
    # the restorer is also built by a script without apex.amp, where no GradScaler exists: it
    # keeps apex.amp, and so does the launcher whose amp state it keeps (one amp instance is
    # migrated in every file or in none)
    Example(
        "fallback-restorer-also-built-where-no-scaler-exists",
        before=SHARED_RESTORER,
        after=SHARED_RESTORER.replace("from apex import amp", "from apexcompat import amp")
        .replace("    model, optimizer = amp.init", SHARED_RESTORER_TODOS[0] + "    model, optimizer = amp.init")
        .replace('            amp.load_state_dict(', SHARED_RESTORER_TODOS[1] + '            amp.load_state_dict(')
        .replace("        torch.save(dict(state,", SHARED_RESTORER_TODOS[2] + "        torch.save(dict(state,"),
        codes=("APX102", "APX220", "APX403"),
    ),
    # a training function of a file no other file calls, nor names, nor reads as a module
    # attribute (``model.train()`` elsewhere is a method): it takes the GradScaler as a
    # required parameter, so a caller outside the repository that does not pass it fails at
    # once (it said "called from no file" and kept apex.amp); its forward passes run in a
    # loop over sampled architectures, a nested loop picking each layer's choice first:
    # autocast spans the loop whole, as apex's O1 casts did
    Example(
        "scaling-function-no-file-calls-takes-the-scaler-as-a-required-parameter",
        before="""\
# file: launch.py
import torch.nn.functional as F
from apex import amp

from steps import fit


def main(model, optimizer, loader, cfg):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    model.train()
    fit(model, optimizer, loader)
# file: steps.py
import torch.nn.functional as F
from apex import amp


def fit(model, optimizer, loader):
    for x, y in loader:
        loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
# file: search.py
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, cfg):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        losses = []
        for _ in range(cfg.samples):
            for layer in model.layers:
                layer.pick(cfg.choices)
            losses.append(F.cross_entropy(model(x), y))
        loss = torch.stack(losses).sum()
        if cfg.use_amp:
            from apex import amp
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
# file: launch.py
import torch.nn.functional as F

from steps import fit
import torch


def main(model, optimizer, loader, cfg):
    scaler = torch.amp.GradScaler("cuda")
    model.train()
    fit(model, optimizer, loader, scaler=scaler)
# file: steps.py
import torch.nn.functional as F
import torch


def fit(model, optimizer, loader, scaler):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = F.cross_entropy(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: search.py
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, cfg, scaler):
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        losses = []
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            for _ in range(cfg.samples):
                for layer in model.layers:
                    layer.pick(cfg.choices)
                losses.append(F.cross_entropy(model(x), y))
            loss = torch.stack(losses).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX214", "APX301", "APX311", "APX316"),
    ),
    # checkpoint functions no file calls, names or reads through their module (a vendored
    # copy of a model's training utilities, modelscope's s2net): they take the GradScaler as a
    # required parameter like a training function nobody calls, so a caller outside the
    # repository that does not pass it fails at once (they said "called from no file" and
    # kept apex.amp), and an apex checkpoint still loads
    Example(
        "checkpoint-functions-no-file-calls-take-the-scaler-as-a-required-parameter",
        before="""\
# file: nets/util_helper.py
import os

import torch

try:
    from apex import amp
except ImportError:
    amp = None


def load_checkpoint_file(cfg, model, optimizer):
    checkpoint = torch.load(cfg.RESUME, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if "amp" in checkpoint and cfg.AMP_OPT_LEVEL != "O0":
        amp.load_state_dict(checkpoint["amp"])


def save_checkpoint(cfg, epoch, model, optimizer, out_dir):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    if cfg.AMP_OPT_LEVEL != "O0":
        state["amp"] = amp.state_dict()
    torch.save(state, os.path.join(out_dir, f"ckpt_{epoch}.pth"))


def compute_map(x):
    return x.flatten(1)
# file: nets/model.py
import torch.nn as nn

from .util_helper import compute_map


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
""",
        after="""\
# file: nets/util_helper.py
import os

import torch


""" + HELPER + """

def load_checkpoint_file(cfg, model, optimizer, scaler):
    checkpoint = torch.load(cfg.RESUME, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if "amp" in checkpoint and cfg.AMP_OPT_LEVEL != "O0":
        load_scaler_state(scaler, checkpoint["amp"])


def save_checkpoint(cfg, epoch, model, optimizer, out_dir, scaler):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch}
    if cfg.AMP_OPT_LEVEL != "O0":
        state["amp"] = scaler.state_dict()
    torch.save(state, os.path.join(out_dir, f"ckpt_{epoch}.pth"))


def compute_map(x):
    return x.flatten(1)
# file: nets/model.py
import torch.nn as nn

from .util_helper import compute_map


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
""",
        codes=("APX101", "APX103", "APX213", "APX401", "APX402"),
    ),
    # an update method of a module is handed what the module's own forward() returned, by
    # every call of it in the repository (a training script without apex: ``fake, real =
    # pair.forward(x)``, then ``pair.gen_update(fake.clone(), real)``): forward()'s body goes
    # under autocast too, switched like the GradScaler, as apex's O1 casts ran it (it kept
    # apex.amp: "gen_update() is handed fake, ..."), DG-Net's trainer
    Example(
        "update-method-handed-forward-outputs-by-every-call-gets-autocast-in-forward",
        before=FORWARD_FED_MODULE + FORWARD_FED_LAUNCHER,
        after="""\
# file: gan.py
import torch
import torch.nn as nn


class Pair(nn.Module):
    def __init__(self, fp16):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.gen_opt = torch.optim.SGD(self.gen.parameters(), lr=0.1)
        self.fp16 = fp16
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def forward(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            fake = self.gen(x)
            return fake, x

    def gen_update(self, fake, real):
        self.gen_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            again = self.gen(fake)
            loss = (again - real).abs().mean()
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.gen_opt)
        self.scaler.update()
# file: train.py
from gan import Pair


def main(batches, fp16):
    pair = Pair(fp16).cuda()
    for x in batches:
        fake, real = pair.forward(x.cuda())
        pair.gen_update(fake.clone(), real)
""",
        codes=("APX101", "APX201", "APX209", "APX209", "APX301", "APX311"),
    ),
    # one call hands it what another expression computed (``pair.gen(x)``): not the forward
    # pass of forward(), so nothing proves those outputs run under autocast; the shim stays
    Example(
        "fallback-update-method-also-handed-other-values",
        before=FORWARD_FED_MODULE + FORWARD_FED_LAUNCHER + FORWARD_FED_OTHER_CALLER,
        after="""\
# file: gan.py
import torch
import torch.nn as nn
from apexcompat import amp


class Pair(nn.Module):
    def __init__(self, fp16):
        super().__init__()
        self.gen = nn.Linear(4, 4)
        self.gen_opt = torch.optim.SGD(self.gen.parameters(), lr=0.1)
        self.fp16 = fp16
        if fp16:
            # TODO(apexcompat): as written, a native rewrite would train in float32: the forward
            #   pass and loss are not next to its amp.scale_loss in gen_update(): gen_update() is
            #   handed fake, which the class's own forward() computes with the models, called from
            #   elsewhere: wrap that forward pass in `with torch.autocast("cuda",
            #   dtype=torch.float16):` by hand; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            self.gen, self.gen_opt = amp.initialize(self.gen, self.gen_opt, opt_level="O1")

    def forward(self, x):
        fake = self.gen(x)
        return fake, x

    def gen_update(self, fake, real):
        self.gen_opt.zero_grad()
        again = self.gen(fake)
        loss = (again - real).abs().mean()
        if self.fp16:
            with amp.scale_loss(loss, self.gen_opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.gen_opt.step()
""" + FORWARD_FED_LAUNCHER + FORWARD_FED_OTHER_CALLER,
        codes=("APX102", "APX220"),
    ),
]

#: a module whose update method scales the loss its callers got from calling the module
#: (``loss = box(x, y); box.update_params(loss)``; two repository examples)
OWN_FORWARD_LOSS_MODULE = """\
# file: box.py
import torch
import torch.nn as nn

try:
    from apex import amp
except ImportError:
    amp = None


class Box(nn.Module):
    def __init__(self, net, use_apex, accelerator=None):
        super().__init__()
        self.net = net
        self.accelerator = accelerator
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.apex = False
        if accelerator is not None:
            self.net = self.net.to(self.accelerator.device)
        elif use_apex:
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")
            self.apex = True

    def forward(self, x, y):
        out = self.net(x)
        return nn.functional.mse_loss(out, y)

    def update_params(self, loss, accum=1):
        loss /= accum
        if self.apex:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
"""
OWN_FORWARD_LOSS_LAUNCHER = """\
# file: train.py
def run(box, batches):
    for x, y in batches:
        loss = box(x, y)
        box.update_params(loss)
"""

REPOSITORY_EXAMPLES += [
    # the loss scaled in update_params() is a parameter, and every call of it in the
    # repository (a training script without apex) hands it what calling the module returned:
    # its whole forward pass, loss included, ran in forward(), which goes under autocast
    # switched like the GradScaler (it kept apex.amp: "the forward pass and loss are not next
    # to its amp.scale_loss"); the accelerator's device, moved to only on the other branch
    # (its holder None on the apex path), names no device for the GradScaler.  torchdistill's
    # TrainingBox and DistillationBox
    Example(
        "update-method-handed-the-loss-of-its-own-module-call-gets-autocast-in-forward",
        before=OWN_FORWARD_LOSS_MODULE + OWN_FORWARD_LOSS_LAUNCHER,
        after="""\
# file: box.py
import torch
import torch.nn as nn


class Box(nn.Module):
    def __init__(self, net, use_apex, accelerator=None):
        super().__init__()
        self.net = net
        self.accelerator = accelerator
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.apex = False
        if accelerator is not None:
            self.net = self.net.to(self.accelerator.device)
        elif use_apex:
            self.apex = True
        use_amp = bool(accelerator is None and use_apex)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def forward(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            out = self.net(x)
            return nn.functional.mse_loss(out, y)

    def update_params(self, loss, accum=1):
        loss /= accum
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
""" + OWN_FORWARD_LOSS_LAUNCHER,
        codes=("APX101", "APX103", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    # another call hands it a loss computed outside forward() (``box.net(x)``): nothing proves
    # that forward pass runs under autocast; the shim stays, and the TODO says why
    Example(
        "fallback-update-method-handed-a-loss-not-from-its-module-call",
        before=OWN_FORWARD_LOSS_MODULE + OWN_FORWARD_LOSS_LAUNCHER + """\


def finetune(box, x, y):
    box.update_params((box.net(x) - y).pow(2).mean())
""",
        after="""\
# file: box.py
import torch
import torch.nn as nn

try:
    from apexcompat import amp
except ImportError:
    amp = None


class Box(nn.Module):
    def __init__(self, net, use_apex, accelerator=None):
        super().__init__()
        self.net = net
        self.accelerator = accelerator
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.apex = False
        if accelerator is not None:
            self.net = self.net.to(self.accelerator.device)
        elif use_apex:
            # TODO(apexcompat): as written, a native rewrite would train in float32: the forward
            #   pass and loss are not next to its amp.scale_loss in update_params() (update_params()
            #   is handed loss, and not every call of it in the repository provably hands it what
            #   the receiver's own forward() returned): wrap them in `with torch.autocast("cuda",
            #   dtype=torch.float16):` by hand; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")
            self.apex = True

    def forward(self, x, y):
        out = self.net(x)
        return nn.functional.mse_loss(out, y)

    def update_params(self, loss, accum=1):
        loss /= accum
        if self.apex:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
""" + OWN_FORWARD_LOSS_LAUNCHER + """\


def finetune(box, x, y):
    box.update_params((box.net(x) - y).pow(2).mean())
""",
        codes=("APX102", "APX220"),
    ),
]

#: an old-mmcv launcher that hands the runner the function running each batch's forward pass
#: (``Runner(model, batch_processor, optimizer, ...)``) and registers an optimizer hook it
#: builds itself; ``{signature}`` is the processor's parameter list
BATCH_PROCESSOR_LAUNCHER = """\
# file: train.py
import torch
from mmcv.runner import Runner

from step_hook import StepHook

try:
    import apex
except ImportError:
    print("apex is not installed")


def run_batch({signature}):
    '''The forward pass and loss of one batch, for the runner.'''
    losses = model(**data)
    total = sum(value.mean() for value in losses.values())
    return dict(loss=total, num_samples=len(data["img"]))


def train_distributed(model, loaders, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    if cfg.get("fp16", False):
        model, optimizer = apex.amp.initialize(model.cuda(), optimizer, opt_level="O1")
    runner = Runner(model, run_batch, optimizer, cfg.work_dir)
    runner.register_hook(StepHook(**cfg.step_config))
    runner.run(loaders, cfg.workflow, cfg.epochs)


def train_single(model, loaders, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    runner = Runner(model, run_batch, optimizer, cfg.work_dir)
    runner.register_training_hooks(cfg.lr_config, cfg.step_config)
    runner.run(loaders, cfg.workflow, cfg.epochs)
"""

#: its optimizer hook, which scales the loss the runner keeps from the processor
BATCH_PROCESSOR_HOOK = (
    """\
# file: step_hook.py
from mmcv.runner import OptimizerHook

try:
    import apex
except ImportError:
    print("apex is not installed")


class StepHook(OptimizerHook):
"""
    + ACCUMULATING_HOOK_METHODS
)

#: the launcher and hook above with a batch processor that takes **kwargs (no switch can be
#: added to it): the TODOs its fallback writes at the initialize and at the scale_loss
PROCESSOR_FALLBACK_BEFORE = (
    BATCH_PROCESSOR_LAUNCHER.format(signature="model, data, train_mode, **kwargs") + BATCH_PROCESSOR_HOOK
)
PROCESSOR_FALLBACK_SITES = (
    "        model, optimizer = apexcompat.amp.init",
    "            with apexcompat.amp.scale_loss(",
)
PROCESSOR_FALLBACK_TODOS = (
    (
        '        # TODO(apexcompat): the GradScaler plan across files was dropped: in step_hook.py, the\n'
        "        #   forward pass and loss are not next to this amp.scale_loss: the loss is the runner's\n"
        '        #   output, computed where the framework runs the forward pass, and no autocast can be\n'
        '        #   put there: the batch processor run_batch is not a top-level function of train.py\n'
        '        #   that takes a new keyword parameter (it is imported, decorated, or takes *args or\n'
        '        #   **kwargs); this file keeps apex.amp semantics through apexcompat.amp, migrate it by\n'
        '        #   hand\n'
    ),
    (
        '            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this\n'
        '            #   amp.scale_loss (the GradScaler plan across files was dropped: in step_hook.py, the\n'
        "            #   forward pass and loss are not next to this amp.scale_loss: the loss is the runner's\n"
        '            #   output, computed where the framework runs the forward pass, and no autocast can be\n'
        '            #   put there: the batch processor run_batch is not a top-level function of train.py\n'
        '            #   that takes a new keyword parameter (it is imported, decorated, or takes *args or\n'
        '            #   **kwargs)); this file keeps apex.amp semantics through apexcompat.amp, migrate it by\n'
        '            #   hand\n'
    ),
)


#: an mmcv runner restoring the amp state, a model class handed to a registry, a setup function
#: with amp.initialize called by a file without apex.amp (the shape of mmgeneration)
REGISTERED_MODEL_RUNNER = """\
# file: amp_setup.py
from apex import amp


def init_amp(models, optimizers, options):
    models, optimizers = amp.initialize(models, optimizers, **options)
    return models, optimizers
# file: models.py
import torch
from apex import amp
from mmcv.utils import Registry

MODELS = Registry("model")


@MODELS.register_module()
class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def train_step(self, batch, optimizer, use_amp=False):
        loss = self.net(batch).pow(2).mean()
        optimizer.zero_grad()
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        return dict(loss=loss.item())
# file: runner.py
import torch
from apex import amp
from mmcv.runner import IterBasedRunner


class AmpRunner(IterBasedRunner):
    def __init__(self, *args, use_amp=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.use_amp = use_amp

    def resume(self, path):
        state = torch.load(path)
        if self.use_amp:
            amp.load_state_dict(state["amp"])
# file: train.py
from mmcv.runner import build_runner

from amp_setup import init_amp


def train(model, optimizer, cfg):
    model, optimizer = init_amp(model, optimizer, cfg.amp)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer, use_amp=True))
    runner.run()
"""

#: the same runner saving amp's state too (a runner that only loads it reads a checkpoint that
#: code outside the repository wrote, which the reader route refuses)
REGISTERED_MODEL_SAVING = REGISTERED_MODEL_RUNNER.replace(
    """    def resume(self, path):""",
    """    def save(self, path):
        state = {"meta": self.meta}
        if self.use_amp:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def resume(self, path):""",
)

#: the model steps at a boundary of its own: the backwards of several calls may add up to one
#: step while its use_amp parameter differs between them, so no test proves which backward
#: the step follows (``_amp_shared_step``)
REGISTERED_MODEL_AT_BOUNDARY = REGISTERED_MODEL_RUNNER.replace(
    "        optimizer.step()\n        return dict(",
    "        if self.boundary:\n            optimizer.step()\n        return dict(",
)

REGISTERED_MODEL_RUNNER_TODOS = (
    """\
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in models.py
    #   (Regressor), which is handed to its decorator @MODELS.register_module(), which may
    #   keep it to build it by name, never called directly: the GradScaler cannot reach it;
    #   nor can a module-level GradScaler stand in: runner.py loads amp's state (line 14),
    #   but no file of the repository saves it: the checkpoint is written by code outside
    #   the repository (a base class or a framework of another package), which would still
    #   call apex.amp.state_dict() while a GradScaler holds the loss scale; this file keeps
    #   apex.amp semantics through apexcompat.amp, migrate it by hand
""",
    """\
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Regressor is handed to its decorator @MODELS.register_module(),
            #   which may keep it to build it by name, never called directly, so the GradScaler
            #   cannot follow its callers); this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
""",
    """\
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line
            #   (AmpRunner (runner.py) get the runner from mmcv, but amp.initialize is in init_amp()
            #   of amp_setup.py, which builds no runner: train.py, a file without apex.amp, calls
            #   init_amp() and builds the runner, so no GradScaler is there to put on it): pass that
            #   scaler here and call `scaler.load_state_dict(state["amp"])` instead (a checkpoint
            #   apex wrote holds {"loss_scaler0": {"loss_scale": s, "unskipped": n}}: put scale=s,
            #   _growth_tracker=n into scaler.state_dict() and load that). apexcompat.amp's state is
            #   set up only by its own amp.initialize, so this line fails once that file is migrated
""",
)

REPOSITORY_EXAMPLES += [
    # old mmcv (OpenSelfSup, sweep4): the runner runs each batch through the launcher's
    # batch processor and keeps what it returns as runner.outputs, whose loss the hook the
    # launcher builds scales. The hook takes the GradScaler through its constructor; the
    # processor gets a switch (off by default) that puts its body under autocast, and the
    # runner the hook serves is handed it switched by the GradScaler's state. The runner of
    # the other function (no amp) keeps the plain processor
    Example(
        "old-mmcv-runner-runs-a-batch-processor-put-under-autocast",
        before=BATCH_PROCESSOR_LAUNCHER.format(signature="model, data, train_mode") + BATCH_PROCESSOR_HOOK,
        after="""\
# file: train.py
import torch
from mmcv.runner import Runner

from step_hook import StepHook
import functools


def run_batch(model, data, train_mode, amp_enabled=False):
    '''The forward pass and loss of one batch, for the runner.'''
    with torch.autocast("cuda", dtype=torch.float16, enabled=amp_enabled):
        losses = model(**data)
        total = sum(value.mean() for value in losses.values())
        return dict(loss=total, num_samples=len(data["img"]))


def train_distributed(model, loaders, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    if cfg.get("fp16", False):
        model = model.cuda()
    use_amp = bool(cfg.get("fp16", False))
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    runner = Runner(model, functools.partial(run_batch, amp_enabled=scaler.is_enabled()), optimizer, cfg.work_dir)
    runner.register_hook(StepHook(**cfg.step_config, scaler=scaler))
    runner.run(loaders, cfg.workflow, cfg.epochs)


def train_single(model, loaders, cfg):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr)
    runner = Runner(model, run_batch, optimizer, cfg.work_dir)
    runner.register_training_hooks(cfg.lr_config, cfg.step_config)
    runner.run(loaders, cfg.workflow, cfg.epochs)
# file: step_hook.py
from mmcv.runner import OptimizerHook


class StepHook(OptimizerHook):
    def __init__(self, update_interval=1, grad_clip=None, use_fp16=False, *, scaler):
        self.scaler = scaler
        self.update_interval = update_interval
        self.grad_clip = grad_clip
        self.use_fp16 = use_fp16

    def after_train_iter(self, runner):
        runner.outputs["loss"] /= self.update_interval
        self.scaler.scale(runner.outputs["loss"]).backward()
        if self.every_n_iters(runner, self.update_interval):
            if self.grad_clip is not None:
                self.scaler.unscale_(runner.optimizer)
                self.clip_grads(runner.model.parameters())
            self.scaler.step(runner.optimizer)
            self.scaler.update()
            runner.optimizer.zero_grad()
""",
        codes=("APX101", "APX103", "APX201", "APX213", "APX214", "APX247", "APX301", "APX311", "APX314", "APX316",
               "APX325"),
    ),
    # the same with a processor that takes **kwargs (no switch can be added to it, provably):
    # the hook's loss is the runner's output, which nothing puts under autocast; both files
    # keep apex.amp through the shim with that reason
    Example(
        "fallback-batch-processor-that-takes-no-new-parameter",
        before=PROCESSOR_FALLBACK_BEFORE,
        after=PROCESSOR_FALLBACK_BEFORE.replace("import apex\n", "import apexcompat.amp\n")
        .replace("apex.amp.", "apexcompat.amp.")
        .replace(PROCESSOR_FALLBACK_SITES[0], PROCESSOR_FALLBACK_TODOS[0] + PROCESSOR_FALLBACK_SITES[0])
        .replace(PROCESSOR_FALLBACK_SITES[1], PROCESSOR_FALLBACK_TODOS[1] + PROCESSOR_FALLBACK_SITES[1]),
        codes=("APX101", "APX102", "APX220"),
    ),
    # the class that scales is only picked by the launcher, built once right after the
    # initialize and handed the optimizer it returns: the object built carries the GradScaler
    # (self.stepper.grad_scaler = scaler), and the class's method reads it there; both files
    # native together
    Example(
        "trainer-class-picked-by-the-launcher-carries-the-scaler",
        before=PICKED_STEPPERS + PICKED_RUNNER,
        after=(PICKED_STEPPERS + PICKED_RUNNER)
        .replace("import torch\nfrom apex import amp\n", "import torch\n")
        .replace("""\
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""", """\
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.grad_scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        self.grad_scaler.scale(loss).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
""")
        .replace("""\
        if half:
            net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.stepper = (HalfStepper if half else PlainStepper)(net, batches, optimizer)
""", """\
        use_amp = bool(half)
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.stepper = (HalfStepper if half else PlainStepper)(net, batches, optimizer)
        self.stepper.grad_scaler = scaler
"""),
        codes=("APX101", "APX101", "APX201", "APX209", "APX225", "APX301", "APX311"),
    ),
    # the same class with a subclass in another file: its objects may be built where no
    # GradScaler is put on them, so no GradScaler can go on the object; apex's loss scaler was
    # per process, so the runner's module keeps it in a module-level variable that every
    # stepper reads when it steps (APX252), imported in the method (runner.py imports steps.py)
    Example(
        "fallback-picked-trainer-class-with-a-subclass",
        before=PICKED_STEPPERS + PICKED_RUNNER + PICKED_HEIR,
        after='''\
# file: steps.py
import torch


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
        import runner
        x, y = next(self.batches)
        with torch.autocast(next((p.device.type for g in self.optimizer.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=runner.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.optimizer.zero_grad()
        runner.scaler.scale(loss).backward()
        runner.scaler.step(self.optimizer)
        runner.scaler.update()
        return loss.item()
# file: runner.py
import torch

from steps import HalfStepper, PlainStepper


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


class Runner:
    def __init__(self, net, batches, half=False):
        global scaler
        optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        use_amp = bool(half)
        scaler = torch.amp.GradScaler(next((p.device.type for p in (net[0] if isinstance(net, list) else net).parameters()), "cuda") if use_amp else "cuda", enabled=use_amp)
        self.stepper = (HalfStepper if half else PlainStepper)(net, batches, optimizer)

    def run(self, steps):
        return [self.stepper.step() for _ in range(steps)]
# file: logged.py
from steps import HalfStepper


class LoggedStepper(HalfStepper):
    def step(self):
        value = super().step()
        print(value)
        return value
''',
        codes=('APX101', 'APX201', 'APX209', 'APX252', 'APX301', 'APX311'),
    ),
    # apex.amp reaches a checkpointer of another file through a dict the launcher spreads into
    # it (extras.update(dict(amp=amp)), Keeper(net, **extras)), which keeps the dict and only
    # saves/loads the state of each value: the dict is given ScalerCheckpoint(scaler), which
    # also loads apex's checkpoint entry
    Example(
        "checkpointer-handed-amp-in-a-spread-dict-is-given-the-scaler-holder",
        before=SPREAD_KEEPER + SPREAD_LAUNCHER,
        after=SPREAD_KEEPER + "# file: train.py\nimport torch\n\nfrom keeper import Keeper\n\n\n" + HELPER + "\n\n" + HOLDER
        + """\


def train(net, batches, path, fp16=True):
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    extras = dict(optimizer=optimizer)
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    if fp16:
        extras.update(dict(amp=ScalerCheckpoint(scaler)))
    keeper = Keeper(net, **extras)
    keeper.load(path)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(net(x), y)
        optimizer.zero_grad()
        if fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
    keeper.save(path)
""",
        codes=("APX101", "APX201", "APX209", "APX242", "APX301", "APX311"),
    ),
    # the same checkpointer, which also hands each value it keeps to a function: the dict's
    # apex.amp is not proven to be used for its state only, so the launcher keeps the shim
    Example(
        "fallback-checkpointer-that-hands-its-values-on",
        before=SPREAD_KEEPER.replace("        torch.save(state, path)\n", "        torch.save(state, path)\n"
                                     "        for obj in self.extras.values():\n            print(obj)\n")
        + SPREAD_LAUNCHER,
        after=SPREAD_KEEPER.replace("        torch.save(state, path)\n", "        torch.save(state, path)\n"
                                    "        for obj in self.extras.values():\n            print(obj)\n")
        + SPREAD_LAUNCHER.replace("from apex import amp", "from apexcompat import amp").replace(
            "        extras.update(dict(amp=amp))\n",
            "        # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed;\n"
            "        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n"
            "        extras.update(dict(amp=amp))\n",
        ),
        codes=("APX102", "APX220"),
    ),
    # the GradScaler's route goes through a file that mentions apex only in a comment: no rule
    # edits a file without apex.amp, so run() would not take the scaler train.py passes it (a
    # TypeError at the first step); the component keeps the shim, each file told why
    Example(
        "fallback-scaler-route-through-a-file-without-apex-amp",
        before="""\
# file: train.py
import torch
from apex import amp
from loop import run

net = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
for _ in range(3):
    run(net, optimizer, torch.randn(2, 4))
# file: loop.py
# the training loop (its mixed precision came from NVIDIA apex)
from steps import step


def run(net, optimizer, batch):
    step(net, optimizer, batch)
# file: steps.py
from apex import amp


def step(net, optimizer, batch):
    loss = net(batch).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        after="""\
# file: train.py
import torch
from apexcompat import amp
from loop import run

net = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
# TODO(apexcompat): the GradScaler plan across files was dropped: in loop.py, the
#   GradScaler would be handed through run, but that file names no apex.amp and the tool
#   does not edit it: pass the scaler there by hand; this file keeps apex.amp semantics
#   through apexcompat.amp, migrate it by hand
net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
for _ in range(3):
    run(net, optimizer, torch.randn(2, 4))
# file: loop.py
# the training loop (its mixed precision came from NVIDIA apex)
from steps import step


def run(net, optimizer, batch):
    step(net, optimizer, batch)
# file: steps.py
from apexcompat import amp


def step(net, optimizer, batch):
    loss = net(batch).sum()
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss (the GradScaler plan across files was dropped: in loop.py, the
    #   GradScaler would be handed through run, but that file names no apex.amp and the tool
    #   does not edit it: pass the scaler there by hand); this file keeps apex.amp semantics
    #   through apexcompat.amp, migrate it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
    optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    # the model class of the next example, stepping at a boundary of its own (which no
    # module-level GradScaler can follow):
    # an mmcv runner subclass restores the amp state, a model class handed to a registry's
    # decorator scales the losses in the train_step the runner calls, and amp.initialize is in a
    # setup function that a file without apex.amp calls before building the runner: no route
    # reaches the model class, so the launcher names where the losses are scaled (before: why
    # no runner carries the GradScaler, which would not reach that class either), and the
    # runner's load says that its runner is built by the setup function's caller
    Example(
        "registered-model-stepped-by-a-framework-runner-keeps-the-shim",
        before=REGISTERED_MODEL_AT_BOUNDARY,
        after=REGISTERED_MODEL_AT_BOUNDARY.replace("from apex import", "from apexcompat import")
        .replace("    models, optimizers = amp.init", REGISTERED_MODEL_RUNNER_TODOS[0] + "    models, optimizers = amp.init")
        .replace("            with amp.scale_loss(", REGISTERED_MODEL_RUNNER_TODOS[1] + "            with amp.scale_loss(")
        .replace("            amp.load_state_dict(", REGISTERED_MODEL_RUNNER_TODOS[2] + "            amp.load_state_dict("),
        codes=("APX102", "APX220", "APX403"),
    ),
    # the same repository with the model's step after both backwards: the step goes under the
    # train step's own test (``if use_amp: <step through the GradScaler> else: optimizer.step()``),
    # so the GradScaler steps exactly the backwards it scaled; the setup function keeps the
    # GradScalers in a module-level variable (APX252), None until it runs (a use_amp run before
    # it fails at the scale, as apex's scale_loss raised without amp.initialize)
    Example(
        "registered-model-stepped-by-a-framework-runner-steps-under-its-own-test",
        before=REGISTERED_MODEL_SAVING,
        after='''\
# file: amp_setup.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


def init_amp(models, optimizers, options):
    global grad_scalers
    amp_options = dict(options)
    amp_loss_scale = amp_options.get("loss_scale", "dynamic")
    amp_scale, amp_growth = (
        (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
        if amp_loss_scale == "dynamic"
        else (float(amp_loss_scale), 10**9)
    )
    use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
    grad_scalers = [torch.amp.GradScaler(next((p.device.type for p in (models[0] if isinstance(models, list) else models).parameters()), "cuda") if use_amp else "cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp) for _ in range(amp_options.get("num_losses", 1))]
    for loss_id_scaler in grad_scalers:
        loss_id_scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    return models, optimizers
# file: models.py
import torch
from mmcv.utils import Registry
import amp_setup

MODELS = Registry("model")


@MODELS.register_module()
class Regressor(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(4, 1)

    def train_step(self, batch, optimizer, use_amp=False):
        with torch.autocast(next((p.device.type for g in optimizer.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=amp_setup.grad_scalers is not None and amp_setup.grad_scalers[0].is_enabled()):
            loss = self.net(batch).pow(2).mean()
        optimizer.zero_grad()
        if use_amp:
            amp_setup.grad_scalers[0].scale(loss).backward()
        else:
            loss.backward()
        if use_amp:
            amp_setup.grad_scalers[0].step(optimizer)
            amp_setup.grad_scalers[0].update()
        else:
            optimizer.step()
        return dict(loss=loss.item())
# file: runner.py
import torch
from mmcv.runner import IterBasedRunner
import amp_setup


def load_scaler_state(scaler, state):
    """Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    """
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


def load_scaler_states(scalers, state):
    """Restore one GradScaler per apex loss id: from the list of their states, or from
    apex.amp's ``{"loss_scaler0": ..., "loss_scaler1": ...}`` (one entry per loss id).
    """
    for loss_id, scaler in enumerate(scalers):
        if isinstance(state, dict):
            load_scaler_state(scaler, {"loss_scaler0": state[f"loss_scaler{loss_id}"]})
        else:
            load_scaler_state(scaler, state[loss_id])


class AmpRunner(IterBasedRunner):
    def __init__(self, *args, use_amp=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.use_amp = use_amp

    def save(self, path):
        state = {"meta": self.meta}
        if self.use_amp:
            state["amp"] = [loss_scaler.state_dict() for loss_scaler in amp_setup.grad_scalers]
        torch.save(state, path)

    def resume(self, path):
        state = torch.load(path)
        if self.use_amp:
            load_scaler_states(amp_setup.grad_scalers, state["amp"])
# file: train.py
from mmcv.runner import build_runner

from amp_setup import init_amp


def train(model, optimizer, cfg):
    model, optimizer = init_amp(model, optimizer, cfg.amp)
    runner = build_runner(cfg.runner, default_args=dict(model=model, optimizer=optimizer, use_amp=True))
    runner.run()
''',
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX252", "APX301", "APX311", "APX401", "APX402"),
    ),
]


# a trainer keeps its optimizer step in a hook method a subclass in another file (which names
# no apex) redefines: apex patched the optimizer's step, so the override stepped unscaled
# gradients and skipped overflows; natively the base's step goes through the GradScaler, and
# the override is edited to step through it too (``override_step_plan``), with unscale_
# before its own gradient reads
HOOKED_STEP = """\
# file: engines/mixed.py
from apex import amp


class MixedEngine:
    def __init__(self, net, optimizer):
        self.net = net
        self.optimizer = optimizer

    def prepare(self):
        self.net, self.optimizer = amp.initialize(self.net, self.optimizer, opt_level="O1")

    def apply_update(self):
        self.optimizer.step()

    def train_step(self, batch):
        loss = self.net(batch).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.apply_update()
        self.optimizer.zero_grad()
        return loss
# file: engines/averaged.py
# no apex here: the subclass only changes how the update is applied
from engines.mixed import MixedEngine


class AveragedEngine(MixedEngine):
    def apply_update(self):
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    param.grad.mul_(0.5)
        self.optimizer.step()
"""

HOOKED_STEP_NATIVE = """\
# file: engines/mixed.py
import torch


class MixedEngine:
    def __init__(self, net, optimizer):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.net = net
        self.optimizer = optimizer

    def prepare(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def apply_update(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).sum()
        self.scaler.scale(loss).backward()
        self.apply_update()
        self.optimizer.zero_grad()
        return loss
# file: engines/averaged.py
# no apex here: the subclass only changes how the update is applied
from engines.mixed import MixedEngine


class AveragedEngine(MixedEngine):
    def apply_update(self):
        self.scaler.unscale_(self.optimizer)
        for group in self.optimizer.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    param.grad.mul_(0.5)
        self.scaler.step(self.optimizer)
        self.scaler.update()
"""


def _hooked_step_kept(before: str, why: str) -> str:
    """``before`` kept on the shim, the TODO at the base's step ending with ``why`` (the
    lines of the override-step route's reason, each a comment line)."""
    todo = (
        "        # TODO(apexcompat): self.optimizer.step() is in MixedEngine.apply_update(), which\n"
        "        #   AveragedEngine in engines/averaged.py overrides: a native rewrite steps the base's\n"
        "        #   through the GradScaler, but the override would still step the scaled gradients\n"
        + why
    )
    return before.replace("from apex import", "from apexcompat import", 1).replace(
        "    def apply_update(self):\n        self.optimizer.step()",
        "    def apply_update(self):\n" + todo + "        self.optimizer.step()",
        1,
    )


#: the subclass imports the base through the package's installed name, which names the
#: folder the run starts in: no import resolves to the file, the class names still match
HOOKED_STEP_BY_PACKAGE_NAME = HOOKED_STEP.replace(
    "from engines.mixed import", "from trainkit.engines.mixed import"
).replace("the subclass only changes how the update is applied", "the package is imported as trainkit, this folder")

#: the override steps only on some calls: where it does not, no update would follow
HOOKED_STEP_SOMETIMES = HOOKED_STEP.rsplit("        self.optimizer.step()\n", 1)[0] + (
    "        if self.net.training:\n            self.optimizer.step()\n"
)

#: the base clips (its rewrite unscales before) and the override reads the gradients too
HOOKED_STEP_TWICE = HOOKED_STEP.replace(
    "            scaled_loss.backward()\n        self.apply_update()",
    "            scaled_loss.backward()\n        torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)\n"
    "        self.apply_update()",
).replace("# file: engines/mixed.py\nfrom apex import amp\n", "# file: engines/mixed.py\nimport torch\nfrom apex import amp\n")

#: the base derives from a class of another file (a clipping method in it, not followed from
#: the base): the base's rewrite may unscale before the hook runs, so the override's own
#: unscale_ could raise
HOOKED_STEP_ANCESTOR_READS = HOOKED_STEP.replace(
    "# file: engines/mixed.py\nfrom apex import amp\n\n\nclass MixedEngine:\n",
    "# file: engines/__init__.py\n# file: engines/core.py\nimport torch\n\n\nclass CoreEngine:\n    def clip(self):\n"
    "        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)\n"
    "# file: engines/mixed.py\nfrom apex import amp\n\nfrom engines.core import CoreEngine\n\n\n"
    "class MixedEngine(CoreEngine):\n",
)

#: Horovod's shape (DeepGNN): the subclass's backward hook all-reduces the scaled gradients
#: (``synchronize()``), the base unscales them to clip, and the override steps inside
#: ``skip_synchronize()``: the GradScaler steps there, after the all-reduce
HOOKED_HOROVOD = """\
# file: trainers/half.py
import torch

try:
    from apex import amp
except ImportError:
    amp = None


class HalfTrainer:
    def __init__(self, model, optimizer, max_norm):
        self.model = model
        self.optimizer = optimizer
        self.max_norm = max_norm

    def setup(self):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def run_backward(self, scaled_loss):
        scaled_loss.backward()

    def run_step(self):
        self.optimizer.step()

    def train_one(self, batch):
        loss = self.model(batch).mean()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            self.run_backward(scaled_loss)
        if self.max_norm:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.max_norm)
        self.run_step()
        self.optimizer.zero_grad()
        return loss
# file: trainers/ring.py
from trainers.half import HalfTrainer


class RingTrainer(HalfTrainer):
    def run_backward(self, scaled_loss):
        scaled_loss.backward()
        self.optimizer.synchronize()

    def run_step(self):
        with self.optimizer.skip_synchronize():
            self.optimizer.step()  # averaged already
"""

HOOKED_HOROVOD_NATIVE = """\
# file: trainers/half.py
import torch


class HalfTrainer:
    def __init__(self, model, optimizer, max_norm):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer
        self.max_norm = max_norm

    def setup(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def run_backward(self, scaled_loss):
        scaled_loss.backward()

    def run_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def train_one(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(batch).mean()
        scaled_loss = self.scaler.scale(loss)
        self.run_backward(scaled_loss)
        if self.max_norm:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), self.max_norm)
        self.run_step()
        self.optimizer.zero_grad()
        return loss
# file: trainers/ring.py
from trainers.half import HalfTrainer


class RingTrainer(HalfTrainer):
    def run_backward(self, scaled_loss):
        scaled_loss.backward()
        self.optimizer.synchronize()

    def run_step(self):
        with self.optimizer.skip_synchronize():
            self.scaler.step(self.optimizer)  # averaged already
            self.scaler.update()
"""

REPOSITORY_EXAMPLES += [
    Example(
        "step-in-a-hook-a-subclass-elsewhere-overrides-steps-through-the-scaler-too",
        before=HOOKED_STEP,
        after=HOOKED_STEP_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX257", "APX261", "APX301", "APX311"),
    ),
    Example(
        "step-hook-overridden-through-the-package-name-steps-through-the-scaler-too",
        before=HOOKED_STEP_BY_PACKAGE_NAME,
        after=HOOKED_STEP_NATIVE.replace(
            "from engines.mixed import", "from trainkit.engines.mixed import"
        ).replace("the subclass only changes how the update is applied", "the package is imported as trainkit, this folder"),
        codes=("APX101", "APX201", "APX209", "APX257", "APX261", "APX301", "APX311"),
    ),
    Example(
        "step-hook-override-under-horovods-skip-synchronize-steps-through-the-scaler",
        before=HOOKED_HOROVOD,
        after=HOOKED_HOROVOD_NATIVE,
        codes=("APX101", "APX103", "APX201", "APX209", "APX257", "APX261", "APX301", "APX311", "APX321"),
    ),
    Example(
        "step-hook-override-that-steps-on-some-calls-keeps-the-shim",
        before=HOOKED_STEP_SOMETIMES,
        after=_hooked_step_kept(HOOKED_STEP_SOMETIMES, (
            "        #   itself (apex patched every optimizer.step); nor can the tool edit the override: the\n"
            "        #   step of AveragedEngine.apply_update() in engines/averaged.py is nested in a\n"
            "        #   statement other than with (line 11), so some calls may not step; this file keeps\n"
            "        #   apex.amp semantics through apexcompat.amp, migrate it by hand\n"
        )),
        codes=("APX102", "APX220"),
    ),
    Example(
        "step-hook-override-reading-gradients-below-an-unfollowed-base-keeps-the-shim",
        before=HOOKED_STEP_ANCESTOR_READS,
        after=_hooked_step_kept(HOOKED_STEP_ANCESTOR_READS, (
            "        #   itself (apex patched every optimizer.step); nor can the tool edit the override:\n"
            "        #   AveragedEngine.apply_update() in engines/averaged.py reads the gradients before its\n"
            "        #   step, but MixedEngine derives from CoreEngine, whose methods are not followed: the\n"
            "        #   base's rewrite may unscale them before the call (a second unscale_ raises); this\n"
            "        #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n"
        )),
        codes=("APX102", "APX220"),
    ),
    Example(
        "step-hook-override-reading-gradients-the-base-unscales-keeps-the-shim",
        before=HOOKED_STEP_TWICE,
        after=_hooked_step_kept(HOOKED_STEP_TWICE, (
            "        #   itself (apex patched every optimizer.step); nor can the tool edit the override:\n"
            "        #   AveragedEngine.apply_update() in engines/averaged.py reads the gradients before its\n"
            "        #   step, but MixedEngine.train_step() reads them too: the base's rewrite may unscale\n"
            "        #   them before the call (a second unscale_ raises); this file keeps apex.amp semantics\n"
            "        #   through apexcompat.amp, migrate it by hand\n"
        )),
        codes=("APX102", "APX220"),
    ),
]

#: a launcher without apex.amp between a model factory and the helper that scales the loss
#: (the before text of two examples; ``{more}`` adds files)
GLUE_LAUNCHER = """\
# file: nets/__init__.py
# file: nets/build.py
import torch
from apex import amp


def build_model(cfg):
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if cfg.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer
# file: nets/losses.py
from apex import amp


def backward_step(cfg, loss, optimizer):
    optimizer.zero_grad()
    if cfg.fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
# file: train.py
import torch

from nets.build import build_model
from nets.losses import backward_step


def train(cfg, batches):
    model, optimizer = build_model(cfg)
    for inputs, targets in batches:
        logits = model(inputs.cuda())
        loss = torch.nn.functional.cross_entropy(logits, targets.cuda())
        backward_step(cfg, loss, optimizer)
{more}"""
#: a second caller of the helper, without a GradScaler (an adaptation step at test time)
GLUE_SECOND_CALLER = """\
# file: adapt.py
import torch

from nets.losses import backward_step


def adapt(cfg, model, batch):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss = model(batch).square().mean()
    backward_step(cfg, loss, optimizer)
"""
#: the TODOs of the factory and of the helper when the launcher cannot hand the scaler on
GLUE_TODOS = (
    """\
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
        #   backward_step() of nets/losses.py, called from train.py (train), a file without
        #   apex.amp that calls this model factory too; it cannot hand the GradScaler on:
        #   backward_step of nets/losses.py is also called from adapt.py (in adapt()), where no
        #   GradScaler exists; nor can a module-level GradScaler stand in: nets/losses.py uses
        #   apex.amp too, and cannot import nets/build.py under one dotted name; this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
""",
    """\
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (backward_step is called from train.py (train), a file without
        #   apex.amp that gets the model from the factory in nets/build.py, and it cannot hand
        #   the GradScaler on: backward_step of nets/losses.py is also called from adapt.py (in
        #   adapt()), where no GradScaler exists); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
""",
)

REPOSITORY_EXAMPLES += [
    Example(
        # the launcher names no apex.amp: it gets the model from a factory of nets/ and hands
        # each loss to a helper of another module there, which scales it and steps.  The
        # factory returns the GradScaler, the launcher binds it (not into `_`), passes it to
        # the helper as scaler= and puts autocast around the forward pass feeding the loss
        # (APX235); the helper takes it as a parameter and steps through it
        "launcher-without-apex-hands-the-factory-scaler-to-the-loss-helper",
        before=GLUE_LAUNCHER.format(more=""),
        after="""\
# file: nets/__init__.py
# file: nets/build.py
import torch


def build_model(cfg):
    model = torch.nn.Linear(8, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = bool(cfg.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    return model, optimizer, scaler
# file: nets/losses.py
def backward_step(cfg, loss, optimizer, scaler):
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
# file: train.py
import torch

from nets.build import build_model
from nets.losses import backward_step


def train(cfg, batches):
    model, optimizer, scaler = build_model(cfg)
    for inputs, targets in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            logits = model(inputs.cuda())
            loss = torch.nn.functional.cross_entropy(logits, targets.cuda())
        backward_step(cfg, loss, optimizer, scaler=scaler)
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX235", "APX244", "APX301", "APX311", "APX316"),
    ),
    Example(
        # ... but a script without a GradScaler calls the helper too (an adaptation step at
        # test time, where apex's scale_loss ran without an initialize of its process): the
        # helper cannot take the GradScaler, so the factory and the helper keep apex.amp, and
        # both say where the launcher's route stops
        "launcher-without-apex-whose-loss-helper-is-called-elsewhere-keeps-the-shim",
        before=GLUE_LAUNCHER.format(more=GLUE_SECOND_CALLER),
        after=GLUE_LAUNCHER.format(more=GLUE_SECOND_CALLER)
        .replace("from apex import", "from apexcompat import")
        .replace("        model, optimizer = amp.initialize(", GLUE_TODOS[0] + "        model, optimizer = amp.initialize(")
        .replace("        with amp.scale_loss(", GLUE_TODOS[1] + "        with amp.scale_loss("),
        codes=("APX102", "APX220"),
    ),
    Example(
        # no file imports probe.py, whose module level runs the initialize, and pytest alone
        # runs the test module's functions: what runs after each initialize is what their own
        # code calls, which reaches no amp.scale_loss (train.py's is its own), so apex never
        # scaled a loss of them and they get autocast without a GradScaler.  helpers.py is
        # neither: code outside the repository may call half_net() and scale afterwards
        "scripts-without-a-guard-get-autocast",
        before="""\
# file: helpers.py
import torch
from apex import amp


def half_net():
    net = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net, opt = amp.initialize(net, opt, opt_level="O1")
    return net, opt
# file: probe.py
import torch
from apex import amp

net = torch.nn.Linear(4, 2).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
net, opt = amp.initialize(net, opt, opt_level="O1")
print(net(torch.randn(8, 4).cuda()).dtype)
# file: tests/test_half.py
import torch
from apex import amp


def test_forward_is_half():
    net = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net, opt = amp.initialize(net, opt, opt_level="O1")
    assert net(torch.randn(8, 4).cuda()).dtype == torch.float16
# file: train.py
import torch
from apex import amp


def fit(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


if __name__ == "__main__":
    net = torch.nn.Linear(4, 2).cuda()
    fit(net, torch.optim.SGD(net.parameters(), lr=0.1), [torch.randn(8, 4).cuda()])
""",
        after="""\
# file: helpers.py
import torch
from apexcompat import amp


def half_net():
    net = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file, and it is not proven that no loss is
    #   scaled after its amp.initialize: the launcher is no script (no __name__ ==
    #   "__main__" guard, no test module, and importing it runs no amp.initialize): its
    #   callers are not known; this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
    net, opt = amp.initialize(net, opt, opt_level="O1")
    return net, opt
# file: probe.py
import torch

net = torch.nn.Linear(4, 2).cuda()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
net.forward = torch.autocast("cuda", dtype=torch.float16)(net.forward)
print(net(torch.randn(8, 4).cuda()).dtype)
# file: tests/test_half.py
import torch


def test_forward_is_half():
    net = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net.forward = torch.autocast("cuda", dtype=torch.float16)(net.forward)
    assert net(torch.randn(8, 4).cuda()).dtype == torch.float16
# file: train.py
import torch


def fit(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    net = torch.nn.Linear(4, 2).cuda()
    fit(net, torch.optim.SGD(net.parameters(), lr=0.1), [torch.randn(8, 4).cuda()])
""",
        codes=("APX101", "APX102", "APX201", "APX209", "APX220", "APX229", "APX301", "APX311"),
    ),
    Example(
        # the loop the launcher calls already trains with torch.amp (its GradScaler, written
        # by the authors, is no rewrite of an amp.scale_loss: the launcher still imports
        # apex): apex scaled no loss of the initialize, so it becomes autocast around the
        # model's forward, and the loop keeps its own GradScaler
        "launcher-whose-training-loop-has-its-own-gradscaler",
        before="""\
# file: loops/__init__.py
# file: loops/fit.py
import torch


def fit(model, optimizer, batches, use_amp=False):
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    for x in batches:
        optimizer.zero_grad()
        with torch.cuda.amp.autocast(enabled=use_amp):
            loss = model(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: run.py
import torch
from apex import amp

from loops.fit import fit


def main():
    net = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net, opt = amp.initialize(net, opt, opt_level="O1")
    fit(net, opt, [torch.randn(8, 4).cuda()], use_amp=True)


if __name__ == "__main__":
    main()
""",
        after="""\
# file: loops/__init__.py
# file: loops/fit.py
import torch


def fit(model, optimizer, batches, use_amp=False):
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", enabled=use_amp):
            loss = model(x).float().pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: run.py
import torch

from loops.fit import fit


def main():
    net = torch.nn.Linear(4, 2).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    net.forward = torch.autocast("cuda", dtype=torch.float16)(net.forward)
    fit(net, opt, [torch.randn(8, 4).cuda()], use_amp=True)


if __name__ == "__main__":
    main()
""",
        codes=("APX101", "APX229", "APX901", "APX902"),
    ),
    Example(
        # apex.amp goes onto the runner object, and runner.py (no apex import) scales through
        # self.amp, read as apex.amp or None: the holder route (before: kept, "an attribute named
        # amp is read off an object in runner.py"); without a loop, every statement of the method
        # before the scaled backward's if goes under the autocast
        "amp-stored-on-an-object-another-file-reads-names-that-file",
        before="""\
# file: amp_setup.py
def enable_amp(runner, opt_level="O1"):
    from apex import amp

    runner.net, runner.opt = amp.initialize(runner.net, runner.opt, opt_level=opt_level)
    runner.amp = amp
# file: runner.py
import torch


class Runner:
    def __init__(self, net, opt):
        self.net, self.opt = net, opt
        self.amp = None

    def step(self, x):
        self.opt.zero_grad()
        loss = self.net(x).float().pow(2).mean()
        if self.amp is not None:
            with self.amp.scale_loss(loss, self.opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.opt.step()
        return loss.item()
# file: train.py
import torch

from amp_setup import enable_amp
from runner import Runner


def main():
    net = torch.nn.Linear(4, 2).cuda()
    runner = Runner(net, torch.optim.SGD(net.parameters(), lr=0.1))
    enable_amp(runner)
    runner.step(torch.randn(8, 4).cuda())


if __name__ == "__main__":
    main()
""",
        after="""\
# file: amp_setup.py
import torch

def enable_amp(runner, opt_level="O1"):
    use_amp = opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    runner.scaler = scaler
# file: runner.py
import torch


class Runner:
    def __init__(self, net, opt):
        self.net, self.opt = net, opt
        self.scaler = None

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None and self.scaler.is_enabled()):
            self.opt.zero_grad()
            loss = self.net(x).float().pow(2).mean()
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        if self.scaler is not None:
            self.scaler.step(self.opt)
            self.scaler.update()
        else:
            self.opt.step()
        return loss.item()
# file: train.py
import torch

from amp_setup import enable_amp
from runner import Runner


def main():
    net = torch.nn.Linear(4, 2).cuda()
    runner = Runner(net, torch.optim.SGD(net.parameters(), lr=0.1))
    enable_amp(runner)
    runner.step(torch.randn(8, 4).cuda())


if __name__ == "__main__":
    main()
""",
        codes=("APX101", "APX201", "APX202", "APX237"),
    ),
]

#: an optimizer wrapper of its own module (no apex.amp): a polynomial learning rate set from a
#: count of its step() calls, then the step of the SGD it holds
POLY_WRAPPER = """\
# file: lr.py
import torch


class PolySGD:
    def __init__(self, model, lr, total):
        self.lr0 = lr
        self.total = total
        self.done = 0
        self.sgd = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)

    def step(self):
        self.lr = self.lr0 * (1 - self.done / self.total) ** 0.9
        for group in self.sgd.param_groups:
            group["lr"] = self.lr
        self.done += 1
        self.sgd.step()

    def zero_grad(self):
        self.sgd.zero_grad()
"""
POLY_WRAPPER_GIVEN_THE_SCALER = POLY_WRAPPER.replace("    def step(self):", "    def step(self, scaler=None):").replace(
    "        self.sgd.step()\n",
    "        if scaler is None:\n            self.sgd.step()\n        else:\n            scaler.step(self.sgd)\n",
)
#: an evaluation helper after the wrapper in its module, under the autocast spelled {autocast}
POLY_EVAL = """\


def predict(net, x):
    with {autocast}:
        return net(x).argmax(1)
"""
#: the body of the examples' training loop after zero_grad(), scaling for {opt}, and natively
POLY_LOOP = """\
        loss = torch.nn.functional.cross_entropy(net(x), y)
        with amp.scale_loss(loss, {opt}) as scaled_loss:
            scaled_loss.backward()
        schedule.step()
"""
POLY_LOOP_NATIVE = """\
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(net(x), y)
        scaler.scale(loss).backward()
        schedule.step(scaler)
        scaler.update()
"""
#: the wrapper's SGD initialized by apex and stored back into it (BiSeNet's fp16 script)
POLY_STORED_BACK = """\
# file: train.py
import torch
from apex import amp

from lr import PolySGD


def train(net, batches, total):
    schedule = PolySGD(net, lr=0.01, total=total)
    net, opt = amp.initialize(net, schedule.sgd, opt_level="O1")
    schedule.sgd = opt
    for x, y in batches:
        schedule.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        schedule.step()
"""
#: the wrapper handed to the training function by a caller (glow-tts' train()): {build} is
#: how the caller gets it
POLY_HANDED_ON = """\
# file: train.py
import torch
from apex import amp

from lr import PolySGD


def make_schedule(net, total):
    return PolySGD(net, lr=0.01, total=total)


def train(net, schedule, batches):
    for x, y in batches:
        schedule.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        with amp.scale_loss(loss, schedule.sgd) as scaled_loss:
            scaled_loss.backward()
        schedule.step()


def main(net, batches):
    schedule = {build}
    net, schedule.sgd = amp.initialize(net, schedule.sgd, opt_level="O1")
    train(net, schedule, batches)
"""

REPOSITORY_EXAMPLES += [
    Example(
        # the loss is scaled for the SGD an optimizer wrapper of another file holds, and the
        # script steps the wrapper, whose step also sets the learning rate from a count of its
        # calls: apex skipped only the inner step on an overflow and the count went on.  The
        # wrapper's step takes the GradScaler (scaler=None, so its other callers step as before)
        # and steps the SGD through it; the script hands it over and updates after
        "optimizer-wrapper-with-a-schedule-of-its-own-is-handed-the-scaler",
        before=POLY_WRAPPER + POLY_STORED_BACK,
        after=POLY_WRAPPER_GIVEN_THE_SCALER
        + POLY_STORED_BACK.replace("from apex import amp\n", "").replace(
            '    net, opt = amp.initialize(net, schedule.sgd, opt_level="O1")\n',
            '    opt = schedule.sgd\n    scaler = torch.amp.GradScaler("cuda")\n',
        ).replace(POLY_LOOP.format(opt="opt"), POLY_LOOP_NATIVE),
        codes=("APX101", "APX201", "APX209", "APX301", "APX315"),
    ),
    Example(
        # the same wrapper handed to the training function by its one caller, which builds it
        # with the wrapper's constructor: the class is followed into train()
        "optimizer-wrapper-handed-to-the-training-function-is-handed-the-scaler",
        before=POLY_WRAPPER + POLY_HANDED_ON.format(build="PolySGD(net, lr=0.01, total=len(batches))"),
        after=POLY_WRAPPER_GIVEN_THE_SCALER
        + POLY_HANDED_ON.format(build="PolySGD(net, lr=0.01, total=len(batches))")
        .replace("from apex import amp\n", "")
        .replace("def train(net, schedule, batches):", "def train(net, schedule, batches, scaler):")
        .replace(POLY_LOOP.format(opt="schedule.sgd"), POLY_LOOP_NATIVE)
        .replace(
            '    net, schedule.sgd = amp.initialize(net, schedule.sgd, opt_level="O1")\n'
            "    train(net, schedule, batches)\n",
            '    scaler = torch.amp.GradScaler("cuda")\n    train(net, schedule, batches, scaler)\n',
        ),
        codes=("APX101", "APX201", "APX207", "APX209", "APX301", "APX315"),
    ),
    Example(
        # the wrapper's module is rewritten by another rule too (its evaluation helper spells
        # torch.cuda.amp.autocast): the step edit lands on top of that rewrite (it was skipped,
        # and the script's schedule.step(scaler) raised TypeError)
        "optimizer-wrapper-in-a-module-another-rule-rewrites-is-handed-the-scaler",
        before=POLY_WRAPPER + POLY_EVAL.format(autocast="torch.cuda.amp.autocast()") + POLY_STORED_BACK,
        after=POLY_WRAPPER_GIVEN_THE_SCALER
        + POLY_EVAL.format(autocast='torch.autocast("cuda")')
        + POLY_STORED_BACK.replace("from apex import amp\n", "").replace(
            '    net, opt = amp.initialize(net, schedule.sgd, opt_level="O1")\n',
            '    opt = schedule.sgd\n    scaler = torch.amp.GradScaler("cuda")\n',
        ).replace(POLY_LOOP.format(opt="opt"), POLY_LOOP_NATIVE),
        codes=("APX101", "APX201", "APX209", "APX301", "APX315", "APX901"),
    ),
    Example(
        # ... but where the caller gets it from a helper, its class is not proven in train():
        # the file keeps apex.amp and the wrapper's file is left alone
        "optimizer-wrapper-from-a-helper-keeps-the-shim",
        before=POLY_WRAPPER + POLY_HANDED_ON.format(build="make_schedule(net, len(batches))"),
        after=POLY_WRAPPER
        + POLY_HANDED_ON.format(build="make_schedule(net, len(batches))")
        .replace("from apex import amp", "from apexcompat import amp")
        .replace(
            "        with amp.scale_loss(",
            "        # TODO(apexcompat): schedule.sgd.step() is not in the same function as amp.scale_loss,\n"
            "        #   and schedule.step() steps schedule, which holds it: schedule is a parameter of\n"
            "        #   train(), whose class is not followed into it, so its step() is not proven to step\n"
            "        #   schedule.sgd once (GradScaler.step needs the optimizer it unscaled, or a proven\n"
            "        #   wrapper of it); this file keeps apex.amp semantics through apexcompat.amp, migrate\n"
            "        #   it by hand\n"
            "        with amp.scale_loss(",
        ),
        codes=("APX102", "APX220"),
    ),
]

#: a launcher without apex.amp between a model factory that keeps one loss scaler per loss id
#: (``num_losses=2``) and a helper whose ``loss_id`` is its parameter (the before text of two
#: examples; ``{critic_id}`` is the loss id the critic's call gives)
GLUE_TWO_LOSS_IDS = """\
# file: nets/__init__.py
# file: nets/factory.py
import torch
from apex import amp


def make_pair(cfg):
    actor = torch.nn.Linear(4, 4).cuda()
    critic = torch.nn.Linear(4, 1).cuda()
    opt_actor = torch.optim.SGD(actor.parameters(), lr=0.05)
    opt_critic = torch.optim.SGD(critic.parameters(), lr=0.05)
    if cfg.mixed:
        [actor, critic], [opt_actor, opt_critic] = amp.initialize(
            [actor, critic], [opt_actor, opt_critic], opt_level="O1", num_losses=2
        )
    return actor, critic, [opt_actor, opt_critic]
# file: nets/update.py
from apex import amp


def apply_loss(cfg, loss, optimizer, loss_id):
    optimizer.zero_grad()
    if cfg.mixed:
        with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled:
            scaled.backward()
    else:
        loss.backward()
    optimizer.step()
# file: run.py
import torch

from nets.factory import make_pair
from nets.update import apply_loss


def run(cfg, states):
    actor, critic, [opt_actor, opt_critic] = make_pair(cfg)
    for state in states:
        value = critic(actor(state).detach()).mean()
        apply_loss(cfg, value, opt_critic, {critic_id})
        score = -critic(actor(state)).mean()
        apply_loss(cfg, score, opt_actor, 0)
"""
#: the same launcher handing the critic's optimizer on with both loss ids
GLUE_ONE_OPTIMIZER_TWO_IDS = GLUE_TWO_LOSS_IDS.format(critic_id=1).replace(
    "apply_loss(cfg, score, opt_actor, 0)", "apply_loss(cfg, score, opt_critic, 0)"
)
#: the TODOs of the factory and of the helper there
GLUE_TWO_IDS_TODOS = (
    """\
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
        #   apply_loss() of nets/update.py, called from run.py (run), a file without apex.amp
        #   that calls this model factory too; it cannot hand the GradScaler on: amp.initialize
        #   keeps 2 loss scalers there (num_losses=2), one per loss id, and opt_critic is handed
        #   on with the losses of loss ids 0, 1; nor can a module-level GradScaler stand in:
        #   nets/update.py uses apex.amp too, and cannot import nets/factory.py under one dotted
        #   name; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
""",
    """\
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (apply_loss is called from run.py (run), a file without apex.amp that
        #   gets the model from the factory in nets/factory.py, and it cannot hand the
        #   GradScaler on: amp.initialize keeps 2 loss scalers there (num_losses=2), one per
        #   loss id, and opt_critic is handed on with the losses of loss ids 0, 1); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
""",
)

REPOSITORY_EXAMPLES += [
    Example(
        # the factory keeps one loss scaler per loss id and the launcher, which names no
        # apex.amp, gives the helper's loss_id a number at each call, each optimizer with one
        # of them: the factory returns the list of GradScalers, the launcher hands it on, and
        # the helper picks the one of its loss id where apex picked its loss scaler (APX235;
        # before: the shim, 'the route hands on one GradScaler')
        "launcher-without-apex-hands-one-scaler-per-loss-id-to-the-helper",
        before=GLUE_TWO_LOSS_IDS.format(critic_id=1),
        after="""\
# file: nets/__init__.py
# file: nets/factory.py
import torch


def make_pair(cfg):
    actor = torch.nn.Linear(4, 4).cuda()
    critic = torch.nn.Linear(4, 1).cuda()
    opt_actor = torch.optim.SGD(actor.parameters(), lr=0.05)
    opt_critic = torch.optim.SGD(critic.parameters(), lr=0.05)
    use_amp = bool(cfg.mixed)
    scalers = [torch.amp.GradScaler("cuda", enabled=use_amp) for _ in range(2)]
    return actor, critic, [opt_actor, opt_critic], scalers
# file: nets/update.py
def apply_loss(cfg, loss, optimizer, loss_id, scalers):
    optimizer.zero_grad()
    scalers[loss_id].scale(loss).backward()
    scalers[loss_id].step(optimizer)
    scalers[loss_id].update()
# file: run.py
import torch

from nets.factory import make_pair
from nets.update import apply_loss


def run(cfg, states):
    actor, critic, [opt_actor, opt_critic], scalers = make_pair(cfg)
    for state in states:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scalers[0].is_enabled()):
            value = critic(actor(state).detach()).mean()
        apply_loss(cfg, value, opt_critic, 1, scalers=scalers)
        with torch.autocast("cuda", dtype=torch.float16, enabled=scalers[0].is_enabled()):
            score = -critic(actor(state)).mean()
        apply_loss(cfg, score, opt_actor, 0, scalers=scalers)
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX213", "APX235", "APX244", "APX301", "APX311", "APX316"),
    ),
    Example(
        # ... but the launcher hands the critic's optimizer on with loss ids 1 and 0: apex
        # stepped it after losses of two loss scalers, which no one GradScaler per loss id
        # reproduces, so the factory and the helper keep apex.amp and both say why
        "launcher-without-apex-feeding-one-optimizer-two-loss-ids-keeps-the-shim",
        before=GLUE_ONE_OPTIMIZER_TWO_IDS,
        after=GLUE_ONE_OPTIMIZER_TWO_IDS.replace("from apex import", "from apexcompat import")
        .replace("        [actor, critic], [opt_actor, opt_critic] = amp.initialize(",
                 GLUE_TWO_IDS_TODOS[0] + "        [actor, critic], [opt_actor, opt_critic] = amp.initialize(")
        .replace("        with amp.scale_loss(", GLUE_TWO_IDS_TODOS[1] + "        with amp.scale_loss("),
        codes=("APX102", "APX220"),
    ),
]

#: a package offering a loss scaler class under its own name that no file of the repository
#: builds (a library's helper for code elsewhere)
OFFERED_SCALER = """\
# file: kit/__init__.py
from .amp_step import BackwardAndStep
# file: kit/amp_step.py
import torch
from apex import amp


class BackwardAndStep:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, max_norm=None):
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        optimizer.step()

    def state_dict(self):
        return amp.state_dict()

    def load_state_dict(self, state):
        amp.load_state_dict(state)
"""

REPOSITORY_EXAMPLES += [
    Example(
        # no file builds the class (the package only re-exports it): it takes the GradScaler
        # in a new __init__, so code elsewhere that builds it without one fails at once; the
        # loss it is handed is its callers' to compute under autocast (a warning says so)
        "loss-scaler-class-no-file-builds-takes-the-scaler-in-its-constructor",
        before=OFFERED_SCALER,
        after=OFFERED_SCALER.replace("from apex import amp\n", "").replace(
            "\n\nclass BackwardAndStep:\n    state_dict_key = \"amp\"\n",
            "\n\n" + HELPER + "\n\nclass BackwardAndStep:\n    state_dict_key = \"amp\"\n\n"
            "    def __init__(self, scaler):\n        self.scaler = scaler\n",
        ).replace(
            """        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        if max_norm is not None:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        optimizer.step()
""",
            """        self.scaler.scale(loss).backward()
        if max_norm is not None:
            self.scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), max_norm)
        self.scaler.step(optimizer)
        self.scaler.update()
""",
        ).replace("        return amp.state_dict()", "        return self.scaler.state_dict()").replace(
            "        amp.load_state_dict(state)", "        load_scaler_state(self.scaler, state)"
        ),
        codes=("APX101", "APX209", "APX213", "APX301", "APX311", "APX321", "APX401", "APX402"),
    ),
]


HOLDER_REPO = """\
# file: helpers.py
import torch


def enable_mixed_precision(trainer, opt_level="O1"):
    from apex import amp
    trainer.net, trainer.optimizer = amp.initialize(trainer.net, trainer.optimizer, opt_level=opt_level)
    trainer.amp = amp
# file: model.py
import torch


class Trainer:
    def __init__(self, net, device):
        self.net = net.to(device)
        self.device = device
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.amp = None
        self.chunks = 2

    def train_step(self, batch):
        self.net.train()
        self.optimizer.zero_grad()
        for i, (x, y) in enumerate(zip(batch[0].chunk(self.chunks), batch[1].chunk(self.chunks))):
            x, y = x.to(self.device), y.to(self.device)
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            if self.amp is not None:
                with self.amp.scale_loss(loss, self.optimizer, delay_unscale=i < self.chunks - 1) as scaled:
                    scaled.backward()
            else:
                loss.backward()
        self.optimizer.step()
        return loss.item()

    def uses_amp(self):
        return self.amp is not None
# file: train.py
import torch

from helpers import enable_mixed_precision
from model import Trainer


def main(fp16=True):
    trainer = Trainer(torch.nn.Linear(8, 2), "cuda")
    if fp16:
        enable_mixed_precision(trainer)
    for _ in range(10):
        trainer.train_step((torch.randn(4, 8), torch.randn(4, 2)))
"""

HOLDER_REPO_NATIVE = """\
# file: helpers.py
import torch


def enable_mixed_precision(trainer, opt_level="O1"):
    use_amp = opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    trainer.scaler = scaler
# file: model.py
import torch


class Trainer:
    def __init__(self, net, device):
        self.net = net.to(device)
        self.device = device
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.scaler = None
        self.chunks = 2

    def train_step(self, batch):
        self.net.train()
        self.optimizer.zero_grad()
        for i, (x, y) in enumerate(zip(batch[0].chunk(self.chunks), batch[1].chunk(self.chunks))):
            with torch.autocast(torch.device(self.device).type, dtype=torch.float16, enabled=self.scaler is not None and self.scaler.is_enabled()):
                x, y = x.to(self.device), y.to(self.device)
                loss = torch.nn.functional.mse_loss(self.net(x), y)
            if self.scaler is not None:
                self.scaler.scale(loss).backward()
            else:
                loss.backward()
        if self.scaler is not None:
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            self.optimizer.step()
        return loss.item()

    def uses_amp(self):
        return self.scaler is not None
# file: train.py
import torch

from helpers import enable_mixed_precision
from model import Trainer


def main(fp16=True):
    trainer = Trainer(torch.nn.Linear(8, 2), "cuda")
    if fp16:
        enable_mixed_precision(trainer)
    for _ in range(10):
        trainer.train_step((torch.randn(4, 8), torch.randn(4, 2)))
"""

HOLDER_PASSED_ON_TODO = """\
# file: helpers.py
import torch


def enable_mixed_precision(trainer, opt_level="O1"):
    from apexcompat import amp
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled through
    #   trainer.amp, which is not followed because self.amp is read at model.py:30 other
    #   than in an `is None` / `is not None` test, `= None` in __init__(), a scale_loss,
    #   state_dict() or load_state_dict() call; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    trainer.net, trainer.optimizer = amp.initialize(trainer.net, trainer.optimizer, opt_level=opt_level)
    # TODO(apexcompat): apex.amp is stored as trainer.amp here; its uses through that
    #   attribute cannot be followed (no loss is scaled through trainer.amp in this file,
    #   and self.amp is read at model.py:30 other than in an `is None` / `is not None` test,
    #   `= None` in __init__(), a scale_loss, state_dict() or load_state_dict() call); this
    #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    trainer.amp = amp
"""

HOLDER_REPO_PRINTED = HOLDER_REPO.replace(
    "        return self.amp is not None\n",
    "        return self.amp is not None\n\n    def describe(self):\n        print(\"mixed precision:\", self.amp)\n",
)

HANDED_BACKWARD = """\
# file: plugins.py
class AmpPlugin:
    def __init__(self, opt_level):
        self.opt_level = opt_level
        from apex import amp

        self.amp = amp

    def backward(self, loss):
        with self.amp.scale_loss(loss, self.trainer.optimizer) as scaled_loss:
            scaled_loss.backward()

    def attach(self, trainer):
        self.trainer = trainer
        trainer.model, trainer.optimizer = self.amp.initialize(trainer.model, trainer.optimizer, opt_level=self.opt_level)
        trainer.backward = self.backward
# file: trainer.py
import torch


class Trainer:
    def __init__(self, model, plugins=()):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for plugin in plugins:
            plugin.attach(self)

    def backward(self, loss):
        loss.backward()

    def fit(self, batches):
        for x, y in batches:
            self.optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
            self.optimizer.step()
"""

HANDED_BACKWARD_TODO = """\
# file: plugins.py
class AmpPlugin:
    def __init__(self, opt_level):
        self.opt_level = opt_level
        from apexcompat import amp

        # TODO(apexcompat): apex.amp is stored as self.amp here; its uses through that attribute
        #   cannot be followed (AmpPlugin.backward(), which scales the losses through self.amp,
        #   is handed on as a value (`trainer.backward = self.backward`): its callers, the
        #   forward passes that compute the losses it is given and the optimizer step are not
        #   followed); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        self.amp = amp

    def backward(self, loss):
        with self.amp.scale_loss(loss, self.trainer.optimizer) as scaled_loss:
            scaled_loss.backward()

    def attach(self, trainer):
        self.trainer = trainer
        trainer.model, trainer.optimizer = self.amp.initialize(trainer.model, trainer.optimizer, opt_level=self.opt_level)
        trainer.backward = self.backward
"""

REPOSITORY_EXAMPLES += [
    Example(
        # argus-alaska's shape: a helper initializes apex on an object's network and optimizer
        # and keeps apex.amp itself on it (trainer.amp = amp); a class of a file without apex
        # reads self.amp as apex.amp or None.  Every read there is proven (= None in __init__,
        # `is (not) None` tests, one scale_loss in the `is not None` branch, the step right after
        # the loop): the attribute becomes a GradScaler-or-None holder (self.scaler), the helper
        # puts its GradScaler there, and the class's file scales, steps and runs its forward pass
        # under autocast through it (enabled while it is set)
        "amp-kept-on-an-object-read-as-a-holder-in-a-file-without-apex",
        before=HOLDER_REPO,
        after=HOLDER_REPO_NATIVE,
        codes=("APX101", "APX201", "APX202", "APX237"),
    ),
    Example(
        # ... but one read there the route does not cover (self.amp printed): both files keep
        # apex.amp, the reason names that read
        "amp-kept-on-an-object-whose-holder-reads-it-otherwise",
        before=HOLDER_REPO_PRINTED,
        after=HOLDER_PASSED_ON_TODO + "# file: model.py" + HOLDER_REPO_PRINTED.split("# file: model.py", 1)[1],
        codes=("APX102", "APX220"),
    ),
    Example(
        # flair's trainer-plugin shape: the method that scales through self.amp is handed to
        # the trainer as a value (trainer.backward = self.backward): its callers, the forward
        # passes of the losses it is given and the step are in code the route does not follow
        "amp-kept-on-self-by-a-plugin-whose-scaling-method-is-handed-on",
        before=HANDED_BACKWARD,
        after=HANDED_BACKWARD_TODO + "# file: trainer.py" + HANDED_BACKWARD.split("# file: trainer.py", 1)[1],
        codes=("APX102", "APX220"),
    ),
]


HOLDER_REPO_ODD_MEMBER = HOLDER_REPO.replace("    trainer.amp = amp\n", "    trainer.amp = amp\n    amp.unknown_member()\n")

REPOSITORY_EXAMPLES.append(
    Example(
        # ... but the helper's file falls back (a member with no native rewrite): the plan's
        # component is dropped, so the holder's file is left as it is, reading self.amp
        "amp-kept-on-an-object-read-as-a-holder-whose-helper-falls-back",
        before=HOLDER_REPO_ODD_MEMBER,
        after="""\
# file: helpers.py
import torch


def enable_mixed_precision(trainer, opt_level="O1"):
    from apexcompat import amp
    # TODO(apexcompat): the GradScaler plan across files was dropped: in helpers.py,
    #   amp.unknown_member has no native rewrite; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    trainer.net, trainer.optimizer = amp.initialize(trainer.net, trainer.optimizer, opt_level=opt_level)
    # TODO(apexcompat): apex.amp is stored as trainer.amp here; its uses through that
    #   attribute cannot be followed (no loss is scaled through trainer.amp in this file,
    #   and an attribute named amp is read off an object in model.py) (the GradScaler plan
    #   across files was dropped: in helpers.py, amp.unknown_member has no native rewrite);
    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    trainer.amp = amp
    # TODO(apexcompat): amp.unknown_member has no native rewrite; this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    amp.unknown_member()
""" + "# file: model.py" + HOLDER_REPO_ODD_MEMBER.split("# file: model.py", 1)[1],
        codes=("APX102", "APX220"),
    )
)


#: a script whose flags come from a parser factory of another file (DeepSpeedExamples'
#: BingBertSquad: ``parser = get_argument_parser()`` from utils.py): the accumulation count's
#: default is read there (``parser_factories``, handed over by the plan)
FACTORY_FLAGS = '''\
# file: flags.py
import argparse


def get_argument_parser():
    """The script's flags."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--fp16", action="store_true")
    return parser
'''
FACTORY_SCRIPT = '''\
# file: train.py
import torch
from apex import amp
from flags import get_argument_parser


class NormClipper:
    def __init__(self, limit):
        self.limit = limit

    def step(self, parameters):
        grads = [p.grad for p in parameters if p.grad is not None]
        total = torch.norm(torch.stack([g.norm() for g in grads])).item()
        if total > self.limit:
            for g in grads:
                g.mul_(self.limit / total)


def main():
    parser = get_argument_parser()
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    clipper = NormClipper(1.0)
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        clipper.step(amp.master_params(optimizer))
        if (step + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
'''
#: the same factory adding the count under a condition: its default is unknown
FACTORY_FLAGS_CONDITIONAL = FACTORY_FLAGS.replace(
    '''    parser.add_argument("--accumulate", type=int, default=1)
''',
    '''    if os.environ.get("ACCUMULATE"):
        parser.add_argument("--accumulate", type=int, default=4)
    else:
        parser.add_argument("--accumulate", type=int, default=1)
''',
).replace("import argparse\n", "import argparse\nimport os\n")

REPOSITORY_EXAMPLES += [
    Example(
        # the clipper runs after every backward, right before the step under ``(step + 1) %
        # args.accumulate == 0``, the flag added by get_argument_parser() of flags.py with
        # default 1: every backward is a step under the default flags, so the clipper moves into
        # that if after unscale_ (the O2 clip of amp.master_params after the block, as for a
        # flag of the script's own file); a larger count clips once per step
        "own-clipper-with-a-count-of-one-by-default-from-a-parser-factory-of-another-file",
        before=FACTORY_FLAGS + FACTORY_SCRIPT,
        after=FACTORY_FLAGS
        + """\
# file: train.py
import torch
from flags import get_argument_parser


class NormClipper:
    def __init__(self, limit):
        self.limit = limit

    def step(self, parameters):
        grads = [p.grad for p in parameters if p.grad is not None]
        total = torch.norm(torch.stack([g.norm() for g in grads])).item()
        if total > self.limit:
            for g in grads:
                g.mul_(self.limit / total)


def main():
    parser = get_argument_parser()
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    clipper = NormClipper(1.0)
    for step in range(8):
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if (step + 1) % args.accumulate == 0:
            scaler.unscale_(optimizer)
            clipper.step(model.parameters())
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX263", "APX301", "APX311", "APX314", "APX321"),
    ),
    Example(
        # a clip of the master parameters of two optimizers spread into one list is a clip (the
        # use was named after amp.master_params(encoder), not after the clip it is handed to, and
        # the file came out native with TODOs, clipping the scaled gradients): where no unscale_
        # point is found the file keeps apex.amp
        "clip-of-two-optimizers-master-parameters-in-a-list-that-cannot-be-unscaled-keeps-apex",
        before="""\
# file: batches.py
import torch


def batches(n):
    return [torch.randn(2, 4).cuda() for _ in range(n)]
# file: train.py
import torch
from apex import amp
from batches import batches


def train(model, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    model, [encoder, decoder] = amp.initialize(model, [encoder, decoder], opt_level="O1")
    for x in batches(8):
        loss = model(x).sum()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, [encoder, decoder]) as scaled_loss:
                scaled_loss.backward()
            params = list(amp.master_params(encoder)) + list(amp.master_params(decoder))
        torch.nn.utils.clip_grad_norm_([*amp.master_params(encoder), *amp.master_params(decoder)], max_norm)
        encoder.step()
        decoder.step()
        encoder.zero_grad()
        decoder.zero_grad()
""",
        after="""\
# file: batches.py
import torch


def batches(n):
    return [torch.randn(2, 4).cuda() for _ in range(n)]
# file: train.py
import torch
from apexcompat import amp
from batches import batches


def train(model, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    # TODO(apexcompat): as written, a native rewrite would clip scaled gradients: gradients
    #   used after the scaled backward: torch.nn.utils.clip_grad_norm_(...) saw gradients
    #   apex had unscaled, but scaler keeps them scaled until scaler.step(encoder) (a
    #   backward runs between the first use and the others): call scaler.unscale_(encoder)
    #   before it, once per step; this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
    model, [encoder, decoder] = amp.initialize(model, [encoder, decoder], opt_level="O1")
    for x in batches(8):
        loss = model(x).sum()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, [encoder, decoder]) as scaled_loss:
                scaled_loss.backward()
            params = list(amp.master_params(encoder)) + list(amp.master_params(decoder))
        torch.nn.utils.clip_grad_norm_([*amp.master_params(encoder), *amp.master_params(decoder)], max_norm)
        encoder.step()
        decoder.step()
        encoder.zero_grad()
        decoder.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... and chained into it: itertools.chain(...) hands the parameters on to the clip
        "clip-of-two-optimizers-master-parameters-chained-that-cannot-be-unscaled-keeps-apex",
        before="""\
# file: batches.py
import torch


def batches(n):
    return [torch.randn(2, 4).cuda() for _ in range(n)]
# file: train.py
import itertools

import torch
from apex import amp
from batches import batches


def train(model, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    model, [encoder, decoder] = amp.initialize(model, [encoder, decoder], opt_level="O1")
    for x in batches(8):
        loss = model(x).sum()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, [encoder, decoder]) as scaled_loss:
                scaled_loss.backward()
            params = list(amp.master_params(encoder)) + list(amp.master_params(decoder))
        torch.nn.utils.clip_grad_norm_(itertools.chain(amp.master_params(encoder), amp.master_params(decoder)), max_norm)
        encoder.step()
        decoder.step()
        encoder.zero_grad()
        decoder.zero_grad()
""",
        after="""\
# file: batches.py
import torch


def batches(n):
    return [torch.randn(2, 4).cuda() for _ in range(n)]
# file: train.py
import itertools

import torch
from apexcompat import amp
from batches import batches


def train(model, max_norm, cpu_train=False):
    encoder = torch.optim.SGD(model[0].parameters(), lr=0.1)
    decoder = torch.optim.SGD(model[1].parameters(), lr=0.01)
    # TODO(apexcompat): as written, a native rewrite would clip scaled gradients: gradients
    #   used after the scaled backward: torch.nn.utils.clip_grad_norm_(...) saw gradients
    #   apex had unscaled, but scaler keeps them scaled until scaler.step(encoder) (a
    #   backward runs between the first use and the others): call scaler.unscale_(encoder)
    #   before it, once per step; this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
    model, [encoder, decoder] = amp.initialize(model, [encoder, decoder], opt_level="O1")
    for x in batches(8):
        loss = model(x).sum()
        if cpu_train:
            loss.backward()
            params = model.parameters()
        else:
            with amp.scale_loss(loss, [encoder, decoder]) as scaled_loss:
                scaled_loss.backward()
            params = list(amp.master_params(encoder)) + list(amp.master_params(decoder))
        torch.nn.utils.clip_grad_norm_(itertools.chain(amp.master_params(encoder), amp.master_params(decoder)), max_norm)
        encoder.step()
        decoder.step()
        encoder.zero_grad()
        decoder.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # two helpers given the optimizer, each reading amp.master_params(optimizer), called in
        # one step: each got its own scaler.unscale_(optimizer), and the second raised
        # ("unscale_() has already been called on this optimizer since the last update()")
        "two-helpers-that-would-each-unscale-the-optimizer-in-one-step-keep-apex",
        before="""\
# file: data.py
import torch


def batches(n):
    return [torch.randn(2, 4).cuda() for _ in range(n)]
# file: train.py
import torch
from apex import amp
from data import batches


def clip_gradients(optimizer, max_norm):
    return torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)


def grad_norm(optimizer):
    return sum(float(p.grad.norm()) for p in amp.master_params(optimizer) if p.grad is not None)


def train():
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches(8):
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip_gradients(optimizer, 0.5)
        print(grad_norm(optimizer))
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
# file: data.py
import torch


def batches(n):
    return [torch.randn(2, 4).cuda() for _ in range(n)]
# file: train.py
import torch
from apexcompat import amp
from data import batches


def clip_gradients(optimizer, max_norm):
    return torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)


def grad_norm(optimizer):
    return sum(float(p.grad.norm()) for p in amp.master_params(optimizer) if p.grad is not None)


def train():
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    # TODO(apexcompat): as written, a native rewrite would clip scaled gradients: gradients
    #   used after the scaled backward: torch.nn.utils.clip_grad_norm_(...) saw gradients
    #   apex had unscaled, but scaler keeps them scaled until scaler.step(optimizer)
    #   (clip_gradients() is called more than once in a function, or where that function
    #   unscales too: an unscale_ in it would raise the second time): call
    #   scaler.unscale_(optimizer) before it, once per step; this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches(8):
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        clip_gradients(optimizer, 0.5)
        print(grad_norm(optimizer))
        optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but the factory adds the count under a condition: its default is not known, the
        # clipper would clip scaled gradients on some run, and the script keeps apex.amp
        "own-clipper-with-a-count-a-parser-factory-adds-under-a-condition",
        before=FACTORY_FLAGS_CONDITIONAL + FACTORY_SCRIPT,
        after=FACTORY_FLAGS_CONDITIONAL
        + """\
# file: train.py
import torch
from apexcompat import amp
from flags import get_argument_parser


class NormClipper:
    def __init__(self, limit):
        self.limit = limit

    def step(self, parameters):
        grads = [p.grad for p in parameters if p.grad is not None]
        total = torch.norm(torch.stack([g.norm() for g in grads])).item()
        if total > self.limit:
            for g in grads:
                g.mul_(self.limit / total)


def main():
    parser = get_argument_parser()
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        # TODO(apexcompat): as written, a native rewrite would clip scaled gradients on every
        #   micro-step: per-micro-step gradient use: clipper.step(...) runs after every
        #   backward, but optimizer.step() only at the accumulation boundary (or under a
        #   condition). apex unscaled the gradients after each backward;
        #   scaler.unscale_(optimizer) can run only once per step, so there is no exact native
        #   equivalent: move this to the step boundary, after scaler.unscale_(optimizer); this
        #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    clipper = NormClipper(1.0)
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        clipper.step(amp.master_params(optimizer))
        if (step + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()


if __name__ == "__main__":
    main()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the library's load_state initializes apex (under an if and a NameError try), its
        # train scales, and only the command of another module calls them, in turn: no call
        # chain hands a GradScaler from one to the other.  apex's loss scaler was per process;
        # the library keeps the GradScaler in a module-level variable, assigned after the if on
        # every path through load_state, read by train when it runs
        "module-level-grad-scaler-where-no-call-chain-reaches",
        before=MODULE_SCALER_LIBRARY,
        after="""\
# file: lib/__init__.py
# file: lib/training.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


def load_state(model, optimizer, use_amp=False):
    global scaler
    model.cuda()
    if use_amp:
        try:
            pass
        except NameError:
            exit(1)
    amp_enabled = bool(use_amp)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)
    return 0


def train(model, optimizer, batches, use_amp=False):
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: train.py
import torch

from lib.training import load_state, train


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    train(model, optimizer, batches, use_amp=args.amp)
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX250", "APX301", "APX311", "APX316"),
    ),
    Example(
        # ... with a tune command that sets apex up itself and then trains through the library
        # (bonito's tune.py): its initialize assigns the library's variable, as apex's replaced
        # the process's loss scaler; both files are one component
        "module-level-grad-scaler-assigned-by-another-file-that-initializes",
        before=MODULE_SCALER_LIBRARY
        + """\
# file: tune.py
import torch
from apex import amp

from lib.training import train


def objective(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, batches, use_amp=True)
""",
        after="""\
# file: lib/__init__.py
# file: lib/training.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


def load_state(model, optimizer, use_amp=False):
    global scaler
    model.cuda()
    if use_amp:
        try:
            pass
        except NameError:
            exit(1)
    amp_enabled = bool(use_amp)
    scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)
    return 0


def train(model, optimizer, batches, use_amp=False):
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
# file: train.py
import torch

from lib.training import load_state, train


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    train(model, optimizer, batches, use_amp=args.amp)
# file: tune.py
import torch

from lib.training import train
import lib.training


def objective(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    lib.training.scaler = torch.amp.GradScaler("cuda")
    train(model, optimizer, batches, use_amp=True)
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX250", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the module-level GradScaler of a script: no other file names apex.amp or imports it,
        # so run as __main__ it is the one variable every site reads; its guard calls setup()
        # and then main() in one block, so main() runs after the variable is set
        "module-level-grad-scaler-of-a-script-whose-guard-runs-setup-then-main",
        before=SCRIPT_SCALER,
        after="""\
# file: data.py
import torch


def batch():
    return torch.randn(2, 4).cuda()
# file: train.py
import argparse

import torch

from data import batch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


def setup(args):
    global scaler
    def barrier():
        if not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()

    barrier()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    return model, optimizer


def main(args, model, optimizer):
    for _ in range(4):
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(batch()).mean()
        optimizer.zero_grad()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    model, optimizer = setup(args)
    main(args, model, optimizer)
""",
        codes=("APX101", "APX201", "APX209", "APX250", "APX301", "APX311"),
    ),
    Example(
        # ... whose guard runs main() before setup(): main() would read the variable unset
        "fallback-script-whose-guard-runs-main-before-setup",
        before=SCRIPT_SCALER.replace(
            "    model, optimizer = setup(args)\n    main(args, model, optimizer)\n",
            "    model = torch.nn.Linear(4, 1).cuda()\n"
            "    main(args, model, torch.optim.SGD(model.parameters(), lr=0.1))\n"
            "    model, optimizer = setup(args)\n",
        ),
        after="""\
# file: data.py
import torch


def batch():
    return torch.randn(2, 4).cuda()
# file: train.py
import argparse

import torch
from apexcompat import amp

from data import batch


def setup(args):
    def barrier():
        if not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()

    barrier()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def main(args, model, optimizer):
    for _ in range(4):
        loss = model(batch()).mean()
        optimizer.zero_grad()
        if args.fp16:
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to main:
            #   main() is called at module level, where no GradScaler exists; nor can a module-level
            #   GradScaler stand in: main() is run at module level (line 40) where no call of
            #   setup() before it in the same block would have set that variable; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    main(args, model, torch.optim.SGD(model.parameters(), lr=0.1))
    model, optimizer = setup(args)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... which another file imports: imported, the script is a module other than the
        # __main__ one whose variable its guard sets, so the route is not taken
        "fallback-script-another-file-imports",
        before=SCRIPT_SCALER + """\
# file: evaluate.py
from train import setup


def evaluate(args, batches):
    model, _ = setup(args)
    return [model(x) for x in batches]
""",
        after="""\
# file: data.py
import torch


def batch():
    return torch.randn(2, 4).cuda()
# file: train.py
import argparse

import torch
from apexcompat import amp

from data import batch


def setup(args):
    def barrier():
        if not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()

    barrier()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def main(args, model, optimizer):
    for _ in range(4):
        loss = model(batch()).mean()
        optimizer.zero_grad()
        if args.fp16:
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to main:
            #   main() is called at module level, where no GradScaler exists; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    args = parser.parse_args()
    model, optimizer = setup(args)
    main(args, model, optimizer)
# file: evaluate.py
from train import setup


def evaluate(args, batches):
    model, _ = setup(args)
    return [model(x) for x in batches]
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... where another function of the script also calls main(), and the guard may run it
        # before setup(): followed no further, the shim stays
        "fallback-script-whose-other-function-calls-main",
        before=SCRIPT_SCALER.replace(
            '\n\nif __name__ == "__main__":',
            "\n\ndef smoke(args):\n"
            "    model = torch.nn.Linear(4, 1).cuda()\n"
            "    main(args, model, torch.optim.SGD(model.parameters(), lr=0.1))\n"
            '\n\nif __name__ == "__main__":',
        ).replace(
            "    model, optimizer = setup(args)\n",
            "    if args.smoke:\n        smoke(args)\n    model, optimizer = setup(args)\n",
        ).replace(
            '    parser.add_argument("--fp16", action="store_true")\n',
            '    parser.add_argument("--fp16", action="store_true")\n'
            '    parser.add_argument("--smoke", action="store_true")\n',
        ),
        after="""\
# file: data.py
import torch


def batch():
    return torch.randn(2, 4).cuda()
# file: train.py
import argparse

import torch
from apexcompat import amp

from data import batch


def setup(args):
    def barrier():
        if not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()

    barrier()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def main(args, model, optimizer):
    for _ in range(4):
        loss = model(batch()).mean()
        optimizer.zero_grad()
        if args.fp16:
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to main:
            #   main() is called at module level, where no GradScaler exists; nor can a module-level
            #   GradScaler stand in: main() is also used in smoke() (line 37), which this script's
            #   __main__ guard may run before setup() sets that variable; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()


def smoke(args):
    model = torch.nn.Linear(4, 1).cuda()
    main(args, model, torch.optim.SGD(model.parameters(), lr=0.1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        smoke(args)
    model, optimizer = setup(args)
    main(args, model, optimizer)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but one that calls train before its amp.initialize: apex trained that call with
        # whatever loss scaler the process had, the variable may still be None there
        "module-level-grad-scaler-refused-where-another-file-trains-before-it-initializes",
        before=MODULE_SCALER_LIBRARY
        + """\
# file: tune.py
import torch
from apex import amp

from lib.training import train


def objective(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer, batches[:1], use_amp=False)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, batches, use_amp=True)
""",
        after="""\
# file: lib/__init__.py
# file: lib/training.py
import torch

try:
    from apexcompat import amp
except ImportError:
    pass


def load_state(model, optimizer, use_amp=False):
    model.cuda()
    if use_amp:
        try:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        except NameError:
            exit(1)
    return 0


def train(model, optimizer, batches, use_amp=False):
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        if use_amp:
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to train:
            #   amp.initialize is in load_state(), which no function of this file calls, so no
            #   caller here could hand its GradScaler on; nor can a module-level GradScaler stand
            #   in: tune.py uses apex.amp too, and its call of train() in objective() may run before
            #   its own amp.initialize would set that variable; this file keeps apex.amp semantics
            #   through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
# file: train.py
import torch

from lib.training import load_state, train


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    train(model, optimizer, batches, use_amp=args.amp)
# file: tune.py
import torch
from apexcompat import amp

from lib.training import train


def objective(batches):
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer, batches[:1], use_amp=False)
    # TODO(apexcompat): no amp.scale_loss in this file, and it is not proven that no loss is
    #   scaled after its amp.initialize: the launcher is no script (no __name__ ==
    #   "__main__" guard, no test module, and importing it runs no amp.initialize): its
    #   callers are not known; this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, batches, use_amp=True)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... and load_state may return before its amp.initialize: the variable would stay None
        # on that path, where apex's optimizer stepped plainly
        "module-level-grad-scaler-refused-where-the-initializer-returns-first",
        before="""\
# file: lib/__init__.py
# file: lib/training.py
import torch

try:
    from apex import amp
except ImportError:
    pass


def load_state(model, optimizer, use_amp=False):
    model.cuda()
    if model is None:
        return -1
    if use_amp:
        try:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        except NameError:
            exit(1)
    return 0


def train(model, optimizer, batches, use_amp=False):
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        if use_amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
# file: train.py
import torch

from lib.training import load_state, train


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    train(model, optimizer, batches, use_amp=args.amp)
""",
        after="""\
# file: lib/__init__.py
# file: lib/training.py
import torch

try:
    from apexcompat import amp
except ImportError:
    pass


def load_state(model, optimizer, use_amp=False):
    model.cuda()
    if model is None:
        return -1
    if use_amp:
        try:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        except NameError:
            exit(1)
    return 0


def train(model, optimizer, batches, use_amp=False):
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        if use_amp:
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to train:
            #   amp.initialize is in load_state(), which no function of this file calls, so no
            #   caller here could hand its GradScaler on; nor can a module-level GradScaler stand
            #   in: load_state() may return before its amp.initialize, which would leave that
            #   variable unset; this file keeps apex.amp semantics through apexcompat.amp, migrate
            #   it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
# file: train.py
import torch

from lib.training import load_state, train


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    train(model, optimizer, batches, use_amp=args.amp)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... and a library whose backward helper is handed the loss: the forward passes that
        # compute it are its callers', in other files, where no autocast placed in the library
        # would reach, so the library keeps apex.amp
        "module-level-grad-scaler-refused-where-the-loss-is-handed-in",
        before="""\
# file: lib/__init__.py
# file: lib/training.py
import torch

try:
    from apex import amp
except ImportError:
    pass


def load_state(model, optimizer, use_amp=False):
    model.cuda()
    if use_amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return 0


def backward_step(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
# file: train.py
import torch

from lib.training import load_state, backward_step


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        backward_step(loss, optimizer)
""",
        after="""\
# file: lib/__init__.py
# file: lib/training.py
import torch

try:
    from apexcompat import amp
except ImportError:
    pass


def load_state(model, optimizer, use_amp=False):
    model.cuda()
    if use_amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return 0


def backward_step(loss, optimizer):
    # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to
    #   backward_step: amp.initialize is in load_state(), which no function of this file
    #   calls, so no caller here could hand its GradScaler on; nor can a module-level
    #   GradScaler stand in: the loss backward_step() scales comes in as its parameter loss,
    #   computed by callers that may be in other files, whose forward passes the autocast
    #   placed here would not cover; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
# file: train.py
import torch

from lib.training import load_state, backward_step


def main(args, batches):
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    load_state(model, optimizer, use_amp=args.amp)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x.cuda()), y.cuda())
        backward_step(loss, optimizer)
""",
        codes=("APX102", "APX220"),
    ),
]


#: lffont's shape: the base class initializes in a method of its own (``num_losses=3``) and
#: scales each loss in a backward method under a loss id, the classifier's for two optimizers;
#: a subclass in a file without apex.amp drives the loop and steps (``step_heir_plan``)
STEP_HEIRS_REPO = '''\
# file: base.py
import torch
from apex import amp


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        if self.cfg.use_half:
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values())
        if self.cfg.use_half:
            with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                scaled_d_loss.backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                scaled_g_loss.backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
# file: combined.py
import torch.nn.functional as F

from base import BaseTrainer


class CombinedTrainer(BaseTrainer):
    def train(self, loader):
        self.gen.train()
        for x, y, labels in loader:
            x, y = x.cuda(), y.cuda()
            out = self.gen(x)
            self.d_losses["disc"] = F.relu(1.0 - self.disc(y)).mean() + F.relu(1.0 + self.disc(out.detach())).mean()
            self.d_optim.zero_grad()
            self.d_backward()
            self.d_optim.step()

            self.g_losses["pixel"] = F.l1_loss(out, y)
            self.g_optim.zero_grad()
            if self.aux is not None:
                self.ac_losses["ac"] = F.cross_entropy(self.aux(out), labels)
                self.ac_optim.zero_grad()
                self.ac_backward()
                self.ac_optim.step()
            self.g_backward()
            self.g_optim.step()
'''
STEP_HEIRS_NATIVE = '''\
# file: base.py
import torch


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        use_amp = bool(self.cfg.use_half and level != "O0")
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values())
        if self.cfg.use_half:
            self.scaler.scale(d_loss).backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            self.scaler.scale(g_loss).backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            self.scaler.scale(self.ac_losses["ac"]).backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
# file: combined.py
import torch.nn.functional as F

from base import BaseTrainer
import torch


class CombinedTrainer(BaseTrainer):
    def train(self, loader):
        self.gen.train()
        for x, y, labels in loader:
            x, y = x.cuda(), y.cuda()
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                out = self.gen(x)
                self.d_losses["disc"] = F.relu(1.0 - self.disc(y)).mean() + F.relu(1.0 + self.disc(out.detach())).mean()
            self.d_optim.zero_grad()
            self.d_backward()
            self.scaler.step(self.d_optim)

            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                self.g_losses["pixel"] = F.l1_loss(out, y)
            self.g_optim.zero_grad()
            if self.aux is not None:
                with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                    self.ac_losses["ac"] = F.cross_entropy(self.aux(out), labels)
                self.ac_optim.zero_grad()
                self.ac_backward()
                self.scaler.step(self.ac_optim)
            self.g_backward()
            self.scaler.step(self.g_optim)
            self.scaler.update()
'''
STEP_HEIRS_JUMP = STEP_HEIRS_REPO.replace(
    "            self.d_backward()\n",
    "            self.d_backward()\n            if self.cfg.skip_critic:\n                continue\n",
)
STEP_HEIRS_NO_ZERO = STEP_HEIRS_REPO.replace("            self.g_optim.zero_grad()\n", "")

REPOSITORY_EXAMPLES += [
    Example(
        # the base class never steps the optimizers it scales for; its subclass calls each
        # backward method and steps right after it, each optimizer zeroed first in the loop:
        # one GradScaler on self serves every loss id (g_optim is fed by two of them, so one
        # scale), the subclass's steps go through it, one update() after the last, and its
        # forward passes and losses run under autocast while it is enabled
        "scaling-methods-of-a-base-class-stepped-by-a-subclass-in-a-file-without-apex",
        before=STEP_HEIRS_REPO,
        after=STEP_HEIRS_NATIVE,
        codes=("APX101", "APX201", "APX202", "APX203", "APX226", "APX237", "APX301", "APX302"),
    ),
    Example(
        # ... but a continue between the critic's backward and its step: that iteration would
        # miss the GradScaler's update(), so both files stay as they are on the shim
        "scaling-methods-of-a-base-class-stepped-by-a-subclass-that-may-skip-the-update",
        before=STEP_HEIRS_JUMP,
        after='''\
# file: base.py
import torch
from apexcompat import amp


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        if self.cfg.use_half:
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.d_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but a continue at line 16 of
            #   train() in combined.py may skip the GradScaler's update(); this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                scaled_d_loss.backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but a continue at line 16 of
            #   train() in combined.py may skip the GradScaler's update(); this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                scaled_g_loss.backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            # TODO(apexcompat): self.ac_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but a continue at line 16 of
            #   train() in combined.py may skip the GradScaler's update(); this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but a continue at line 16 of
            #   train() in combined.py may skip the GradScaler's update(); this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
''' + "# file: combined.py" + STEP_HEIRS_JUMP.split("# file: combined.py", 1)[1],
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but the generator's optimizer is not zeroed before the first loss scaled for it:
        # gradients kept from the last iteration (unscaled by its step) would add to scaled
        # ones, where apex unscaled each loss at its backward
        "scaling-methods-of-a-base-class-stepped-by-a-subclass-that-keeps-gradients",
        before=STEP_HEIRS_NO_ZERO,
        after='''\
# file: base.py
import torch
from apexcompat import amp


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        if self.cfg.use_half:
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.d_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but self.g_optim.zero_grad() does
            #   not come before the first scaling call for it (line 21) in the loop of train() in
            #   combined.py: gradients carried over would mix scales; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                scaled_d_loss.backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but self.g_optim.zero_grad() does
            #   not come before the first scaling call for it (line 21) in the loop of train() in
            #   combined.py: gradients carried over would mix scales; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                scaled_g_loss.backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            # TODO(apexcompat): self.ac_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but self.g_optim.zero_grad() does
            #   not come before the first scaling call for it (line 21) in the loop of train() in
            #   combined.py: gradients carried over would mix scales; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but self.g_optim.zero_grad() does
            #   not come before the first scaling call for it (line 21) in the loop of train() in
            #   combined.py: gradients carried over would mix scales; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
''' + "# file: combined.py" + STEP_HEIRS_NO_ZERO.split("# file: combined.py", 1)[1],
        codes=("APX102", "APX220"),
    ),
]


STEP_HEIRS_OVERRIDE = STEP_HEIRS_REPO + "\n    def d_backward(self):\n        sum(self.d_losses.values()).backward()\n"
STEP_HEIRS_OWN_FORWARD = STEP_HEIRS_REPO.replace(
    "        d_loss = sum(self.d_losses.values())\n",
    "        d_loss = sum(self.d_losses.values()) + self.disc(self.fake).mean()\n",
)

REPOSITORY_EXAMPLES += [
    Example(
        # ... but the subclass redefines d_backward() with a plain backward: its step through the
        # GradScaler would unscale gradients nothing scaled
        "scaling-methods-of-a-base-class-one-of-which-the-subclass-redefines",
        before=STEP_HEIRS_OVERRIDE,
        after='''\
# file: base.py
import torch
from apexcompat import amp


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        if self.cfg.use_half:
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.d_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but CombinedTrainer in
            #   combined.py redefines d_backward(); this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                scaled_d_loss.backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but CombinedTrainer in
            #   combined.py redefines d_backward(); this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                scaled_g_loss.backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            # TODO(apexcompat): self.ac_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but CombinedTrainer in
            #   combined.py redefines d_backward(); this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but CombinedTrainer in
            #   combined.py redefines d_backward(); this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
''' + "# file: combined.py"
        + STEP_HEIRS_OVERRIDE.split("# file: combined.py", 1)[1],
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but d_backward() runs a forward pass of its own (self.disc(...)), which the
        # subclass's autocast does not reach; the autocast rule finds no span there either
        "scaling-methods-of-a-base-class-one-of-which-runs-a-forward-pass",
        before=STEP_HEIRS_OWN_FORWARD,
        after='''\
# file: base.py
import torch
from apexcompat import amp


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        if self.cfg.use_half:
            # TODO(apexcompat): the GradScaler plan across files was dropped: in base.py, the
            #   forward pass and loss are not next to this amp.scale_loss: wrap them in `with
            #   torch.autocast("cuda", dtype=torch.float16):` by hand; this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values()) + self.disc(self.fake).mean()
        if self.cfg.use_half:
            with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                scaled_d_loss.backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                scaled_g_loss.backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
''' + "# file: combined.py"
        + STEP_HEIRS_OWN_FORWARD.split("# file: combined.py", 1)[1],
        codes=("APX102", "APX220"),
    ),
]


STEP_HEIRS_STATIC = STEP_HEIRS_REPO.replace(
    "num_losses=num_losses)\n", "num_losses=num_losses, loss_scale=128.0)\n"
)

REPOSITORY_EXAMPLES.append(
    Example(
        # ... but a static loss scale: the route reads the GradScaler's switch in the subclass
        # and is planned only for the dynamic scaler
        "scaling-methods-of-a-base-class-with-a-static-loss-scale",
        before=STEP_HEIRS_STATIC,
        after='''\
# file: base.py
import torch
from apexcompat import amp


class BaseTrainer:
    def __init__(self, gen, disc, g_optim, d_optim, ac_optim, aux, cfg):
        self.cfg = cfg
        self.aux = aux
        [self.gen, self.disc, self.aux], [self.g_optim, self.d_optim, self.ac_optim] = self.set_model(
            [gen, disc, aux], [g_optim, d_optim, ac_optim], num_losses=3, level=cfg.opt_level
        )
        self.g_losses, self.d_losses, self.ac_losses = {}, {}, {}

    def set_model(self, models, opts, num_losses, level="O2"):
        if self.cfg.use_half:
            models, opts = amp.initialize(models, opts, opt_level=level, num_losses=num_losses, loss_scale=128.0)
        return models, opts

    def d_backward(self):
        d_loss = sum(self.d_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.d_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but its loss scale is not
            #   provably dynamic (the subclasses' autocast follows a GradScaler's switch); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(d_loss, self.d_optim, loss_id=0) as scaled_d_loss:
                scaled_d_loss.backward()
        else:
            d_loss.backward()

    def g_backward(self):
        g_loss = sum(self.g_losses.values())
        if self.cfg.use_half:
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but its loss scale is not
            #   provably dynamic (the subclasses' autocast follows a GradScaler's switch); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(g_loss, self.g_optim, loss_id=1) as scaled_g_loss:
                scaled_g_loss.backward()
        else:
            g_loss.backward()

    def ac_backward(self):
        if self.cfg.use_half:
            # TODO(apexcompat): self.ac_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but its loss scale is not
            #   provably dynamic (the subclasses' autocast follows a GradScaler's switch); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            # TODO(apexcompat): self.g_optim.step() is not in the same function as amp.scale_loss,
            #   and BaseTrainer's scaling methods (ac_backward, d_backward, g_backward) leave the
            #   steps to its subclasses in files without apex.amp, but its loss scale is not
            #   provably dynamic (the subclasses' autocast follows a GradScaler's switch); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(self.ac_losses["ac"], [self.ac_optim, self.g_optim], loss_id=2) as scaled_ac_loss:
                scaled_ac_loss.backward(retain_graph=True)
        else:
            self.ac_losses["ac"].backward(retain_graph=True)
''' + "# file: combined.py"
        + STEP_HEIRS_STATIC.split("# file: combined.py", 1)[1],
        codes=("APX102", "APX220"),
    )
)


#: OpenNMT-py's shape: the class that scales in backward() and steps in step() shares its
#: name, Optimizer, with the base of an optimizer class of the same file written
#: ``torch.optim.Optimizer``, which is torch's, not this file's: no override of that step
TORCH_BASE_NAMESAKE = '''\
# file: optim_utils.py
import torch
from apex import amp


class Optimizer(object):
    def __init__(self, model, optimizer, fp16):
        self.fp16 = fp16
        self._optimizer = optimizer
        if fp16:
            model, self._optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.model = model

    def backward(self, loss):
        if self.fp16:
            with amp.scale_loss(loss, self._optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    def step(self):
        self._optimizer.step()
        self._optimizer.zero_grad()

    def train_step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.backward(loss)
        self.step()


class Halving(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.add_(p.grad, alpha=-group["lr"] / 2)
# file: train.py
import torch

from optim_utils import Halving, Optimizer


def main(fp16):
    model = torch.nn.Linear(4, 1).cuda()
    trainer = Optimizer(model, Halving(model.parameters()), fp16)
    for _ in range(4):
        trainer.train_step(torch.randn(2, 4).cuda(), torch.randn(2, 1).cuda())
'''

TORCH_BASE_NAMESAKE_NATIVE = '''\
# file: optim_utils.py
import torch


class Optimizer(object):
    def __init__(self, model, optimizer, fp16):
        self.fp16 = fp16
        self._optimizer = optimizer
        if fp16:
            self._optimizer = optimizer
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.model = model

    def backward(self, loss):
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def step(self):
        self.scaler.step(self._optimizer)
        self.scaler.update()
        self._optimizer.zero_grad()

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.backward(loss)
        self.step()


class Halving(torch.optim.Optimizer):
    def __init__(self, params, lr=0.1):
        super().__init__(params, dict(lr=lr))

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.data.add_(p.grad, alpha=-group["lr"] / 2)
# file: train.py
import torch

from optim_utils import Halving, Optimizer


def main(fp16):
    model = torch.nn.Linear(4, 1).cuda()
    trainer = Optimizer(model, Halving(model.parameters()), fp16)
    for _ in range(4):
        trainer.train_step(torch.randn(2, 4).cuda(), torch.randn(2, 1).cuda())
'''

REPOSITORY_EXAMPLES += [
    Example(
        # Halving(torch.optim.Optimizer) redefines step(), but derives from torch's class, not
        # from the Optimizer of this file whose step() goes through the GradScaler
        "a-step-method-redefined-by-a-class-deriving-from-torch-s-namesake",
        before=TORCH_BASE_NAMESAKE,
        after=TORCH_BASE_NAMESAKE_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # ... the same file alone (no repository plan: the classes of the file are matched by name)
        "a-step-method-redefined-by-a-class-deriving-from-torch-s-namesake-in-one-file",
        before=TORCH_BASE_NAMESAKE.split("# file: optim_utils.py\n", 1)[1].split("# file: train.py", 1)[0],
        after=TORCH_BASE_NAMESAKE_NATIVE.split("# file: optim_utils.py\n", 1)[1].split("# file: train.py", 1)[0],
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
]


#: transformers' old Trainer shape: ``_training_step(self, model, inputs, optimizer)`` scales
#: for the optimizer it is handed; train() of the class hands it and steps after the call
METHOD_HANDED_OPTIMIZER = '''\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, fp16):
        self.fp16 = fp16
        self.model = model

    def train(self, batches):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        model = self.model
        if self.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for inputs in batches:
            self._training_step(model, inputs, optimizer)
            optimizer.step()
            optimizer.zero_grad()

    def _training_step(self, model, inputs, optimizer):
        loss = model(inputs).mean()
        if self.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
'''

REPOSITORY_EXAMPLES.append(
    Example(
        # a file given alone (the API, stdin): the calls of a method on self are followed to the
        # steps of the optimizer they hand it only where the run sees the whole repository (no
        # subclass redefining it, no other file calling it); the finding says so.  In a
        # repository run this trainer comes out native
        # (method-scaling-a-handed-optimizer-followed-to-its-self-callers)
        "scale-loss-for-an-optimizer-a-method-is-handed",
        before=METHOD_HANDED_OPTIMIZER,
        after='''\
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model, fp16):
        self.fp16 = fp16
        self.model = model

    def train(self, batches):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        model = self.model
        if self.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for inputs in batches:
            self._training_step(model, inputs, optimizer)
            optimizer.step()
            optimizer.zero_grad()

    def _training_step(self, model, inputs, optimizer):
        loss = model(inputs).mean()
        if self.fp16:
            # TODO(apexcompat): optimizer.step() is not in the same function as amp.scale_loss, and
            #   optimizer is a parameter of Trainer._training_step(), a method: its calls on self
            #   are followed to their steps only where the run sees the whole repository (no
            #   subclass redefining it, no other file calling it), not for a file given alone; this
            #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
''',
        codes=("APX102", "APX220"),
    )
)


#: SimpleCV's shape: the launcher binds a function of another file that scales the loss onto
#: the object it builds, whose class (a file without apex.amp) runs the forward pass, clips
#: and steps (``bound_plan``)
BOUND_BACKWARD_REPO = '''\
# file: train.py
import torch

from core import default_backward, trainer

try:
    from apex import amp
except ImportError:
    raise ImportError("Please install apex")


def run(model, optimizer, loader, opt_level="O1"):
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    tl = trainer.Launcher(model=model, optimizer=optimizer)
    tl.logger.info("opt_level = {}".format(opt_level))
    tl.override_backward(default_backward.amp_backward)
    tl.train(loader)
    return tl
# file: core/default_backward.py
try:
    from apex import amp
except ImportError:
    pass


def amp_backward(self, total_loss, optimizer):
    with amp.scale_loss(total_loss, optimizer) as scaled_loss:
        scaled_loss.backward()
# file: core/trainer.py
import logging
import types

import torch


class Launcher(object):
    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer
        self.logger = logging.getLogger("launcher")

    @property
    def optimizer(self):
        return self._optimizer

    def compute_loss_gradient(self, data):
        for x, y in data:
            out = self._model(x.cuda())
            total_loss = torch.nn.functional.mse_loss(out, y.cuda())
            self.backward(total_loss, self.optimizer)

    def apply_gradient(self):
        self._optimizer.step()
        self._optimizer.zero_grad()

    def train(self, loader):
        for data in loader:
            self.compute_loss_gradient(data)
            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)
            self.apply_gradient()

    def backward(self, total_loss, optimizer):
        total_loss.backward()

    def override_backward(self, fn):
        self.backward = types.MethodType(fn, self)
'''
BOUND_BACKWARD_CLIPS_PER_CHUNK = BOUND_BACKWARD_REPO.replace(
    "            self.backward(total_loss, self.optimizer)\n",
    "            self.backward(total_loss, self.optimizer)\n"
    "            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)\n",
)
BOUND_BACKWARD_TRAINS_FIRST = BOUND_BACKWARD_REPO.replace(
    "    tl.override_backward(default_backward.amp_backward)\n",
    "    tl.train(loader[:1])\n    tl.override_backward(default_backward.amp_backward)\n",
)

REPOSITORY_EXAMPLES += [
    Example(
        # the launcher puts its GradScaler on the Launcher it builds (None on those built
        # elsewhere), the bound function scales through it, and the Launcher's file runs the
        # forward pass under autocast, unscales before its caller clips and steps through it
        "a-scaling-function-bound-onto-a-launcher-of-a-file-without-apex",
        before=BOUND_BACKWARD_REPO,
        after='''\
# file: train.py
import torch

from core import default_backward, trainer


def run(model, optimizer, loader, opt_level="O1"):
    use_amp = opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    tl = trainer.Launcher(model=model, optimizer=optimizer)
    tl.grad_scaler = scaler
    tl.logger.info("opt_level = {}".format(opt_level))
    tl.override_backward(default_backward.amp_backward)
    tl.train(loader)
    return tl
# file: core/default_backward.py
def amp_backward(self, total_loss, optimizer):
    self.grad_scaler.scale(total_loss).backward()
# file: core/trainer.py
import logging
import types

import torch


class Launcher(object):
    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer
        self.logger = logging.getLogger("launcher")
        self.grad_scaler = None

    @property
    def optimizer(self):
        return self._optimizer

    def compute_loss_gradient(self, data):
        for x, y in data:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.grad_scaler is not None and self.grad_scaler.is_enabled()):
                out = self._model(x.cuda())
                total_loss = torch.nn.functional.mse_loss(out, y.cuda())
            self.backward(total_loss, self.optimizer)

    def apply_gradient(self):
        if self.grad_scaler is not None:
            self.grad_scaler.step(self._optimizer)
            self.grad_scaler.update()
        else:
            self._optimizer.step()
        self._optimizer.zero_grad()

    def train(self, loader):
        for data in loader:
            self.compute_loss_gradient(data)
            if self.grad_scaler is not None:
                self.grad_scaler.unscale_(self._optimizer)
            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)
            self.apply_gradient()

    def backward(self, total_loss, optimizer):
        total_loss.backward()

    def override_backward(self, fn):
        self.backward = types.MethodType(fn, self)
''',
        codes=("APX101", "APX103", "APX201", "APX202", "APX225", "APX260", "APX301"),
    ),
    Example(
        # ... but the Launcher clips after every chunk's backward: apex had unscaled each one,
        # a GradScaler unscales once a step
        "a-scaling-function-bound-onto-a-launcher-that-clips-between-backwards",
        before=BOUND_BACKWARD_CLIPS_PER_CHUNK,
        after='''\
# file: train.py
import torch

from core import default_backward, trainer

try:
    from apexcompat import amp
except ImportError:
    raise ImportError("Please install apex")


def run(model, optimizer, loader, opt_level="O1"):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   core/default_backward.py (amp_backward), which is read as
    #   default_backward.amp_backward in train.py and passed on as a value, never called
    #   directly: the GradScaler cannot reach it; run() in train.py binds amp_backward of
    #   core/default_backward.py onto tl, but compute_loss_gradient() in core/trainer.py
    #   reads or clips gradients at line 22, between backwards of one step; nor can a
    #   module-level GradScaler stand in: core/default_backward.py uses apex.amp too, and
    #   cannot import train.py under one dotted name; this file keeps apex.amp semantics
    #   through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    tl = trainer.Launcher(model=model, optimizer=optimizer)
    tl.logger.info("opt_level = {}".format(opt_level))
    tl.override_backward(default_backward.amp_backward)
    tl.train(loader)
    return tl
# file: core/default_backward.py
try:
    from apexcompat import amp
except ImportError:
    pass


def amp_backward(self, total_loss, optimizer):
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss (amp_backward is read as default_backward.amp_backward in train.py
    #   and passed on as a value, never called directly, so the GradScaler cannot follow its
    #   callers, and run() in train.py binds amp_backward of core/default_backward.py onto
    #   tl, but compute_loss_gradient() in core/trainer.py reads or clips gradients at line
    #   22, between backwards of one step); this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    with amp.scale_loss(total_loss, optimizer) as scaled_loss:
        scaled_loss.backward()
# file: core/trainer.py
import logging
import types

import torch


class Launcher(object):
    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer
        self.logger = logging.getLogger("launcher")

    @property
    def optimizer(self):
        return self._optimizer

    def compute_loss_gradient(self, data):
        for x, y in data:
            out = self._model(x.cuda())
            total_loss = torch.nn.functional.mse_loss(out, y.cuda())
            self.backward(total_loss, self.optimizer)
            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)

    def apply_gradient(self):
        self._optimizer.step()
        self._optimizer.zero_grad()

    def train(self, loader):
        for data in loader:
            self.compute_loss_gradient(data)
            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)
            self.apply_gradient()

    def backward(self, total_loss, optimizer):
        total_loss.backward()

    def override_backward(self, fn):
        self.backward = types.MethodType(fn, self)
''',
        codes=("APX102", "APX220"),
    ),
    Example(
        # ... but the launcher trains the Launcher before it binds the scaling function: those
        # steps ran with the plain backward
        "a-scaling-function-bound-onto-a-launcher-that-trains-before-the-binding",
        before=BOUND_BACKWARD_TRAINS_FIRST,
        after='''\
# file: train.py
import torch

from core import default_backward, trainer

try:
    from apexcompat import amp
except ImportError:
    raise ImportError("Please install apex")


def run(model, optimizer, loader, opt_level="O1"):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in
    #   core/default_backward.py (amp_backward), which is read as
    #   default_backward.amp_backward in train.py and passed on as a value, never called
    #   directly: the GradScaler cannot reach it; run() in train.py binds amp_backward of
    #   core/default_backward.py onto tl, but tl.train() runs before the binding (line 15),
    #   and may train with the plain backward; nor can a module-level GradScaler stand in:
    #   core/default_backward.py uses apex.amp too, and cannot import train.py under one
    #   dotted name; this file keeps apex.amp semantics through apexcompat.amp, migrate it
    #   by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    tl = trainer.Launcher(model=model, optimizer=optimizer)
    tl.logger.info("opt_level = {}".format(opt_level))
    tl.train(loader[:1])
    tl.override_backward(default_backward.amp_backward)
    tl.train(loader)
    return tl
# file: core/default_backward.py
try:
    from apexcompat import amp
except ImportError:
    pass


def amp_backward(self, total_loss, optimizer):
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss (amp_backward is read as default_backward.amp_backward in train.py
    #   and passed on as a value, never called directly, so the GradScaler cannot follow its
    #   callers, and run() in train.py binds amp_backward of core/default_backward.py onto
    #   tl, but tl.train() runs before the binding (line 15), and may train with the plain
    #   backward); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
    #   hand
    with amp.scale_loss(total_loss, optimizer) as scaled_loss:
        scaled_loss.backward()
# file: core/trainer.py
import logging
import types

import torch


class Launcher(object):
    def __init__(self, model, optimizer):
        self._model = model
        self._optimizer = optimizer
        self.logger = logging.getLogger("launcher")

    @property
    def optimizer(self):
        return self._optimizer

    def compute_loss_gradient(self, data):
        for x, y in data:
            out = self._model(x.cuda())
            total_loss = torch.nn.functional.mse_loss(out, y.cuda())
            self.backward(total_loss, self.optimizer)

    def apply_gradient(self):
        self._optimizer.step()
        self._optimizer.zero_grad()

    def train(self, loader):
        for data in loader:
            self.compute_loss_gradient(data)
            torch.nn.utils.clip_grad_norm_(self._model.parameters(), 35)
            self.apply_gradient()

    def backward(self, total_loss, optimizer):
        total_loss.backward()

    def override_backward(self, fn):
        self.backward = types.MethodType(fn, self)
''',
        codes=("APX102", "APX220"),
    ),
]


REPOSITORY_EXAMPLES.append(
    Example(
        # jiant's shape: the helper scales each chunk's loss and clips amp.master_params right
        # after, and a runner without apex.amp calls it once per chunk before one step: apex
        # unscaled at every backward, a GradScaler unscales once a step, so no native rewrite
        # keeps those clips; both apex files say so (``clip_loop_notes``)
        "clipping-after-each-scaled-backward-called-per-chunk-keeps-the-shim",
        before='''\
# file: setup.py
def fp16ize(model, optimizer, opt_level):
    from apex import amp

    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    return model, optimizer
# file: backprop.py
import torch


def complex_backpropagate(loss, optimizer, model, fp16, accumulation, max_grad_norm):
    loss = loss / accumulation
    if fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_grad_norm)
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    return loss
# file: runner.py
from backprop import complex_backpropagate


class Runner:
    def __init__(self, model, optimizer, fp16, accumulation):
        self.model, self.optimizer = model, optimizer
        self.fp16, self.accumulation = fp16, accumulation

    def backpropagate(self, loss):
        return complex_backpropagate(loss, self.optimizer, self.model, self.fp16, self.accumulation, 1.0)

    def train_step(self, chunks):
        for x, y in chunks:
            loss = ((self.model(x) - y) ** 2).mean()
            self.backpropagate(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
# file: run.py
from runner import Runner
from setup import fp16ize


def main(model, optimizer, args, batches):
    if args.fp16:
        model, optimizer = fp16ize(model, optimizer, args.opt_level)
    runner = Runner(model, optimizer, args.fp16, args.accumulation)
    for chunks in batches:
        runner.train_step(chunks)
''',
        after='''\
# file: setup.py
def fp16ize(model, optimizer, opt_level):
    from apexcompat import amp

    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in backprop.py
    #   (complex_backpropagate), reached through run.py (main), which is called from no
    #   file: the GradScaler cannot reach it; complex_backpropagate() clips
    #   amp.master_params after each backward it scales (backprop.py:11) and train_step() in
    #   runner.py (line 15, through backpropagate()) may run it several times before one
    #   step: apex unscaled the gradients at every backward, a GradScaler unscales them once
    #   a step, so those clips cannot be kept; nor can a module-level GradScaler stand in
    #   (the GradScaler plan across files was dropped: in backprop.py,
    #   complex_backpropagate() also runs a plain backward: whether its test is the switch
    #   of the GradScaler the initializing module makes is not followed, and a plain
    #   backward stepped through an enabled GradScaler would have its gradients divided by
    #   the loss scale (no step of its optimizers follows it)); this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    return model, optimizer
# file: backprop.py
import torch


def complex_backpropagate(loss, optimizer, model, fp16, accumulation, max_grad_norm):
    loss = loss / accumulation
    if fp16:
        from apexcompat import amp

        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (complex_backpropagate is called only from runner.py:10 (Runner),
        #   where no GradScaler exists; complex_backpropagate() clips amp.master_params after
        #   each backward it scales (backprop.py:11) and train_step() in runner.py (line 15,
        #   through backpropagate()) may run it several times before one step: apex unscaled the
        #   gradients at every backward, a GradScaler unscales them once a step, so those clips
        #   cannot be kept; nor can a module-level GradScaler stand in (the GradScaler plan
        #   across files was dropped: in backprop.py, complex_backpropagate() also runs a plain
        #   backward: whether its test is the switch of the GradScaler the initializing module
        #   makes is not followed, and a plain backward stepped through an enabled GradScaler
        #   would have its gradients divided by the loss scale (no step of its optimizers
        #   follows it))); this file keeps apex.amp semantics through apexcompat.amp, migrate it
        #   by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_grad_norm)
    else:
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    return loss
# file: runner.py
from backprop import complex_backpropagate


class Runner:
    def __init__(self, model, optimizer, fp16, accumulation):
        self.model, self.optimizer = model, optimizer
        self.fp16, self.accumulation = fp16, accumulation

    def backpropagate(self, loss):
        return complex_backpropagate(loss, self.optimizer, self.model, self.fp16, self.accumulation, 1.0)

    def train_step(self, chunks):
        for x, y in chunks:
            loss = ((self.model(x) - y) ** 2).mean()
            self.backpropagate(loss)
        self.optimizer.step()
        self.optimizer.zero_grad()
# file: run.py
from runner import Runner
from setup import fp16ize


def main(model, optimizer, args, batches):
    if args.fp16:
        model, optimizer = fp16ize(model, optimizer, args.opt_level)
    runner = Runner(model, optimizer, args.fp16, args.accumulation)
    for chunks in batches:
        runner.train_step(chunks)
''',
        codes=("APX102", "APX220"),
    )
)



#: DeepDeblur's shape: an optimizer holder (``Optimizer``) owns the generator's and the
#: discriminator's optimizers and initializes apex for them in a method the launcher calls only
#: when amp is on; a trainer gets the holder from a launcher without apex and a loss class built
#: by name at run time keeps it too, each scaling through one of its optimizers
#: (``self.optimizer.G``, ``self.optimizer.D``); the holder builds them through a class nested in
#: its ``__init__``, whose own ``self.args = args`` is another object's
HELD_OPTIMIZERS = """\
# file: main.py
from loss import Loss
from optim import Optimizer
from train import Trainer


def main(args, model, loader):
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model, optimizer)
    Trainer(args, model, criterion, optimizer).train(loader)
# file: optim.py
import torch

try:
    from apex import amp
except ImportError:
    pass


class Optimizer:
    def __init__(self, args, model):
        self.args = args

        def _get_optimizer(net):
            class _Optimizer(torch.optim.SGD):
                def __init__(self, params, args):
                    super().__init__(params, lr=0.1)
                    self.args = args

            return _Optimizer(net.parameters(), args)

        self.G = _get_optimizer(model.G)
        self.D = _get_optimizer(model.D)

    def set_amp(self, model):
        if not self.args.amp:
            return model
        model, [self.G, self.D] = amp.initialize(model, [self.G, self.D], opt_level="O1")
        return model

    def step(self):
        self.G.step()

    def amp_state(self):
        return amp.state_dict()

    def load_amp(self, state):
        amp.load_state_dict(state)
# file: train.py
try:
    from apex import amp
except ImportError:
    pass


class Trainer:
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train(self, loader):
        for x, y in loader:
            self.optimizer.G.zero_grad()
            output = self.model(x)
            loss = self.criterion(output, y)
            if self.args.amp:
                with amp.scale_loss(loss, self.optimizer.G) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
# file: loss/__init__.py
from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv = getattr(import_module("loss.adversarial"), "Adversarial")(args, model, optimizer)

    def forward(self, output, target):
        return self.mse(output, target) + 0.01 * self.adv(output, target)
# file: loss/adversarial.py
import torch
import torch.nn as nn

try:
    from apex import amp
except ImportError:
    pass


class Adversarial(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real):
        self.optimizer.D.zero_grad()
        d_fake = self.model.D(fake.detach())
        d_real = self.model.D(real)
        loss_d = self.bce(d_fake, torch.zeros_like(d_fake)) + self.bce(d_real, torch.ones_like(d_real))
        if self.args.amp:
            with amp.scale_loss(loss_d, self.optimizer.D) as scaled_loss_d:
                scaled_loss_d.backward()
        else:
            loss_d.backward()
        self.optimizer.D.step()
        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, torch.ones_like(d_fake_bp))
"""

REPOSITORY_EXAMPLES += [
    Example(
        # no call chain hands those classes a GradScaler, but each reaches the object that
        # initialized apex: the GradScaler is its attribute (created disabled in its __init__,
        # replaced where amp.initialize was, APX258), read as self.optimizer.scaler; the
        # holder's step() only steps G, so the trainer's self.optimizer.step() becomes the
        # scaler's step of self.optimizer.G (before: all three files on the shim)
        "sites-reach-the-scaler-on-the-object-that-holds-the-optimizers",
        before=HELD_OPTIMIZERS,
        after='''\
# file: main.py
from loss import Loss
from optim import Optimizer
from train import Trainer


def main(args, model, loader):
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model, optimizer)
    Trainer(args, model, criterion, optimizer).train(loader)
# file: optim.py
import torch


def load_scaler_state(scaler, state):
    """Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    """
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


class Optimizer:
    def __init__(self, args, model):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.args = args

        def _get_optimizer(net):
            class _Optimizer(torch.optim.SGD):
                def __init__(self, params, args):
                    super().__init__(params, lr=0.1)
                    self.args = args

            return _Optimizer(net.parameters(), args)

        self.G = _get_optimizer(model.G)
        self.D = _get_optimizer(model.D)

    def set_amp(self, model):
        if not self.args.amp:
            return model
        self.scaler = torch.amp.GradScaler("cuda")
        return model

    def step(self):
        self.G.step()

    def amp_state(self):
        return self.scaler.state_dict()

    def load_amp(self, state):
        load_scaler_state(self.scaler, state)
# file: train.py
import torch


class Trainer:
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train(self, loader):
        for x, y in loader:
            self.optimizer.G.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.optimizer.scaler.is_enabled()):
                output = self.model(x)
                loss = self.criterion(output, y)
            self.optimizer.scaler.scale(loss).backward()
            self.optimizer.scaler.step(self.optimizer.G)
            self.optimizer.scaler.update()
# file: loss/__init__.py
from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv = getattr(import_module("loss.adversarial"), "Adversarial")(args, model, optimizer)

    def forward(self, output, target):
        return self.mse(output, target) + 0.01 * self.adv(output, target)
# file: loss/adversarial.py
import torch
import torch.nn as nn


class Adversarial(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real):
        self.optimizer.D.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.optimizer.scaler.is_enabled()):
            d_fake = self.model.D(fake.detach())
            d_real = self.model.D(real)
            loss_d = self.bce(d_fake, torch.zeros_like(d_fake)) + self.bce(d_real, torch.ones_like(d_real))
        self.optimizer.scaler.scale(loss_d).backward()
        self.optimizer.scaler.step(self.optimizer.D)
        self.optimizer.scaler.update()
        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, torch.ones_like(d_fake_bp))
''',
        codes=('APX101', 'APX103', 'APX201', 'APX209', 'APX258', 'APX301', 'APX311', 'APX316', 'APX401', 'APX402'),
    ),
    Example(
        # another class keeps a .G on its instances: which object the trainer's
        # self.optimizer is, is not proven, and one site on the shim keeps them all there
        "held-optimizer-route-refused-when-another-class-keeps-the-attribute",
        before="""\
# file: main.py
from loss import Loss
from optim import Optimizer
from train import Trainer


def main(args, model, loader):
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model, optimizer)
    Trainer(args, model, criterion, optimizer).train(loader)
# file: optim.py
import torch

try:
    from apex import amp
except ImportError:
    pass


class Optimizer:
    def __init__(self, args, model):
        self.args = args
        self.G = torch.optim.SGD(model.G.parameters(), lr=0.1)
        self.D = torch.optim.SGD(model.D.parameters(), lr=0.1)

    def set_amp(self, model):
        if not self.args.amp:
            return model
        model, [self.G, self.D] = amp.initialize(model, [self.G, self.D], opt_level="O1")
        return model

    def step(self):
        self.G.step()

    def amp_state(self):
        return amp.state_dict()

    def load_amp(self, state):
        amp.load_state_dict(state)
# file: ema.py
class Averager:
    def __init__(self, G):
        self.G = G
# file: train.py
try:
    from apex import amp
except ImportError:
    pass


class Trainer:
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train(self, loader):
        for x, y in loader:
            self.optimizer.G.zero_grad()
            output = self.model(x)
            loss = self.criterion(output, y)
            if self.args.amp:
                with amp.scale_loss(loss, self.optimizer.G) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
# file: loss/__init__.py
from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv = getattr(import_module("loss.adversarial"), "Adversarial")(args, model, optimizer)

    def forward(self, output, target):
        return self.mse(output, target) + 0.01 * self.adv(output, target)
# file: loss/adversarial.py
import torch
import torch.nn as nn

try:
    from apex import amp
except ImportError:
    pass


class Adversarial(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real):
        self.optimizer.D.zero_grad()
        d_fake = self.model.D(fake.detach())
        d_real = self.model.D(real)
        loss_d = self.bce(d_fake, torch.zeros_like(d_fake)) + self.bce(d_real, torch.ones_like(d_real))
        if self.args.amp:
            with amp.scale_loss(loss_d, self.optimizer.D) as scaled_loss_d:
                scaled_loss_d.backward()
        else:
            loss_d.backward()
        self.optimizer.D.step()
        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, torch.ones_like(d_fake_bp))
""",
        after="""\
# file: main.py
from loss import Loss
from optim import Optimizer
from train import Trainer


def main(args, model, loader):
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model, optimizer)
    Trainer(args, model, criterion, optimizer).train(loader)
# file: optim.py
import torch

try:
    from apexcompat import amp
except ImportError:
    pass


class Optimizer:
    def __init__(self, args, model):
        self.args = args
        self.G = torch.optim.SGD(model.G.parameters(), lr=0.1)
        self.D = torch.optim.SGD(model.D.parameters(), lr=0.1)

    def set_amp(self, model):
        if not self.args.amp:
            return model
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in optim.py
        #   (Optimizer), reached through main.py (main), which is called from no file: the
        #   GradScaler cannot reach it; nor can a module-level GradScaler stand in:
        #   loss/adversarial.py uses apex.amp too, and cannot import optim.py under one dotted
        #   name; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        model, [self.G, self.D] = amp.initialize(model, [self.G, self.D], opt_level="O1")
        return model

    def step(self):
        self.G.step()

    def amp_state(self):
        return amp.state_dict()

    def load_amp(self, state):
        amp.load_state_dict(state)
# file: ema.py
class Averager:
    def __init__(self, G):
        self.G = G
# file: train.py
try:
    from apexcompat import amp
except ImportError:
    pass


class Trainer:
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train(self, loader):
        for x, y in loader:
            self.optimizer.G.zero_grad()
            output = self.model(x)
            loss = self.criterion(output, y)
            if self.args.amp:
                # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
                #   amp.scale_loss (Trainer scales through the optimizers Optimizer.set_amp() of
                #   optim.py initializes, but Averager in ema.py also keeps a .G on its instances, so
                #   which object holds the optimizer is not proven); this file keeps apex.amp semantics
                #   through apexcompat.amp, migrate it by hand
                with amp.scale_loss(loss, self.optimizer.G) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
# file: loss/__init__.py
from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv = getattr(import_module("loss.adversarial"), "Adversarial")(args, model, optimizer)

    def forward(self, output, target):
        return self.mse(output, target) + 0.01 * self.adv(output, target)
# file: loss/adversarial.py
import torch
import torch.nn as nn

try:
    from apexcompat import amp
except ImportError:
    pass


class Adversarial(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real):
        self.optimizer.D.zero_grad()
        d_fake = self.model.D(fake.detach())
        d_real = self.model.D(real)
        loss_d = self.bce(d_fake, torch.zeros_like(d_fake)) + self.bce(d_real, torch.ones_like(d_real))
        if self.args.amp:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Trainer scales through the optimizers Optimizer.set_amp() of
            #   optim.py initializes, but Averager in ema.py also keeps a .G on its instances, so
            #   which object holds the optimizer is not proven); this file keeps apex.amp semantics
            #   through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss_d, self.optimizer.D) as scaled_loss_d:
                scaled_loss_d.backward()
        else:
            loss_d.backward()
        self.optimizer.D.step()
        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, torch.ones_like(d_fake_bp))
""",
        codes=('APX102', 'APX220'),
    ),
    Example(
        # the trainer's scale_loss is switched by self.args.fp16, the initialize by
        # self.args.amp: a plain backward while the GradScaler is enabled would step gradients
        # it never scaled, so the route is refused
        "held-optimizer-route-refused-when-a-site-has-another-switch",
        before="""\
# file: main.py
from loss import Loss
from optim import Optimizer
from train import Trainer


def main(args, model, loader):
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model, optimizer)
    Trainer(args, model, criterion, optimizer).train(loader)
# file: optim.py
import torch

try:
    from apex import amp
except ImportError:
    pass


class Optimizer:
    def __init__(self, args, model):
        self.args = args
        self.G = torch.optim.SGD(model.G.parameters(), lr=0.1)
        self.D = torch.optim.SGD(model.D.parameters(), lr=0.1)

    def set_amp(self, model):
        if not self.args.amp:
            return model
        model, [self.G, self.D] = amp.initialize(model, [self.G, self.D], opt_level="O1")
        return model

    def step(self):
        self.G.step()

    def amp_state(self):
        return amp.state_dict()

    def load_amp(self, state):
        amp.load_state_dict(state)
# file: train.py
try:
    from apex import amp
except ImportError:
    pass


class Trainer:
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train(self, loader):
        for x, y in loader:
            self.optimizer.G.zero_grad()
            output = self.model(x)
            loss = self.criterion(output, y)
            if self.args.fp16:
                with amp.scale_loss(loss, self.optimizer.G) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
# file: loss/__init__.py
from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv = getattr(import_module("loss.adversarial"), "Adversarial")(args, model, optimizer)

    def forward(self, output, target):
        return self.mse(output, target) + 0.01 * self.adv(output, target)
# file: loss/adversarial.py
import torch
import torch.nn as nn

try:
    from apex import amp
except ImportError:
    pass


class Adversarial(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real):
        self.optimizer.D.zero_grad()
        d_fake = self.model.D(fake.detach())
        d_real = self.model.D(real)
        loss_d = self.bce(d_fake, torch.zeros_like(d_fake)) + self.bce(d_real, torch.ones_like(d_real))
        if self.args.amp:
            with amp.scale_loss(loss_d, self.optimizer.D) as scaled_loss_d:
                scaled_loss_d.backward()
        else:
            loss_d.backward()
        self.optimizer.D.step()
        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, torch.ones_like(d_fake_bp))
""",
        after="""\
# file: main.py
from loss import Loss
from optim import Optimizer
from train import Trainer


def main(args, model, loader):
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model, optimizer)
    Trainer(args, model, criterion, optimizer).train(loader)
# file: optim.py
import torch

try:
    from apexcompat import amp
except ImportError:
    pass


class Optimizer:
    def __init__(self, args, model):
        self.args = args
        self.G = torch.optim.SGD(model.G.parameters(), lr=0.1)
        self.D = torch.optim.SGD(model.D.parameters(), lr=0.1)

    def set_amp(self, model):
        if not self.args.amp:
            return model
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in optim.py
        #   (Optimizer), reached through main.py (main), which is called from no file: the
        #   GradScaler cannot reach it; nor can a module-level GradScaler stand in:
        #   loss/adversarial.py uses apex.amp too, and cannot import optim.py under one dotted
        #   name; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        model, [self.G, self.D] = amp.initialize(model, [self.G, self.D], opt_level="O1")
        return model

    def step(self):
        self.G.step()

    def amp_state(self):
        return amp.state_dict()

    def load_amp(self, state):
        amp.load_state_dict(state)
# file: train.py
try:
    from apexcompat import amp
except ImportError:
    pass


class Trainer:
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train(self, loader):
        for x, y in loader:
            self.optimizer.G.zero_grad()
            output = self.model(x)
            loss = self.criterion(output, y)
            if self.args.fp16:
                # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
                #   amp.scale_loss (Trainer scales through the optimizers Optimizer.set_amp() of
                #   optim.py initializes, but the amp.scale_loss at train.py:20 is switched by
                #   `self.args.fp16`, which does not switch every amp.initialize the same way); this
                #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
                with amp.scale_loss(loss, self.optimizer.G) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
# file: loss/__init__.py
from importlib import import_module

import torch.nn as nn


class Loss(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.mse = nn.MSELoss()
        self.adv = getattr(import_module("loss.adversarial"), "Adversarial")(args, model, optimizer)

    def forward(self, output, target):
        return self.mse(output, target) + 0.01 * self.adv(output, target)
# file: loss/adversarial.py
import torch
import torch.nn as nn

try:
    from apexcompat import amp
except ImportError:
    pass


class Adversarial(nn.Module):
    def __init__(self, args, model, optimizer):
        super().__init__()
        self.args = args
        self.model = model
        self.optimizer = optimizer
        self.bce = nn.BCEWithLogitsLoss()

    def forward(self, fake, real):
        self.optimizer.D.zero_grad()
        d_fake = self.model.D(fake.detach())
        d_real = self.model.D(real)
        loss_d = self.bce(d_fake, torch.zeros_like(d_fake)) + self.bce(d_real, torch.ones_like(d_real))
        if self.args.amp:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Trainer scales through the optimizers Optimizer.set_amp() of
            #   optim.py initializes, but the amp.scale_loss at train.py:20 is switched by
            #   `self.args.fp16`, which does not switch every amp.initialize the same way); this
            #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss_d, self.optimizer.D) as scaled_loss_d:
                scaled_loss_d.backward()
        else:
            loss_d.backward()
        self.optimizer.D.step()
        d_fake_bp = self.model.D(fake)
        return self.bce(d_fake_bp, torch.ones_like(d_fake_bp))
""",
        codes=('APX102', 'APX220'),
    ),
]


#: imaginaire's shape (the reader route, APX252): one module initializes apex for two networks
#: (num_losses=2) in a function the launcher calls; the base trainer of another module scales
#: each loss under its own loss id and steps, its abstract forward methods are overridden in a
#: file without apex, and the trainer class is picked by a module name at run time, so no call
#: chain reaches it; a meter of a third module undoes a loss id's scale
READER_LIBRARY = '''\
# file: setup_nets.py
import torch
from apex import amp


def build(cfg, net_G, net_D):
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    [net_G, net_D], [opt_G, opt_D] = amp.initialize(
        [net_G, net_D], [opt_G, opt_D], opt_level=cfg.opt_level, num_losses=2
    )
    return net_G, net_D, opt_G, opt_D
# file: trainer.py
import torch
from apex import amp

from meters import unscaled_norm


class BaseTrainer:
    def __init__(self, net_G, net_D, opt_G, opt_D):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.norm = 0.0

    def gen_update(self, data):
        self.opt_G.zero_grad()
        loss = self.gen_forward(data)
        with amp.scale_loss(loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
            self.norm = unscaled_norm(self.net_G, 0)
        self.opt_G.step()

    def dis_update(self, data):
        self.opt_D.zero_grad()
        loss = self.dis_forward(data)
        with amp.scale_loss(loss, self.opt_D, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        self.opt_D.step()

    def gen_forward(self, data):
        raise NotImplementedError

    def dis_forward(self, data):
        raise NotImplementedError

    def state(self):
        return {"G": self.net_G.state_dict(), "amp": amp.state_dict()}

    def restore(self, checkpoint):
        self.net_G.load_state_dict(checkpoint["G"])
        amp.load_state_dict(checkpoint["amp"])
# file: meters.py
import torch
from apex import amp


@torch.no_grad()
def unscaled_norm(net, loss_id):
    norms = [p.grad.norm() for p in net.parameters() if p.grad is not None]
    return torch.stack(norms).norm().item() / amp._amp_state.loss_scalers[loss_id].loss_scale()
# file: pix2pix.py
import torch.nn.functional as F

from trainer import BaseTrainer


class Trainer(BaseTrainer):
    def gen_forward(self, data):
        x, y = data
        return F.mse_loss(self.net_G(x), y)

    def dis_forward(self, data):
        x, y = data
        return F.softplus(self.net_D(self.net_G(x).detach())).mean() + F.softplus(-self.net_D(y)).mean()
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D)
    for batch in data:
        trainer.dis_update(batch)
        trainer.gen_update(batch)
'''

#: what the reader route makes of READER_LIBRARY (APX252)
READER_LIBRARY_AFTER = '''\
# file: setup_nets.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


def build(cfg, net_G, net_D):
    global grad_scalers
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    use_amp = cfg.opt_level != "O0"
    grad_scalers = [torch.amp.GradScaler(next((p.device.type for p in net_G.parameters()), "cuda") if use_amp else "cuda", enabled=use_amp) for _ in range(2)]
    return net_G, net_D, opt_G, opt_D
# file: trainer.py
import torch

from meters import unscaled_norm
import setup_nets


def load_scaler_state(scaler, state):
    """Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    """
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


def load_scaler_states(scalers, state):
    """Restore one GradScaler per apex loss id: from the list of their states, or from
    apex.amp's ``{"loss_scaler0": ..., "loss_scaler1": ...}`` (one entry per loss id).
    """
    for loss_id, scaler in enumerate(scalers):
        if isinstance(state, dict):
            load_scaler_state(scaler, {"loss_scaler0": state[f"loss_scaler{loss_id}"]})
        else:
            load_scaler_state(scaler, state[loss_id])


class BaseTrainer:
    def __init__(self, net_G, net_D, opt_G, opt_D):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.norm = 0.0

    def gen_update(self, data):
        self.opt_G.zero_grad()
        with torch.autocast(next((p.device.type for g in self.opt_G.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
            loss = self.gen_forward(data)
        setup_nets.grad_scalers[0].scale(loss).backward()
        self.norm = unscaled_norm(self.net_G, 0)
        setup_nets.grad_scalers[0].step(self.opt_G)
        setup_nets.grad_scalers[0].update()

    def dis_update(self, data):
        self.opt_D.zero_grad()
        with torch.autocast(next((p.device.type for g in self.opt_D.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
            loss = self.dis_forward(data)
        setup_nets.grad_scalers[1].scale(loss).backward()
        setup_nets.grad_scalers[1].step(self.opt_D)
        setup_nets.grad_scalers[1].update()

    def gen_forward(self, data):
        raise NotImplementedError

    def dis_forward(self, data):
        raise NotImplementedError

    def state(self):
        return {"G": self.net_G.state_dict(), "amp": [loss_scaler.state_dict() for loss_scaler in setup_nets.grad_scalers]}

    def restore(self, checkpoint):
        self.net_G.load_state_dict(checkpoint["G"])
        load_scaler_states(setup_nets.grad_scalers, checkpoint["amp"])
# file: meters.py
import torch
import setup_nets


@torch.no_grad()
def unscaled_norm(net, loss_id):
    norms = [p.grad.norm() for p in net.parameters() if p.grad is not None]
    return torch.stack(norms).norm().item() / setup_nets.grad_scalers[loss_id].get_scale()
# file: pix2pix.py
import torch.nn.functional as F

from trainer import BaseTrainer


class Trainer(BaseTrainer):
    def gen_forward(self, data):
        x, y = data
        return F.mse_loss(self.net_G(x), y)

    def dis_forward(self, data):
        x, y = data
        return F.softplus(self.net_D(self.net_G(x).detach())).mean() + F.softplus(-self.net_D(y)).mean()
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D)
    for batch in data:
        trainer.dis_update(batch)
        trainer.gen_update(batch)
'''

REPOSITORY_EXAMPLES += [
    Example(
        # apex's loss scalers were per process: the initializing module keeps one GradScaler per
        # loss id in a module-level variable, assigned where amp.initialize was; the trainer and
        # the meter import that module and read it through it when they run (never a copy of
        # None); autocast wraps the call of the abstract forward method the subclass overrides
        "module-level-grad-scalers-read-through-the-initializing-module",
        before=READER_LIBRARY,
        after=READER_LIBRARY_AFTER,
        codes=('APX101', 'APX201', 'APX202', 'APX203', 'APX209', 'APX252', 'APX301', 'APX311', 'APX401', 'APX402', 'APX506'),
    ),
    Example(
        # ... where the initializing module imports the meter itself: an import added at the
        # meter's top could run while the initializing module is half made (the meter imported
        # first), so the meter's function imports it when it runs, where the cycle cannot break
        "module-level-grad-scalers-imported-where-read-when-the-initializing-module-imports-the-reader",
        before=READER_LIBRARY.replace(
            "from apex import amp\n\n\ndef build(", "from apex import amp\n\nfrom meters import unscaled_norm\n\n\ndef build("
        ),
        after=READER_LIBRARY_AFTER.replace(
            "# file: setup_nets.py\nimport torch\n\n\n",
            "# file: setup_nets.py\nimport torch\n\nfrom meters import unscaled_norm\n\n\n",
        ).replace(
            "# file: meters.py\nimport torch\nimport setup_nets\n\n\n@torch.no_grad()\ndef unscaled_norm(net, loss_id):\n",
            "# file: meters.py\nimport torch\n\n\n@torch.no_grad()\ndef unscaled_norm(net, loss_id):\n    import setup_nets\n",
        ),
        codes=('APX101', 'APX201', 'APX202', 'APX203', 'APX209', 'APX252', 'APX301', 'APX311', 'APX401', 'APX402', 'APX506'),
    ),
    Example(
        # ... where the reading function starts with a comment on its first statement: the
        # import goes first, above that comment, which stays on the statement it describes
        "module-level-grad-scalers-imported-where-read-above-the-first-statements-comment",
        before=READER_LIBRARY.replace(
            "from apex import amp\n\n\ndef build(", "from apex import amp\n\nfrom meters import unscaled_norm\n\n\ndef build("
        ).replace("    norms = [p.grad", "    # the gradients' norms, still scaled\n    norms = [p.grad"),
        after=READER_LIBRARY_AFTER.replace(
            "# file: setup_nets.py\nimport torch\n\n\n",
            "# file: setup_nets.py\nimport torch\n\nfrom meters import unscaled_norm\n\n\n",
        ).replace(
            "# file: meters.py\nimport torch\nimport setup_nets\n\n\n@torch.no_grad()\ndef unscaled_norm(net, loss_id):\n",
            "# file: meters.py\nimport torch\n\n\n@torch.no_grad()\ndef unscaled_norm(net, loss_id):\n    import setup_nets\n"
            "    # the gradients' norms, still scaled\n",
        ),
        codes=('APX101', 'APX201', 'APX202', 'APX203', 'APX209', 'APX252', 'APX301', 'APX311', 'APX401', 'APX402', 'APX506'),
    ),
]


#: mmgeneration's shape (the reader route, APX252): the home initializes apex for a GAN with
#: its options (num_losses too) in a ``**`` dict, under ``if mode == "gan":`` whose branch
#: returns, beside ``amp = None`` when apex is missing; the registry-built model scales each loss
#: on the apex branch of an if-chain beside the runner's own loss_scaler and a plain backward, and
#: steps its dict's optimizers in the ``else`` of a second chain; a regularizer reads loss
#: scaler 0's scale; the runner keeps amp's state
READER_REGISTRY_GAN = '''\
# file: amp_setup.py
try:
    from apex import amp
except ImportError:
    amp = None


def apex_amp_initialize(models, optimizers, init_args=None, mode="gan"):
    init_args = init_args or dict()
    if mode == "gan":
        _optimizers = [optimizers["generator"], optimizers["discriminator"]]
        models, _optimizers = amp.initialize(models, _optimizers, **init_args)
        optimizers["generator"] = _optimizers[0]
        optimizers["discriminator"] = _optimizers[1]
        return models, optimizers
    else:
        raise NotImplementedError(mode)
# file: runner.py
import torch


class Runner:
    def __init__(self, model, optimizer, use_apex_amp=False):
        self.model, self.optimizer, self.use_apex_amp = model, optimizer, use_apex_amp

    def train(self, batches):
        for batch in batches:
            self.model.train_step(batch, self.optimizer, use_apex_amp=self.use_apex_amp)

    def save(self, path):
        state = {"model": self.model.state_dict()}
        if self.use_apex_amp:
            from apex import amp
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if self.use_apex_amp:
            from apex import amp
            amp.load_state_dict(state["amp"])
# file: gan.py
import torch.nn as nn
import torch.nn.functional as F

from registry import MODELS


@MODELS.register_module()
class GAN(nn.Module):
    def train_step(self, batch, optimizer, loss_scaler=None, use_apex_amp=False):
        optimizer["discriminator"].zero_grad()
        loss_disc = F.softplus(-self.discriminator(batch)).mean()
        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        elif use_apex_amp:
            from apex import amp
            with amp.scale_loss(loss_disc, optimizer["discriminator"], loss_id=0) as scaled_loss_disc:
                scaled_loss_disc.backward()
        else:
            loss_disc.backward()
        if loss_scaler:
            loss_scaler.step(optimizer["discriminator"])
        else:
            optimizer["discriminator"].step()

        optimizer["generator"].zero_grad()
        loss_gen = F.softplus(-self.discriminator(self.generator(batch))).mean()
        if loss_scaler:
            loss_scaler.scale(loss_gen).backward()
        elif use_apex_amp:
            from apex import amp
            with amp.scale_loss(loss_gen, optimizer["generator"], loss_id=1) as scaled_loss_gen:
                scaled_loss_gen.backward()
        else:
            loss_gen.backward()
        if loss_scaler:
            loss_scaler.step(optimizer["generator"])
        else:
            optimizer["generator"].step()
# file: losses.py
from torch import autograd


def r1_penalty(disc, real, use_apex_amp=False):
    real = real.clone().requires_grad_()
    pred = disc(real)
    if use_apex_amp:
        from apex.amp._amp_state import _amp_state
        _loss_scaler = _amp_state.loss_scalers[0]
        pred = _loss_scaler.loss_scale() * pred.float()
    grad = autograd.grad(pred.sum(), real, create_graph=True)[0]
    if use_apex_amp:
        grad = grad / _loss_scaler.loss_scale()
    return grad.pow(2).sum(1).mean()
# file: registry.py
class Registry:
    def __init__(self):
        self.classes = {}

    def register_module(self):
        def register(cls):
            self.classes[cls.__name__] = cls
            return cls
        return register


MODELS = Registry()
# file: apis.py
from amp_setup import apex_amp_initialize
from runner import Runner


def train_model(model, optimizer, cfg, batches):
    use_apex_amp = False
    if cfg.get("apex_amp"):
        model, optimizer = apex_amp_initialize(model, optimizer, **cfg["apex_amp"])
        use_apex_amp = True
    runner = Runner(model, optimizer, use_apex_amp=use_apex_amp)
    runner.train(batches)
'''

REPOSITORY_EXAMPLES += [
    Example(
        # the home's list is sized from init_args when it runs and assigned in the branch of the
        # initialize (code after the if would not run); a plain run leaves it None, so each step
        # takes an ``elif use_apex_amp:`` stepping through loss id i's GradScaler, the plain step
        # kept in the else, and autocast is on once the GradScalers exist and are enabled
        "module-level-grad-scalers-beside-plain-branches-of-a-registry-gan",
        before=READER_REGISTRY_GAN,
        after='''\
# file: amp_setup.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


def apex_amp_initialize(models, optimizers, init_args=None, mode="gan"):
    global grad_scalers
    init_args = init_args or dict()
    if mode == "gan":
        _optimizers = [optimizers["generator"], optimizers["discriminator"]]
        amp_options = dict(init_args)
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        grad_scalers = [torch.amp.GradScaler(next((p.device.type for p in (models[0] if isinstance(models, list) else models).parameters()), "cuda") if use_amp else "cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp) for _ in range(amp_options.get("num_losses", 1))]
        for loss_id_scaler in grad_scalers:
            loss_id_scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
        optimizers["generator"] = _optimizers[0]
        optimizers["discriminator"] = _optimizers[1]
        return models, optimizers
    else:
        raise NotImplementedError(mode)
# file: runner.py
import torch
import amp_setup


def load_scaler_state(scaler, state):
    """Restore ``scaler`` from a checkpoint entry written by GradScaler or by apex.amp.

    apex.amp saved ``{"loss_scaler0": {"loss_scale": ..., "unskipped": ...}}``; a disabled
    GradScaler saves ``{}``, which an enabled one refuses to load, so that is skipped.
    """
    if "loss_scaler0" in state:
        apex_state = state["loss_scaler0"]
        state = dict(scaler.state_dict())
        state.update(scale=float(apex_state["loss_scale"]), _growth_tracker=int(apex_state["unskipped"]))
    if state:
        scaler.load_state_dict(state)


def load_scaler_states(scalers, state):
    """Restore one GradScaler per apex loss id: from the list of their states, or from
    apex.amp's ``{"loss_scaler0": ..., "loss_scaler1": ...}`` (one entry per loss id).
    """
    for loss_id, scaler in enumerate(scalers):
        if isinstance(state, dict):
            load_scaler_state(scaler, {"loss_scaler0": state[f"loss_scaler{loss_id}"]})
        else:
            load_scaler_state(scaler, state[loss_id])


class Runner:
    def __init__(self, model, optimizer, use_apex_amp=False):
        self.model, self.optimizer, self.use_apex_amp = model, optimizer, use_apex_amp

    def train(self, batches):
        for batch in batches:
            self.model.train_step(batch, self.optimizer, use_apex_amp=self.use_apex_amp)

    def save(self, path):
        state = {"model": self.model.state_dict()}
        if self.use_apex_amp:
            state["amp"] = [loss_scaler.state_dict() for loss_scaler in amp_setup.grad_scalers]
        torch.save(state, path)

    def resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if self.use_apex_amp:
            load_scaler_states(amp_setup.grad_scalers, state["amp"])
# file: gan.py
import torch.nn as nn
import torch.nn.functional as F

from registry import MODELS
import amp_setup
import torch


@MODELS.register_module()
class GAN(nn.Module):
    def train_step(self, batch, optimizer, loss_scaler=None, use_apex_amp=False):
        optimizer["discriminator"].zero_grad()
        with torch.autocast(next((p.device.type for g in optimizer["discriminator"].param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=amp_setup.grad_scalers is not None and amp_setup.grad_scalers[0].is_enabled()):
            loss_disc = F.softplus(-self.discriminator(batch)).mean()
        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        elif use_apex_amp:
            amp_setup.grad_scalers[0].scale(loss_disc).backward()
        else:
            loss_disc.backward()
        if loss_scaler:
            loss_scaler.step(optimizer["discriminator"])
        elif use_apex_amp:
            amp_setup.grad_scalers[0].step(optimizer["discriminator"])
            amp_setup.grad_scalers[0].update()
        else:
            optimizer["discriminator"].step()

        optimizer["generator"].zero_grad()
        with torch.autocast(next((p.device.type for g in optimizer["generator"].param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=amp_setup.grad_scalers is not None and amp_setup.grad_scalers[0].is_enabled()):
            loss_gen = F.softplus(-self.discriminator(self.generator(batch))).mean()
        if loss_scaler:
            loss_scaler.scale(loss_gen).backward()
        elif use_apex_amp:
            amp_setup.grad_scalers[1].scale(loss_gen).backward()
        else:
            loss_gen.backward()
        if loss_scaler:
            loss_scaler.step(optimizer["generator"])
        elif use_apex_amp:
            amp_setup.grad_scalers[1].step(optimizer["generator"])
            amp_setup.grad_scalers[1].update()
        else:
            optimizer["generator"].step()
# file: losses.py
from torch import autograd
import amp_setup


def r1_penalty(disc, real, use_apex_amp=False):
    real = real.clone().requires_grad_()
    pred = disc(real)
    if use_apex_amp:
        pred = amp_setup.grad_scalers[0].get_scale() * pred.float()
    grad = autograd.grad(pred.sum(), real, create_graph=True)[0]
    if use_apex_amp:
        grad = grad / amp_setup.grad_scalers[0].get_scale()
    return grad.pow(2).sum(1).mean()
# file: registry.py
class Registry:
    def __init__(self):
        self.classes = {}

    def register_module(self):
        def register(cls):
            self.classes[cls.__name__] = cls
            return cls
        return register


MODELS = Registry()
# file: apis.py
from amp_setup import apex_amp_initialize
from runner import Runner


def train_model(model, optimizer, cfg, batches):
    use_apex_amp = False
    if cfg.get("apex_amp"):
        model, optimizer = apex_amp_initialize(model, optimizer, **cfg["apex_amp"])
        use_apex_amp = True
    runner = Runner(model, optimizer, use_apex_amp=use_apex_amp)
    runner.train(batches)
''',
        codes=("APX101", "APX103", "APX201", "APX202", "APX204", "APX209", "APX252", "APX301", "APX311", "APX401",
               "APX402", "APX506"),
    ),
    Example(
        # the step's chain tests ``loss_scaler is not None``, the scaling chain ``loss_scaler``:
        # which runs reach the plain step is not told, so the files keep apex.amp
        "module-level-grad-scalers-refused-where-the-step-chain-tests-otherwise",
        before=READER_REGISTRY_GAN.replace(
            '''        if loss_scaler:
            loss_scaler.step(optimizer["generator"])''',
            '''        if loss_scaler is not None:
            loss_scaler.step(optimizer["generator"])''',
        ),
        after='''\
# file: amp_setup.py
try:
    from apexcompat import amp
except ImportError:
    amp = None


def apex_amp_initialize(models, optimizers, init_args=None, mode="gan"):
    init_args = init_args or dict()
    if mode == "gan":
        _optimizers = [optimizers["generator"], optimizers["discriminator"]]
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in Runner() of
        #   runner.py, called from apis.py (train_model), a file without apex.amp that calls
        #   this model factory too; it cannot hand the GradScaler on: GAN of gan.py uses amp
        #   too, and apis.py (train_model), which would hand the GradScaler on, does not call
        #   it; nor can a module-level GradScaler stand in (the GradScaler plan across files was
        #   dropped: in gan.py, train_step() also runs a plain backward: whether its test is the
        #   switch of the GradScaler the initializing module makes is not followed, and a plain
        #   backward stepped through an enabled GradScaler would have its gradients divided by
        #   the loss scale (optimizer["generator"].step(): its if-chain does not test what the
        #   scaled backward's if-chain tests before the scaling branch)); this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        models, _optimizers = amp.initialize(models, _optimizers, **init_args)
        optimizers["generator"] = _optimizers[0]
        optimizers["discriminator"] = _optimizers[1]
        return models, optimizers
    else:
        raise NotImplementedError(mode)
# file: runner.py
import torch


class Runner:
    def __init__(self, model, optimizer, use_apex_amp=False):
        self.model, self.optimizer, self.use_apex_amp = model, optimizer, use_apex_amp

    def train(self, batches):
        for batch in batches:
            self.model.train_step(batch, self.optimizer, use_apex_amp=self.use_apex_amp)

    def save(self, path):
        state = {"model": self.model.state_dict()}
        if self.use_apex_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.state_dict() needs the GradScaler that replaces amp.initialize,
            #   which is created in another file and cannot reach this line (Runner is called from
            #   apis.py (train_model), a file without apex.amp that gets the model from the factory
            #   in amp_setup.py, and it cannot hand the GradScaler on: GAN of gan.py uses amp too,
            #   and apis.py (train_model), which would hand the GradScaler on, does not call it; nor
            #   can a module-level GradScaler stand in (the GradScaler plan across files was
            #   dropped: in gan.py, train_step() also runs a plain backward: whether its test is the
            #   switch of the GradScaler the initializing module makes is not followed, and a plain
            #   backward stepped through an enabled GradScaler would have its gradients divided by
            #   the loss scale (optimizer["generator"].step(): its if-chain does not test what the
            #   scaled backward's if-chain tests before the scaling branch))): pass that scaler here
            #   and call `scaler.state_dict()` instead. apexcompat.amp's state is set up only by its
            #   own amp.initialize, so this line fails once that file is migrated
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def resume(self, path):
        state = torch.load(path)
        self.model.load_state_dict(state["model"])
        if self.use_apex_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.load_state_dict(state["amp"]) needs the GradScaler that replaces
            #   amp.initialize, which is created in another file and cannot reach this line (Runner
            #   is called from apis.py (train_model), a file without apex.amp that gets the model
            #   from the factory in amp_setup.py, and it cannot hand the GradScaler on: GAN of
            #   gan.py uses amp too, and apis.py (train_model), which would hand the GradScaler on,
            #   does not call it; nor can a module-level GradScaler stand in (the GradScaler plan
            #   across files was dropped: in gan.py, train_step() also runs a plain backward:
            #   whether its test is the switch of the GradScaler the initializing module makes is
            #   not followed, and a plain backward stepped through an enabled GradScaler would have
            #   its gradients divided by the loss scale (optimizer["generator"].step(): its if-chain
            #   does not test what the scaled backward's if-chain tests before the scaling
            #   branch))): pass that scaler here and call `scaler.load_state_dict(state["amp"])`
            #   instead (a checkpoint apex wrote holds {"loss_scaler0": {"loss_scale": s,
            #   "unskipped": n}}: put scale=s, _growth_tracker=n into scaler.state_dict() and load
            #   that). apexcompat.amp's state is set up only by its own amp.initialize, so this line
            #   fails once that file is migrated
            amp.load_state_dict(state["amp"])
# file: gan.py
import torch.nn as nn
import torch.nn.functional as F

from registry import MODELS


@MODELS.register_module()
class GAN(nn.Module):
    def train_step(self, batch, optimizer, loss_scaler=None, use_apex_amp=False):
        optimizer["discriminator"].zero_grad()
        loss_disc = F.softplus(-self.discriminator(batch)).mean()
        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        elif use_apex_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (GAN is handed to its decorator @MODELS.register_module(), which may
            #   keep it to build it by name, never called directly, so the GradScaler cannot follow
            #   its callers; nor can a module-level GradScaler stand in (the GradScaler plan across
            #   files was dropped: in gan.py, train_step() also runs a plain backward: whether its
            #   test is the switch of the GradScaler the initializing module makes is not followed,
            #   and a plain backward stepped through an enabled GradScaler would have its gradients
            #   divided by the loss scale (optimizer["generator"].step(): its if-chain does not test
            #   what the scaled backward's if-chain tests before the scaling branch))); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss_disc, optimizer["discriminator"], loss_id=0) as scaled_loss_disc:
                scaled_loss_disc.backward()
        else:
            loss_disc.backward()
        if loss_scaler:
            loss_scaler.step(optimizer["discriminator"])
        else:
            optimizer["discriminator"].step()

        optimizer["generator"].zero_grad()
        loss_gen = F.softplus(-self.discriminator(self.generator(batch))).mean()
        if loss_scaler:
            loss_scaler.scale(loss_gen).backward()
        elif use_apex_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (GAN is handed to its decorator @MODELS.register_module(), which may
            #   keep it to build it by name, never called directly, so the GradScaler cannot follow
            #   its callers; nor can a module-level GradScaler stand in (the GradScaler plan across
            #   files was dropped: in gan.py, train_step() also runs a plain backward: whether its
            #   test is the switch of the GradScaler the initializing module makes is not followed,
            #   and a plain backward stepped through an enabled GradScaler would have its gradients
            #   divided by the loss scale (optimizer["generator"].step(): its if-chain does not test
            #   what the scaled backward's if-chain tests before the scaling branch))); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss_gen, optimizer["generator"], loss_id=1) as scaled_loss_gen:
                scaled_loss_gen.backward()
        else:
            loss_gen.backward()
        if loss_scaler is not None:
            loss_scaler.step(optimizer["generator"])
        else:
            optimizer["generator"].step()
# file: losses.py
from torch import autograd


def r1_penalty(disc, real, use_apex_amp=False):
    real = real.clone().requires_grad_()
    pred = disc(real)
    if use_apex_amp:
        from apexcompat.amp._amp_state import _amp_state
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   site; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        _loss_scaler = _amp_state.loss_scalers[0]
        pred = _loss_scaler.loss_scale() * pred.float()
    grad = autograd.grad(pred.sum(), real, create_graph=True)[0]
    if use_apex_amp:
        grad = grad / _loss_scaler.loss_scale()
    return grad.pow(2).sum(1).mean()
# file: registry.py
class Registry:
    def __init__(self):
        self.classes = {}

    def register_module(self):
        def register(cls):
            self.classes[cls.__name__] = cls
            return cls
        return register


MODELS = Registry()
# file: apis.py
from amp_setup import apex_amp_initialize
from runner import Runner


def train_model(model, optimizer, cfg, batches):
    use_apex_amp = False
    if cfg.get("apex_amp"):
        model, optimizer = apex_amp_initialize(model, optimizer, **cfg["apex_amp"])
        use_apex_amp = True
    runner = Runner(model, optimizer, use_apex_amp=use_apex_amp)
    runner.train(batches)
''',
        codes=("APX102", "APX220", "APX403"),
    ),
]


#: FARM's shape (the reader route, APX252): the optimization module initializes apex when an
#: opt level is given; the trainer of another module scales when its own flag is set and runs
#: a plain backward otherwise, then, at each accumulation boundary, clips apex's master params
#: or the model's and steps on one line shared by both backwards
SHARED_STEP_TRAINER = """\
# file: optimization.py
import torch

try:
    from apex import amp
    AMP_AVAILABLE = True
except ImportError:
    AMP_AVAILABLE = False


def initialize_optimizer(model, lr, use_amp=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    if use_amp and AMP_AVAILABLE:
        model, optimizer = amp.initialize(model, optimizer, opt_level=use_amp)
    return model, optimizer
# file: trainer.py
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps=1, use_amp=None):
        self.model, self.optimizer = model, optimizer
        self.grad_acc_steps = grad_acc_steps
        self.use_amp = use_amp

    def train(self, batches):
        for step, (x, y) in enumerate(batches, 1):
            loss = (self.model.forward(x) - y).pow(2).mean()
            self.backward_propagate(loss, step)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            if self.use_amp:
                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
# file: train.py
from optimization import initialize_optimizer
from trainer import Trainer


def main(model, batches, use_amp):
    model, optimizer = initialize_optimizer(model, 0.1, use_amp=use_amp)
    Trainer(model, optimizer, grad_acc_steps=2, use_amp=use_amp).train(batches)
"""

REPOSITORY_EXAMPLES += [
    Example(
        # the shared step goes under the scaling clause's test, which reads self.use_amp, set
        # only in __init__ (the backwards of several calls add up to one step); unscale_ goes
        # into the amp branch's clip, the plain branch clips as before; the forward pass in the
        # caller (``self.model.forward(x)``) runs under autocast keyed on the module's GradScaler
        "module-level-grad-scaler-steps-a-shared-line-under-the-trainers-flag",
        before=SHARED_STEP_TRAINER,
        after="""\
# file: optimization.py
import torch

AMP_AVAILABLE = True


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


def initialize_optimizer(model, lr, use_amp=None):
    global scaler
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    amp_enabled = bool((use_amp and AMP_AVAILABLE) and use_amp != "O0")
    scaler = torch.amp.GradScaler(next((p.device.type for p in (model[0] if isinstance(model, list) else model).parameters()), "cuda") if amp_enabled else "cuda", enabled=amp_enabled)
    return model, optimizer
# file: trainer.py
import torch
import optimization


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps=1, use_amp=None):
        self.model, self.optimizer = model, optimizer
        self.grad_acc_steps = grad_acc_steps
        self.use_amp = use_amp

    def train(self, batches):
        for step, (x, y) in enumerate(batches, 1):
            with torch.autocast("cuda", dtype=torch.float16, enabled=optimization.scaler is not None and optimization.scaler.is_enabled()):
                loss = (self.model.forward(x) - y).pow(2).mean()
            self.backward_propagate(loss, step)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            optimization.scaler.scale(loss).backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            if self.use_amp:
                optimization.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), 1.0)
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            if self.use_amp:
                optimization.scaler.step(self.optimizer)
                optimization.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
# file: train.py
from optimization import initialize_optimizer
from trainer import Trainer


def main(model, batches, use_amp):
    model, optimizer = initialize_optimizer(model, 0.1, use_amp=use_amp)
    Trainer(model, optimizer, grad_acc_steps=2, use_amp=use_amp).train(batches)
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX252", "APX301", "APX311", "APX314", "APX321"),
    ),
    Example(
        # the clip in a method of its own, called after either backward: the analysis names no
        # gradient use there, the clipping rule leaves a TODO instead of an unscale_ that
        # would divide the plain backward's gradients on a run whose GradScaler is enabled
        "module-level-grad-scaler-leaves-a-todo-at-a-helper-reading-either-backwards-gradients",
        before=SHARED_STEP_TRAINER.replace(
            "            if self.use_amp:\n"
            "                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)\n"
            "            else:\n                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)\n",
            "            self.bound_norms()\n",
        ).replace(
            "    def backward_propagate(self, loss, step):",
            "    def bound_norms(self):\n        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)\n\n"
            "    def backward_propagate(self, loss, step):",
        ),
        after="""\
# file: optimization.py
import torch

AMP_AVAILABLE = True


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


def initialize_optimizer(model, lr, use_amp=None):
    global scaler
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    amp_enabled = bool((use_amp and AMP_AVAILABLE) and use_amp != "O0")
    scaler = torch.amp.GradScaler(next((p.device.type for p in (model[0] if isinstance(model, list) else model).parameters()), "cuda") if amp_enabled else "cuda", enabled=amp_enabled)
    return model, optimizer
# file: trainer.py
import torch
import optimization


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps=1, use_amp=None):
        self.model, self.optimizer = model, optimizer
        self.grad_acc_steps = grad_acc_steps
        self.use_amp = use_amp

    def train(self, batches):
        for step, (x, y) in enumerate(batches, 1):
            with torch.autocast("cuda", dtype=torch.float16, enabled=optimization.scaler is not None and optimization.scaler.is_enabled()):
                loss = (self.model.forward(x) - y).pow(2).mean()
            self.backward_propagate(loss, step)

    def bound_norms(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            optimization.scaler.scale(loss).backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            # TODO(apexcompat): gradients used after the scaled backward: self.bound_norms(...) saw
            #   gradients apex had unscaled, but optimization.scaler keeps them scaled until
            #   optimization.scaler.step(self.optimizer) (it runs after the plain backward too: only
            #   under `if self.use_amp:`): call optimization.scaler.unscale_(self.optimizer) before
            #   it, once per step
            self.bound_norms()
            if self.use_amp:
                optimization.scaler.step(self.optimizer)
                optimization.scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
# file: train.py
from optimization import initialize_optimizer
from trainer import Trainer


def main(model, batches, use_amp):
    model, optimizer = initialize_optimizer(model, 0.1, use_amp=use_amp)
    Trainer(model, optimizer, grad_acc_steps=2, use_amp=use_amp).train(batches)
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX252", "APX301", "APX311", "APX314", "APX327"),
    ),
    Example(
        # the flag is set in another method too: it may differ between the backwards that add
        # up to one step, so the step's test proves nothing
        "module-level-grad-scaler-refused-where-the-flag-is-set-outside-init",
        before=SHARED_STEP_TRAINER.replace(
            "    def train(self, batches):",
            "    def set_amp(self, use_amp):\n        self.use_amp = use_amp\n\n    def train(self, batches):",
        ),
        after="""\
# file: optimization.py
import torch

try:
    from apexcompat import amp
    AMP_AVAILABLE = True
except ImportError:
    AMP_AVAILABLE = False


def initialize_optimizer(model, lr, use_amp=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    if use_amp and AMP_AVAILABLE:
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in Trainer()
        #   of trainer.py, called from train.py (main), a file without apex.amp that calls this
        #   model factory too; it cannot hand the GradScaler on: Trainer of trainer.py, called
        #   from train.py (main), is not a top-level function; nor can a module-level GradScaler
        #   stand in (the GradScaler plan across files was dropped: in trainer.py,
        #   backward_propagate() also runs a plain backward: whether its test is the switch of
        #   the GradScaler the initializing module makes is not followed, and a plain backward
        #   stepped through an enabled GradScaler would have its gradients divided by the loss
        #   scale (self.optimizer.step(): the step may not follow every backward, and
        #   self.use_amp, which its test reads, is assigned outside Trainer.__init__ (in
        #   set_amp()))); this file keeps apex.amp semantics through apexcompat.amp, migrate it
        #   by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level=use_amp)
    return model, optimizer
# file: trainer.py
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps=1, use_amp=None):
        self.model, self.optimizer = model, optimizer
        self.grad_acc_steps = grad_acc_steps
        self.use_amp = use_amp

    def set_amp(self, use_amp):
        self.use_amp = use_amp

    def train(self, batches):
        for step, (x, y) in enumerate(batches, 1):
            loss = (self.model.forward(x) - y).pow(2).mean()
            self.backward_propagate(loss, step)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Trainer is called from train.py (main), a file without apex.amp that
            #   gets the model from the factory in optimization.py, and it cannot hand the
            #   GradScaler on: Trainer of trainer.py, called from train.py (main), is not a
            #   top-level function; nor can a module-level GradScaler stand in (the GradScaler plan
            #   across files was dropped: in trainer.py, backward_propagate() also runs a plain
            #   backward: whether its test is the switch of the GradScaler the initializing module
            #   makes is not followed, and a plain backward stepped through an enabled GradScaler
            #   would have its gradients divided by the loss scale (self.optimizer.step(): the step
            #   may not follow every backward, and self.use_amp, which its test reads, is assigned
            #   outside Trainer.__init__ (in set_amp())))); this file keeps apex.amp semantics
            #   through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            if self.use_amp:
                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
# file: train.py
from optimization import initialize_optimizer
from trainer import Trainer


def main(model, batches, use_amp):
    model, optimizer = initialize_optimizer(model, 0.1, use_amp=use_amp)
    Trainer(model, optimizer, grad_acc_steps=2, use_amp=use_amp).train(batches)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # one clip after either backward: an unscale_ before it would divide the plain
        # backward's gradients on a run whose GradScaler is enabled
        "module-level-grad-scaler-refused-where-a-clip-serves-both-backwards",
        before=SHARED_STEP_TRAINER.replace(
            "            if self.use_amp:\n"
            "                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)\n"
            "            else:\n                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)\n",
            "            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)\n",
        ),
        after="""\
# file: optimization.py
import torch

try:
    from apexcompat import amp
    AMP_AVAILABLE = True
except ImportError:
    AMP_AVAILABLE = False


def initialize_optimizer(model, lr, use_amp=None):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    if use_amp and AMP_AVAILABLE:
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in Trainer()
        #   of trainer.py, called from train.py (main), a file without apex.amp that calls this
        #   model factory too; it cannot hand the GradScaler on: Trainer of trainer.py, called
        #   from train.py (main), is not a top-level function; nor can a module-level GradScaler
        #   stand in (the GradScaler plan across files was dropped: in trainer.py,
        #   backward_propagate() also runs a plain backward: whether its test is the switch of
        #   the GradScaler the initializing module makes is not followed, and a plain backward
        #   stepped through an enabled GradScaler would have its gradients divided by the loss
        #   scale (torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0) reads the
        #   gradients of either backward, under no if testing self.use_amp)); this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level=use_amp)
    return model, optimizer
# file: trainer.py
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps=1, use_amp=None):
        self.model, self.optimizer = model, optimizer
        self.grad_acc_steps = grad_acc_steps
        self.use_amp = use_amp

    def train(self, batches):
        for step, (x, y) in enumerate(batches, 1):
            loss = (self.model.forward(x) - y).pow(2).mean()
            self.backward_propagate(loss, step)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Trainer is called from train.py (main), a file without apex.amp that
            #   gets the model from the factory in optimization.py, and it cannot hand the
            #   GradScaler on: Trainer of trainer.py, called from train.py (main), is not a
            #   top-level function; nor can a module-level GradScaler stand in (the GradScaler plan
            #   across files was dropped: in trainer.py, backward_propagate() also runs a plain
            #   backward: whether its test is the switch of the GradScaler the initializing module
            #   makes is not followed, and a plain backward stepped through an enabled GradScaler
            #   would have its gradients divided by the loss scale
            #   (torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0) reads the gradients of
            #   either backward, under no if testing self.use_amp))); this file keeps apex.amp
            #   semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
# file: train.py
from optimization import initialize_optimizer
from trainer import Trainer


def main(model, batches, use_amp):
    model, optimizer = initialize_optimizer(model, 0.1, use_amp=use_amp)
    Trainer(model, optimizer, grad_acc_steps=2, use_amp=use_amp).train(batches)
""",
        codes=("APX102", "APX220"),
    ),
]


#: few-shot-vid2vid's shape: the model factory initializes apex for two networks with one loss
#: scaler per loss id (num_losses=2) when --amp is not O0; a backward helper of another module
#: scales under the loss id its callers give and steps on the line after the if-chain
LOSS_ID_HELPER = """\
# file: models.py
import torch


def create_model(opt, netG, netD):
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=opt.lr)
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=opt.lr)
    if opt.amp != "O0":
        from apex import amp
        [netG, netD], [optimizer_G, optimizer_D] = amp.initialize(
            [netG, netD], [optimizer_G, optimizer_D], opt_level=opt.amp, num_losses=2
        )
    return netG, netD, optimizer_G, optimizer_D
# file: loss_collector.py
import torch.nn.functional as F


def loss_backward(opt, net, batch, target, optimizer, loss_id):
    loss = F.mse_loss(net(batch), target)
    optimizer.zero_grad()
    if opt.amp != "O0":
        from apex import amp
        with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    return loss
# file: train.py
from loss_collector import loss_backward
from models import create_model


def train(opt, netG, netD, batches):
    netG, netD, optimizer_G, optimizer_D = create_model(opt, netG, netD)
    for noise, real in batches:
        loss_backward(opt, netD, real, real.new_ones(len(real), 1), optimizer_D, 1)
        loss_backward(opt, lambda x: netD(netG(x)), noise, noise.new_ones(len(noise), 1), optimizer_G, 0)
"""

REPOSITORY_EXAMPLES += [
    Example(
        # loss_id is a parameter the helper never assigns and each step follows its backward
        # in the same call: the module's list is indexed by it when the helper runs, as apex
        # indexed its loss scalers (past num_losses both raise IndexError)
        "module-level-grad-scalers-indexed-by-a-loss-id-parameter",
        before=LOSS_ID_HELPER,
        after="""\
# file: models.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


def create_model(opt, netG, netD):
    global grad_scalers
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=opt.lr)
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=opt.lr)
    use_amp = opt.amp != "O0"
    grad_scalers = [torch.amp.GradScaler(next((p.device.type for p in netG.parameters()), "cuda") if use_amp else "cuda", enabled=use_amp) for _ in range(2)]
    return netG, netD, optimizer_G, optimizer_D
# file: loss_collector.py
import torch.nn.functional as F
import models
import torch


def loss_backward(opt, net, batch, target, optimizer, loss_id):
    with torch.autocast(next((p.device.type for g in optimizer.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=models.grad_scalers is not None and models.grad_scalers[0].is_enabled()):
        loss = F.mse_loss(net(batch), target)
    optimizer.zero_grad()
    if opt.amp != "O0":
        models.grad_scalers[loss_id].scale(loss).backward()
    else:
        loss.backward()
    if opt.amp != "O0":
        models.grad_scalers[loss_id].step(optimizer)
        models.grad_scalers[loss_id].update()
    else:
        optimizer.step()
    return loss
# file: train.py
from loss_collector import loss_backward
from models import create_model


def train(opt, netG, netD, batches):
    netG, netD, optimizer_G, optimizer_D = create_model(opt, netG, netD)
    for noise, real in batches:
        loss_backward(opt, netD, real, real.new_ones(len(real), 1), optimizer_D, 1)
        loss_backward(opt, lambda x: netD(netG(x)), noise, noise.new_ones(len(noise), 1), optimizer_G, 0)
""",
        codes=("APX101", "APX201", "APX202", "APX203", "APX209", "APX252", "APX301", "APX311"),
    ),
    Example(
        # a stepper that steps every other call: the backwards of two calls, under different
        # loss ids, may add up to one step of the GradScaler of the second
        "module-level-grad-scalers-refused-where-a-loss-id-parameter-steps-earlier-backwards",
        before="""\
# file: models.py
import torch


def create_model(opt, netG, netD):
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=opt.lr)
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=opt.lr)
    if opt.amp != "O0":
        from apex import amp
        [netG, netD], [optimizer_G, optimizer_D] = amp.initialize(
            [netG, netD], [optimizer_G, optimizer_D], opt_level=opt.amp, num_losses=2
        )
    return netG, netD, optimizer_G, optimizer_D
# file: loss_collector.py
import torch.nn.functional as F


class Stepper:
    def __init__(self, opt):
        self.use_amp = opt.amp != "O0"

    def loss_backward(self, net, batch, target, optimizer, loss_id, step):
        loss = F.mse_loss(net(batch), target)
        if self.use_amp:
            from apex import amp
            with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if step % 2 == 0:
            optimizer.step()
            optimizer.zero_grad()
        return loss
# file: train.py
from loss_collector import Stepper
from models import create_model


def train(opt, netG, netD, batches):
    netG, netD, optimizer_G, optimizer_D = create_model(opt, netG, netD)
    stepper = Stepper(opt)
    for step, (noise, real) in enumerate(batches):
        stepper.loss_backward(netD, real, real.new_ones(len(real), 1), optimizer_D, 1, step)
        stepper.loss_backward(lambda x: netD(netG(x)), noise, noise.new_ones(len(noise), 1), optimizer_G, 0, step)
""",
        after="""\
# file: models.py
import torch


def create_model(opt, netG, netD):
    optimizer_G = torch.optim.Adam(netG.parameters(), lr=opt.lr)
    optimizer_D = torch.optim.Adam(netD.parameters(), lr=opt.lr)
    if opt.amp != "O0":
        from apexcompat import amp
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in Stepper()
        #   of loss_collector.py, called from train.py (train), a file without apex.amp that
        #   calls this model factory too; it cannot hand the GradScaler on: Stepper of
        #   loss_collector.py, called from train.py (train), is not a top-level function; nor
        #   can a module-level GradScaler stand in (the GradScaler plan across files was
        #   dropped: in loss_collector.py, the GradScalers come from another file, one per loss
        #   id (num_losses=2), but loss_id=loss_id is read when the function runs, while
        #   optimizer.step() may also step the backwards of earlier calls, scaled under other
        #   loss ids); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        [netG, netD], [optimizer_G, optimizer_D] = amp.initialize(
            [netG, netD], [optimizer_G, optimizer_D], opt_level=opt.amp, num_losses=2
        )
    return netG, netD, optimizer_G, optimizer_D
# file: loss_collector.py
import torch.nn.functional as F


class Stepper:
    def __init__(self, opt):
        self.use_amp = opt.amp != "O0"

    def loss_backward(self, net, batch, target, optimizer, loss_id, step):
        loss = F.mse_loss(net(batch), target)
        if self.use_amp:
            from apexcompat import amp
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (Stepper is called from train.py (train), a file without apex.amp
            #   that gets the model from the factory in models.py, and it cannot hand the GradScaler
            #   on: Stepper of loss_collector.py, called from train.py (train), is not a top-level
            #   function; nor can a module-level GradScaler stand in (the GradScaler plan across
            #   files was dropped: in loss_collector.py, the GradScalers come from another file, one
            #   per loss id (num_losses=2), but loss_id=loss_id is read when the function runs,
            #   while optimizer.step() may also step the backwards of earlier calls, scaled under
            #   other loss ids)); this file keeps apex.amp semantics through apexcompat.amp, migrate
            #   it by hand
            with amp.scale_loss(loss, optimizer, loss_id=loss_id) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if step % 2 == 0:
            optimizer.step()
            optimizer.zero_grad()
        return loss
# file: train.py
from loss_collector import Stepper
from models import create_model


def train(opt, netG, netD, batches):
    netG, netD, optimizer_G, optimizer_D = create_model(opt, netG, netD)
    stepper = Stepper(opt)
    for step, (noise, real) in enumerate(batches):
        stepper.loss_backward(netD, real, real.new_ones(len(real), 1), optimizer_D, 1, step)
        stepper.loss_backward(lambda x: netD(netG(x)), noise, noise.new_ones(len(noise), 1), optimizer_G, 0, step)
""",
        codes=("APX102", "APX220"),
    ),
]


# the runner-hook route (``runner_hook_plan``) and the probe gate (``probe_gate_plan``)
REPOSITORY_EXAMPLES += [
    # cvpods' shape: DefaultRunner.__init__ initializes apex, its base's run_step (no apex) runs the
    # forward pass and stores the summed loss, the hook reads it off self.trainer (register_hooks puts a
    # weakref.proxy of the runner there) and scales it: the runner keeps the GradScaler, the hook scales,
    # unscales and steps through self.trainer.scaler under its own switch (a plain runner carries none),
    # the run step's forward goes under autocast while the runner carries an enabled GradScaler; the
    # wrapper's probe of apex's state only gates its float_function: it goes, with its re-export
    Example(
        "runner-keeps-the-grad-scaler-its-hook-scales-the-stored-loss",
        before='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision:
            from apex import amp
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apex import amp
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
# file: utils/__init__.py
from .apex_wrapper import float_function, is_amp_training
# file: utils/apex_wrapper.py
import functools

try:
    from apex import amp
except ImportError:
    pass


def is_amp_training():
    try:
        return hasattr(amp._amp_state, "loss_scalers")
    except Exception:
        return False


def float_function(func):
    @functools.wraps(func)
    def float_wraps(*args, **kwargs):
        if is_amp_training():
            return amp.float_function(func)(*args, **kwargs)
        else:
            return func(*args, **kwargs)

    return float_wraps
''',
        after='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda", dtype=torch.float16, enabled=getattr(self, "scaler", None) is not None and self.scaler.is_enabled()):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision:
            self.trainer.scaler.scale(losses).backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                if self.mixed_precision:
                    self.trainer.scaler.unscale_(self.trainer.optimizer)
                self.grad_clipper(self.trainer.model.parameters())
            if self.mixed_precision:
                self.trainer.scaler.step(self.trainer.optimizer)
                self.trainer.scaler.update()
            else:
                self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner
import torch


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        use_amp = bool(cfg.FP16.ENABLED and cfg.FP16.TYPE == "APEX" and cfg.FP16.OPT_LEVEL != "O0")
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
# file: utils/__init__.py
from .apex_wrapper import float_function
# file: utils/apex_wrapper.py
import functools
import torch


def autocast_function(dtype):
    """Decorator: while CUDA autocast is on, run the function with autocast off on ``dtype``
    inputs (what apex.amp's float_function/half_function did under O1)."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not torch.is_autocast_enabled():
                return fn(*args, **kwargs)

            def floating(value):  # a float tensor, or a list/tuple of nothing else
                if isinstance(value, (list, tuple)):
                    return all(floating(v) for v in value)
                return torch.is_tensor(value) and value.is_floating_point()

            def cast(value):  # CUDA tensors only, lists and tuples keep their type
                if isinstance(value, (list, tuple)):
                    return type(value)(cast(v) for v in value)
                return value.to(dtype) if value.is_cuda else value

            with torch.autocast("cuda", enabled=False):
                return fn(*[cast(a) if floating(a) else a for a in args],
                          **{k: cast(v) if floating(v) else v for k, v in kwargs.items()})

        return wrapper

    return decorate


def float_function(func):
    @functools.wraps(func)
    def float_wraps(*args, **kwargs):
        return autocast_function(torch.float32)(func)(*args, **kwargs)

    return float_wraps
''',
        codes=('APX101', 'APX103', 'APX201', 'APX202', 'APX254', 'APX262', 'APX301', 'APX311', 'APX325', 'APX504'),
    ),
    # the same, but a subclass of the run step's class in another file stores the outputs too (its
    # forward pass would run outside the autocast): the route is refused, naming both methods
    Example(
        "runner-hook-refused-where-another-method-stores-the-outputs",
        before='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision:
            from apex import amp
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apex import amp
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
# file: eng/debug.py
from .base_runner import SimpleRunner


class DebugRunner(SimpleRunner):
    def run_step(self):
        self.step_outputs = {"loss_for_backward": self.model(next(self._data_loader_iter)).sum()}
''',
        after='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision:
            from apexcompat import amp
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (self.step_outputs is stored in 2 methods (SimpleRunner.run_step() in
            #   eng/base_runner.py, DebugRunner.run_step() in eng/debug.py), not in one of a class
            #   DefaultRunner derives from (the hooks of eng/hooks.py scale the losses the runner's
            #   step stored)); this file keeps apex.amp semantics through apexcompat.amp, migrate it
            #   by hand
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apexcompat import amp
                # TODO(apexcompat): self.step_outputs is stored in 2 methods (SimpleRunner.run_step() in
                #   eng/base_runner.py, DebugRunner.run_step() in eng/debug.py), not in one of a class
                #   DefaultRunner derives from (the hooks of eng/hooks.py scale the losses the runner's
                #   step stored); this file keeps apex.amp semantics through apexcompat.amp, migrate it
                #   by hand
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
# file: eng/debug.py
from .base_runner import SimpleRunner


class DebugRunner(SimpleRunner):
    def run_step(self):
        self.step_outputs = {"loss_for_backward": self.model(next(self._data_loader_iter)).sum()}
''',
        codes=('APX102', 'APX220'),
    ),
    # the same, but another module calls the wrapper's probe: the probe keeps the shim (it would answer
    # no once the runner's initialize is native), and so do the runner and its hook
    Example(
        "runner-hook-refused-where-a-probe-of-apex-state-is-used-elsewhere",
        before='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision:
            from apex import amp
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apex import amp
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
# file: eng/report.py
from utils import is_amp_training


def describe():
    return "amp" if is_amp_training() else "fp32"
# file: utils/__init__.py
from .apex_wrapper import float_function, is_amp_training
# file: utils/apex_wrapper.py
import functools

try:
    from apex import amp
except ImportError:
    pass


def is_amp_training():
    try:
        return hasattr(amp._amp_state, "loss_scalers")
    except Exception:
        return False


def float_function(func):
    @functools.wraps(func)
    def float_wraps(*args, **kwargs):
        if is_amp_training():
            return amp.float_function(func)(*args, **kwargs)
        else:
            return func(*args, **kwargs)

    return float_wraps
''',
        after='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision:
            from apexcompat import amp
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (utils/apex_wrapper.py reads apex's global state (amp._amp_state),
            #   which stays on apexcompat.amp and no longer sees this initialize once it is native
            #   (the hooks of eng/hooks.py scale the losses the runner's step stored)); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apexcompat import amp
                # TODO(apexcompat): utils/apex_wrapper.py reads apex's global state (amp._amp_state),
                #   which stays on apexcompat.amp and no longer sees this initialize once it is native
                #   (the hooks of eng/hooks.py scale the losses the runner's step stored); this file
                #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
# file: eng/report.py
from utils import is_amp_training


def describe():
    return "amp" if is_amp_training() else "fp32"
# file: utils/__init__.py
from .apex_wrapper import float_function, is_amp_training
# file: utils/apex_wrapper.py
import functools
import torch

try:
    from apexcompat import amp
except ImportError:
    pass


def autocast_function(dtype):
    """Decorator: while CUDA autocast is on, run the function with autocast off on ``dtype``
    inputs (what apex.amp's float_function/half_function did under O1)."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not torch.is_autocast_enabled():
                return fn(*args, **kwargs)

            def floating(value):  # a float tensor, or a list/tuple of nothing else
                if isinstance(value, (list, tuple)):
                    return all(floating(v) for v in value)
                return torch.is_tensor(value) and value.is_floating_point()

            def cast(value):  # CUDA tensors only, lists and tuples keep their type
                if isinstance(value, (list, tuple)):
                    return type(value)(cast(v) for v in value)
                return value.to(dtype) if value.is_cuda else value

            with torch.autocast("cuda", enabled=False):
                return fn(*[cast(a) if floating(a) else a for a in args],
                          **{k: cast(v) if floating(v) else v for k, v in kwargs.items()})

        return wrapper

    return decorate


def is_amp_training():
    try:
        # TODO(apexcompat): private amp._amp_state use: it asks whether amp.initialize has run
        #   (hasattr of "loss_scalers" on apex's global state, true from the first initialize
        #   on, wherever it ran), which neither a GradScaler nor torch.autocast tells
        #   (torch.is_autocast_enabled() is true only inside an autocast region); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        return hasattr(amp._amp_state, "loss_scalers")
    except Exception:
        return False


def float_function(func):
    @functools.wraps(func)
    def float_wraps(*args, **kwargs):
        if is_amp_training():
            return autocast_function(torch.float32)(func)(*args, **kwargs)
        else:
            return func(*args, **kwargs)

    return float_wraps
''',
        codes=('APX102', 'APX220', 'APX504'),
    ),
    # the runner-hook shape with a hook that always scales: its step goes through the runner's
    # GradScaler as the scale does, unguarded
    Example(
        "runner-hook-that-always-scales-steps-through-the-runner",
        before='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        from apex import amp
        with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
            scaled_loss.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apex import amp
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
''',
        after='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        with torch.autocast("cuda", dtype=torch.float16, enabled=getattr(self, "scaler", None) is not None and self.scaler.is_enabled()):
            loss_dict = self.model(data)
            losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        self.trainer.scaler.scale(losses).backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.trainer.scaler.unscale_(self.trainer.optimizer)
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.scaler.step(self.trainer.optimizer)
            self.trainer.scaler.update()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner
import torch


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        use_amp = bool(cfg.FP16.ENABLED and cfg.FP16.TYPE == "APEX" and cfg.FP16.OPT_LEVEL != "O0")
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
''',
        codes=('APX101', 'APX201', 'APX202', 'APX254', 'APX301', 'APX311', 'APX325'),
    ),
    # the runner-hook shape with a hook whose switch is a call: whether the scale ran cannot be asked
    # again at the step, which a plain runner (no GradScaler) needs: refused
    Example(
        "runner-hook-refused-where-the-scale-switch-is-a-call",
        before='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision():
            from apex import amp
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apex import amp
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
''',
        after='''\
# file: eng/__init__.py
# file: eng/base_runner.py
import weakref

import torch


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()


class SimpleRunner(RunnerBase):
    def __init__(self, model, data_loader, optimizer):
        super().__init__()
        self.model = model
        self._data_loader_iter = iter(data_loader)
        self.optimizer = optimizer

    def run_step(self):
        data = next(self._data_loader_iter)
        loss_dict = self.model(data)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError("loss is not finite")
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1
# file: eng/hooks.py
class HookBase:
    def before_step(self):
        pass

    def after_step(self):
        pass


class OptimizationHook(HookBase):
    def __init__(self, accumulate_grad_steps=1, grad_clipper=None, mixed_precision=False):
        self.accumulate_grad_steps = accumulate_grad_steps
        self.grad_clipper = grad_clipper
        self.mixed_precision = mixed_precision

    def before_step(self):
        self.trainer.optimizer.zero_grad()

    def after_step(self):
        losses = self.trainer.step_outputs["loss_for_backward"]
        losses /= self.accumulate_grad_steps
        if self.mixed_precision():
            from apexcompat import amp
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (the GradScaler plan across files was dropped: in eng/hooks.py, the
            #   runner the hook reads the GradScaler from may carry none (a plain runner), so its
            #   steps must take the scaled backward's test, but the scaled backward's test calls or
            #   indexes something); this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with amp.scale_loss(losses, self.trainer.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            losses.backward()
        if self.trainer.inner_iter == self.accumulate_grad_steps:
            if self.grad_clipper is not None:
                self.grad_clipper(self.trainer.model.parameters())
            self.trainer.optimizer.step()
            self.trainer.optimizer.zero_grad()
# file: eng/runner.py
from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data_loader, optimizer):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16.ENABLED:
            if cfg.FP16.TYPE == "APEX":
                from apexcompat import amp
                # TODO(apexcompat): the GradScaler plan across files was dropped: in eng/hooks.py, the
                #   runner the hook reads the GradScaler from may carry none (a plain runner), so its
                #   steps must take the scaled backward's test, but the scaled backward's test calls or
                #   indexes something; this file keeps apex.amp semantics through apexcompat.amp,
                #   migrate it by hand
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.FP16.OPT_LEVEL)
        super().__init__(self.model, data_loader, self.optimizer)
        self.register_hooks([hooks.OptimizationHook(mixed_precision=cfg.FP16.ENABLED)])
''',
        codes=('APX102', 'APX220'),
    ),
]


#: vissl's train step (the reader route, APX252): run_backward() scales on the apex branch of
#: the task's amp_type and runs plain backwards on the others; no step follows there, but its
#: caller runs run_optimizer_step() next, which steps plainly in the else of a chain on the
#: same switch, with the task's hook (a clip) between the two calls
SIBLING_STEP = '''\
# file: ssl_task.py
import enum

import apex
import torch


class AmpType(enum.Enum):
    APEX = "apex"
    PYTORCH = "pytorch"


class Task:
    def __init__(self, model, optimizer, amp_type, amp_args):
        self.model, self.optimizer = model, optimizer
        self.amp_type, self.amp_args = amp_type, amp_args
        self.amp_grad_scaler = torch.amp.GradScaler("cuda") if amp_type == AmpType.PYTORCH else None

    def prepare(self):
        if self.amp_type == AmpType.APEX:
            self.model, self.optimizer = apex.amp.initialize(self.model, self.optimizer, **self.amp_args)

    def run_hooks(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
# file: step.py
import apex

from ssl_task import AmpType


class TrainStep:
    def __call__(self, task, x, y):
        loss = ((task.model(x) - y) ** 2).mean()
        self.run_backward(task, loss)
        task.run_hooks()
        self.run_optimizer_step(task)

    @staticmethod
    def run_backward(task, loss):
        task.optimizer.zero_grad()
        if task.amp_type == AmpType.APEX:
            with apex.amp.scale_loss(loss, task.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.scale(loss).backward()
        else:
            loss.backward()

    @staticmethod
    def run_optimizer_step(task):
        if task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.step(task.optimizer)
            task.amp_grad_scaler.update()
        else:
            task.optimizer.step()
# file: train.py
import torch

from ssl_task import AmpType, Task
from step import TrainStep


def main(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    task = Task(model, optimizer, AmpType.APEX, {"opt_level": "O1"})
    task.prepare()
    train_step = TrainStep()
    for x, y in batches:
        train_step(task, x, y)


if __name__ == "__main__":
    main(torch.nn.Linear(4, 1).cuda(), [(torch.randn(8, 4).cuda(), torch.randn(8, 1).cuda())])
'''

#: what the loading variant keeps on the shim
SIBLING_LOADED_AFTER = '''\
# file: ssl_task.py
import enum
import apexcompat.amp

import torch


class AmpType(enum.Enum):
    APEX = "apex"
    PYTORCH = "pytorch"


class Task:
    def __init__(self, model, optimizer, amp_type, amp_args):
        self.model, self.optimizer = model, optimizer
        self.amp_type, self.amp_args = amp_type, amp_args
        self.amp_grad_scaler = torch.amp.GradScaler("cuda") if amp_type == AmpType.PYTORCH else None

    def prepare(self):
        if self.amp_type == AmpType.APEX:
            # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in ssl_task.py
            #   (Task), reached through train.py (main), which is run only as its file's script
            #   (under `if __name__ == "__main__":`), where no GradScaler exists: the GradScaler
            #   cannot reach it; nor can a module-level GradScaler stand in: ssl_task.py loads amp's
            #   state (line 24), but no file of the repository saves it: the checkpoint is written
            #   by code outside the repository (a base class or a framework of another package),
            #   which would still call apex.amp.state_dict() while a GradScaler holds the loss
            #   scale; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            self.model, self.optimizer = apexcompat.amp.initialize(self.model, self.optimizer, **self.amp_args)

    def set_state(self, state):
        if self.amp_type == AmpType.APEX:
            apexcompat.amp.load_state_dict(state["amp"])

    def run_hooks(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
# file: step.py
import apexcompat.amp
from ssl_task import AmpType


class TrainStep:
    def __call__(self, task, x, y):
        loss = ((task.model(x) - y) ** 2).mean()
        self.run_backward(task, loss)
        task.run_hooks()
        self.run_optimizer_step(task)

    @staticmethod
    def run_backward(task, loss):
        task.optimizer.zero_grad()
        if task.amp_type == AmpType.APEX:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (TrainStep is called only from train.py:11 (main), where no
            #   GradScaler exists); this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with apexcompat.amp.scale_loss(loss, task.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.scale(loss).backward()
        else:
            loss.backward()

    @staticmethod
    def run_optimizer_step(task):
        if task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.step(task.optimizer)
            task.amp_grad_scaler.update()
        else:
            task.optimizer.step()
# file: train.py
import torch

from ssl_task import AmpType, Task
from step import TrainStep


def main(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    task = Task(model, optimizer, AmpType.APEX, {"opt_level": "O1"})
    task.prepare()
    train_step = TrainStep()
    for x, y in batches:
        train_step(task, x, y)


if __name__ == "__main__":
    main(torch.nn.Linear(4, 1).cuda(), [(torch.randn(8, 4).cuda(), torch.randn(8, 1).cuda())])
'''

REPOSITORY_EXAMPLES += [
    Example(
        # the step in the sibling gets `elif <the scale clause's test>:` through the module's
        # GradScaler: AmpType.PYTORCH, tested before it, is another member of the same enum,
        # so on the runs that scaled the plain step was the one taken; the scaled backward
        # unscales at once (apex had, before the hook clips), the caller's forward runs under
        # autocast on the device of the optimizer's parameters
        "module-level-grad-scaler-steps-in-the-sibling-function-the-caller-runs-next",
        before=SIBLING_STEP,
        after='''\
# file: ssl_task.py
import enum

import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


class AmpType(enum.Enum):
    APEX = "apex"
    PYTORCH = "pytorch"


class Task:
    def __init__(self, model, optimizer, amp_type, amp_args):
        self.model, self.optimizer = model, optimizer
        self.amp_type, self.amp_args = amp_type, amp_args
        self.amp_grad_scaler = torch.amp.GradScaler("cuda") if amp_type == AmpType.PYTORCH else None

    def prepare(self):
        global grad_scalers
        amp_options = dict(self.amp_args) if self.amp_type == AmpType.APEX else {"enabled": False}
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        grad_scalers = [torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp) for _ in range(amp_options.get("num_losses", 1))]
        for loss_id_scaler in grad_scalers:
            loss_id_scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)

    def run_hooks(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
# file: step.py
from ssl_task import AmpType
import ssl_task
import torch


class TrainStep:
    def __call__(self, task, x, y):
        with torch.autocast(next((p.device.type for g in task.optimizer.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=ssl_task.grad_scalers is not None and ssl_task.grad_scalers[0].is_enabled()):
            loss = ((task.model(x) - y) ** 2).mean()
        self.run_backward(task, loss)
        task.run_hooks()
        self.run_optimizer_step(task)

    @staticmethod
    def run_backward(task, loss):
        task.optimizer.zero_grad()
        if task.amp_type == AmpType.APEX:
            ssl_task.grad_scalers[0].scale(loss).backward()
            ssl_task.grad_scalers[0].unscale_(task.optimizer)
        elif task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.scale(loss).backward()
        else:
            loss.backward()

    @staticmethod
    def run_optimizer_step(task):
        if task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.step(task.optimizer)
            task.amp_grad_scaler.update()
        elif task.amp_type == AmpType.APEX:
            ssl_task.grad_scalers[0].step(task.optimizer)
            ssl_task.grad_scalers[0].update()
        else:
            task.optimizer.step()
# file: train.py
import torch

from ssl_task import AmpType, Task
from step import TrainStep


def main(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    task = Task(model, optimizer, AmpType.APEX, {"opt_level": "O1"})
    task.prepare()
    train_step = TrainStep()
    for x, y in batches:
        train_step(task, x, y)


if __name__ == "__main__":
    main(torch.nn.Linear(4, 1).cuda(), [(torch.randn(8, 4).cuda(), torch.randn(8, 1).cuda())])
''',
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX252", "APX301", "APX311"),
    ),
    Example(
        # ... but a clause before the else that may hold on the runs that scale (a flag, no
        # other constant of the same comparison) would take the step away from the GradScaler
        "sibling-step-after-a-clause-that-may-hold-with-the-scaling-branch-keeps-the-shim",
        before=SIBLING_STEP.replace(
            """            task.amp_grad_scaler.update()
        else:""",
            """            task.amp_grad_scaler.update()
        elif task.use_lars:
            task.lars_step()
        else:""",
        ),
        after='''\
# file: ssl_task.py
import enum
import apexcompat.amp

import torch


class AmpType(enum.Enum):
    APEX = "apex"
    PYTORCH = "pytorch"


class Task:
    def __init__(self, model, optimizer, amp_type, amp_args):
        self.model, self.optimizer = model, optimizer
        self.amp_type, self.amp_args = amp_type, amp_args
        self.amp_grad_scaler = torch.amp.GradScaler("cuda") if amp_type == AmpType.PYTORCH else None

    def prepare(self):
        if self.amp_type == AmpType.APEX:
            # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in step.py
            #   (TrainStep), reached through train.py (main), which is run only as its file's script
            #   (under `if __name__ == "__main__":`), where no GradScaler exists: the GradScaler
            #   cannot reach it; nor can a module-level GradScaler stand in (the GradScaler plan
            #   across files was dropped: in step.py, run_backward() also runs a plain backward:
            #   whether its test is the switch of the GradScaler the initializing module makes is
            #   not followed, and a plain backward stepped through an enabled GradScaler would have
            #   its gradients divided by the loss scale (no step of its optimizers follows it, and a
            #   test of the if-chain of task.optimizer.step() in run_optimizer_step() may hold
            #   together with the scaling branch's `task.amp_type == AmpType.APEX`)); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            self.model, self.optimizer = apexcompat.amp.initialize(self.model, self.optimizer, **self.amp_args)

    def run_hooks(self):
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
# file: step.py
import apexcompat.amp
from ssl_task import AmpType


class TrainStep:
    def __call__(self, task, x, y):
        loss = ((task.model(x) - y) ** 2).mean()
        self.run_backward(task, loss)
        task.run_hooks()
        self.run_optimizer_step(task)

    @staticmethod
    def run_backward(task, loss):
        task.optimizer.zero_grad()
        if task.amp_type == AmpType.APEX:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (TrainStep is called only from train.py:11 (main), where no
            #   GradScaler exists; nor can a module-level GradScaler stand in (the GradScaler plan
            #   across files was dropped: in step.py, run_backward() also runs a plain backward:
            #   whether its test is the switch of the GradScaler the initializing module makes is
            #   not followed, and a plain backward stepped through an enabled GradScaler would have
            #   its gradients divided by the loss scale (no step of its optimizers follows it, and a
            #   test of the if-chain of task.optimizer.step() in run_optimizer_step() may hold
            #   together with the scaling branch's `task.amp_type == AmpType.APEX`))); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with apexcompat.amp.scale_loss(loss, task.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.scale(loss).backward()
        else:
            loss.backward()

    @staticmethod
    def run_optimizer_step(task):
        if task.amp_type == AmpType.PYTORCH:
            task.amp_grad_scaler.step(task.optimizer)
            task.amp_grad_scaler.update()
        elif task.use_lars:
            task.lars_step()
        else:
            task.optimizer.step()
# file: train.py
import torch

from ssl_task import AmpType, Task
from step import TrainStep


def main(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    task = Task(model, optimizer, AmpType.APEX, {"opt_level": "O1"})
    task.prepare()
    train_step = TrainStep()
    for x, y in batches:
        train_step(task, x, y)


if __name__ == "__main__":
    main(torch.nn.Linear(4, 1).cuda(), [(torch.randn(8, 4).cuda(), torch.randn(8, 1).cuda())])
''',
        codes=("APX101", "APX102", "APX220"),
    ),
    Example(
        # ... and a task that loads apex's state which no file of the repository saves (vissl's
        # base class of another package writes its checkpoints): that code would still ask
        # apex.amp for the state while the GradScaler holds the loss scale
        "sibling-step-with-amp-state-loaded-but-saved-outside-the-repository-keeps-the-shim",
        before=SIBLING_STEP.replace(
            """    def run_hooks(self):""",
            """    def set_state(self, state):
        if self.amp_type == AmpType.APEX:
            apex.amp.load_state_dict(state["amp"])

    def run_hooks(self):""",
        ),
        after=SIBLING_LOADED_AFTER,
        codes=("APX101", "APX102", "APX220"),
    ),
]


#: imaginaire's vid2vid shape (APX253, on the reader route APX252): the trainer picked by name is an
#: apex-free subclass of the one that scales; its update runs the generator and the critic frame
#: by frame and hands their outputs to the methods that compute the losses (a frozen feature
#: network among the criteria), scale them with their loss ids and step
HANDED_OUTPUTS = '''\
# file: setup_nets.py
import torch
from apex import amp


def build(cfg, net_G, net_D):
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    [net_G, net_D], [opt_G, opt_D] = amp.initialize(
        [net_G, net_D], [opt_G, opt_D], opt_level=cfg.opt_level, num_losses=2
    )
    return net_G, net_D, opt_G, opt_D
# file: vid2vid.py
import torch
import torch.nn.functional as F
from apex import amp


class Trainer:
    def __init__(self, net_G, net_D, opt_G, opt_D, perceptual):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.perceptual = perceptual

    def frame(self, data, t):
        return data[0][t], data[1][t]

    def gen_update(self, data):
        fake = None
        for t in range(len(data[0])):
            x, y = self.frame(data, t)
            fake = self.net_G(x)
            pred_fake, pred_real = self.net_D(fake.detach()), self.net_D(y)
            self.dis_losses(pred_fake, pred_real)
            pred_fake = self.net_D(fake)
            self.gen_losses(x, y, fake, pred_fake)

    def gen_losses(self, x, y, fake, pred_fake):
        self.opt_G.zero_grad()
        loss = F.softplus(-pred_fake).mean() + F.l1_loss(self.perceptual(fake), self.perceptual(y))
        with amp.scale_loss(loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        self.opt_G.step()

    def dis_losses(self, pred_fake, pred_real):
        self.opt_D.zero_grad()
        loss = F.softplus(pred_fake).mean() + F.softplus(-pred_real).mean()
        with amp.scale_loss(loss, self.opt_D, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        self.opt_D.step()
# file: fs_vid2vid.py
from vid2vid import Trainer as Vid2VidTrainer


class Trainer(Vid2VidTrainer):
    def frame(self, data, t):
        return data[0][t] * 2, data[1][t]
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    perceptual = torch.nn.Linear(4, 8).cuda().requires_grad_(False)
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D, perceptual)
    for batch in data:
        trainer.gen_update(batch)
'''

REPOSITORY_EXAMPLES += [
    Example(
        # every call of the loss methods is on self in the update of their class: autocast wraps
        # what the update computes before each call (the frame, both networks' forward passes)
        # and each method's loss computation before its backward, as apex's O1 ran both in float16
        "loss-computed-from-network-outputs-the-callers-hand-over",
        before=HANDED_OUTPUTS,
        after='''\
# file: setup_nets.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


def build(cfg, net_G, net_D):
    global grad_scalers
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    use_amp = cfg.opt_level != "O0"
    grad_scalers = [torch.amp.GradScaler(next((p.device.type for p in net_G.parameters()), "cuda") if use_amp else "cuda", enabled=use_amp) for _ in range(2)]
    return net_G, net_D, opt_G, opt_D
# file: vid2vid.py
import torch
import torch.nn.functional as F
import setup_nets


class Trainer:
    def __init__(self, net_G, net_D, opt_G, opt_D, perceptual):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.perceptual = perceptual

    def frame(self, data, t):
        return data[0][t], data[1][t]

    def gen_update(self, data):
        fake = None
        for t in range(len(data[0])):
            with torch.autocast(next((p.device.type for g in self.opt_G.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
                x, y = self.frame(data, t)
                fake = self.net_G(x)
                pred_fake, pred_real = self.net_D(fake.detach()), self.net_D(y)
            self.dis_losses(pred_fake, pred_real)
            with torch.autocast(next((p.device.type for g in self.opt_G.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
                pred_fake = self.net_D(fake)
            self.gen_losses(x, y, fake, pred_fake)

    def gen_losses(self, x, y, fake, pred_fake):
        self.opt_G.zero_grad()
        with torch.autocast(next((p.device.type for g in self.opt_G.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
            loss = F.softplus(-pred_fake).mean() + F.l1_loss(self.perceptual(fake), self.perceptual(y))
        setup_nets.grad_scalers[0].scale(loss).backward()
        setup_nets.grad_scalers[0].step(self.opt_G)
        setup_nets.grad_scalers[0].update()

    def dis_losses(self, pred_fake, pred_real):
        self.opt_D.zero_grad()
        with torch.autocast(next((p.device.type for g in self.opt_D.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
            loss = F.softplus(pred_fake).mean() + F.softplus(-pred_real).mean()
        setup_nets.grad_scalers[1].scale(loss).backward()
        setup_nets.grad_scalers[1].step(self.opt_D)
        setup_nets.grad_scalers[1].update()
# file: fs_vid2vid.py
from vid2vid import Trainer as Vid2VidTrainer


class Trainer(Vid2VidTrainer):
    def frame(self, data, t):
        return data[0][t] * 2, data[1][t]
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    perceptual = torch.nn.Linear(4, 8).cuda().requires_grad_(False)
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D, perceptual)
    for batch in data:
        trainer.gen_update(batch)
''',
        codes=('APX101', 'APX201', 'APX202', 'APX203', 'APX209', 'APX252', 'APX253', 'APX301', 'APX311'),
    ),
    Example(
        # the frames come from the update's parameter (a loop over it): what its callers computed
        # there, and how, is not followed, so no region is placed and the whole amp instance
        # keeps the shim
        "loss-computed-from-what-the-callers-hand-over-refused-for-a-loop-target",
        before=HANDED_OUTPUTS.replace(
            "        for t in range(len(data[0])):\n            x, y = self.frame(data, t)", "        for x, y in zip(*data):"
        ),
        after='''\
# file: setup_nets.py
import torch
from apexcompat import amp


def build(cfg, net_G, net_D):
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in vid2vid.py
    #   (Trainer), which is subclassed, passed on or stored in fs_vid2vid.py, never called
    #   directly; it is built as `.Trainer(...)` of a module imported by name at run time
    #   (train.py:11, in main): which class that is, no GradScaler route can tell: the
    #   GradScaler cannot reach it; nor can a module-level GradScaler stand in (the
    #   GradScaler plan across files was dropped: in vid2vid.py, the forward pass and loss
    #   are not next to this amp.scale_loss (gen_update() binds what it hands gen_losses()
    #   in `for x, y in zip(*data)`, where no autocast region can hold it): wrap them in
    #   `with torch.autocast("cuda", dtype=torch.float16):` by hand); this file keeps
    #   apex.amp semantics through apexcompat.amp, migrate it by hand
    [net_G, net_D], [opt_G, opt_D] = amp.initialize(
        [net_G, net_D], [opt_G, opt_D], opt_level=cfg.opt_level, num_losses=2
    )
    return net_G, net_D, opt_G, opt_D
# file: vid2vid.py
import torch
import torch.nn.functional as F
from apexcompat import amp


class Trainer:
    def __init__(self, net_G, net_D, opt_G, opt_D, perceptual):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.perceptual = perceptual

    def frame(self, data, t):
        return data[0][t], data[1][t]

    def gen_update(self, data):
        fake = None
        for x, y in zip(*data):
            fake = self.net_G(x)
            pred_fake, pred_real = self.net_D(fake.detach()), self.net_D(y)
            self.dis_losses(pred_fake, pred_real)
            pred_fake = self.net_D(fake)
            self.gen_losses(x, y, fake, pred_fake)

    def gen_losses(self, x, y, fake, pred_fake):
        self.opt_G.zero_grad()
        loss = F.softplus(-pred_fake).mean() + F.l1_loss(self.perceptual(fake), self.perceptual(y))
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (Trainer is subclassed, passed on or stored in fs_vid2vid.py, never
        #   called directly; it is built as `.Trainer(...)` of a module imported by name at run
        #   time (train.py:11, in main): which class that is, no GradScaler route can tell, so
        #   the GradScaler cannot follow its callers; nor can a module-level GradScaler stand in
        #   (the GradScaler plan across files was dropped: in vid2vid.py, the forward pass and
        #   loss are not next to this amp.scale_loss (gen_update() binds what it hands
        #   gen_losses() in `for x, y in zip(*data)`, where no autocast region can hold it):
        #   wrap them in `with torch.autocast("cuda", dtype=torch.float16):` by hand)); this
        #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        self.opt_G.step()

    def dis_losses(self, pred_fake, pred_real):
        self.opt_D.zero_grad()
        loss = F.softplus(pred_fake).mean() + F.softplus(-pred_real).mean()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (Trainer is subclassed, passed on or stored in fs_vid2vid.py, never
        #   called directly; it is built as `.Trainer(...)` of a module imported by name at run
        #   time (train.py:11, in main): which class that is, no GradScaler route can tell, so
        #   the GradScaler cannot follow its callers; nor can a module-level GradScaler stand in
        #   (the GradScaler plan across files was dropped: in vid2vid.py, the forward pass and
        #   loss are not next to this amp.scale_loss (gen_update() binds what it hands
        #   gen_losses() in `for x, y in zip(*data)`, where no autocast region can hold it):
        #   wrap them in `with torch.autocast("cuda", dtype=torch.float16):` by hand)); this
        #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, self.opt_D, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        self.opt_D.step()
# file: fs_vid2vid.py
from vid2vid import Trainer as Vid2VidTrainer


class Trainer(Vid2VidTrainer):
    def frame(self, data, t):
        return data[0][t] * 2, data[1][t]
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    perceptual = torch.nn.Linear(4, 8).cuda().requires_grad_(False)
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D, perceptual)
    for batch in data:
        trainer.gen_update(batch)
''',
        codes=('APX102', 'APX220'),
    ),
    Example(
        # the launcher calls dis_losses() itself with outputs of its own: not every call of it
        # is an update of its class, so none is wrapped
        "loss-computed-from-what-the-callers-hand-over-refused-for-a-call-elsewhere",
        before=HANDED_OUTPUTS.replace(
            "        trainer.gen_update(batch)\n",
            "        trainer.gen_update(batch)\n        x, y = batch\n        trainer.dis_losses(net_D(net_G(x)), net_D(y))\n",
        ),
        after='''\
# file: setup_nets.py
import torch
from apexcompat import amp


def build(cfg, net_G, net_D):
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled in vid2vid.py
    #   (Trainer), which is subclassed, passed on or stored in fs_vid2vid.py, never called
    #   directly; it is built as `.Trainer(...)` of a module imported by name at run time
    #   (train.py:11, in main): which class that is, no GradScaler route can tell: the
    #   GradScaler cannot reach it; nor can a module-level GradScaler stand in (the
    #   GradScaler plan across files was dropped: in vid2vid.py, the forward pass and loss
    #   are not next to this amp.scale_loss (dis_losses() computes the loss from what it is
    #   handed, and not every call of it in the repository is a call on self in a method of
    #   Trainer or of a subclass of it in this file): wrap them in `with
    #   torch.autocast("cuda", dtype=torch.float16):` by hand); this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    [net_G, net_D], [opt_G, opt_D] = amp.initialize(
        [net_G, net_D], [opt_G, opt_D], opt_level=cfg.opt_level, num_losses=2
    )
    return net_G, net_D, opt_G, opt_D
# file: vid2vid.py
import torch
import torch.nn.functional as F
from apexcompat import amp


class Trainer:
    def __init__(self, net_G, net_D, opt_G, opt_D, perceptual):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.perceptual = perceptual

    def frame(self, data, t):
        return data[0][t], data[1][t]

    def gen_update(self, data):
        fake = None
        for t in range(len(data[0])):
            x, y = self.frame(data, t)
            fake = self.net_G(x)
            pred_fake, pred_real = self.net_D(fake.detach()), self.net_D(y)
            self.dis_losses(pred_fake, pred_real)
            pred_fake = self.net_D(fake)
            self.gen_losses(x, y, fake, pred_fake)

    def gen_losses(self, x, y, fake, pred_fake):
        self.opt_G.zero_grad()
        loss = F.softplus(-pred_fake).mean() + F.l1_loss(self.perceptual(fake), self.perceptual(y))
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (Trainer is subclassed, passed on or stored in fs_vid2vid.py, never
        #   called directly; it is built as `.Trainer(...)` of a module imported by name at run
        #   time (train.py:11, in main): which class that is, no GradScaler route can tell, so
        #   the GradScaler cannot follow its callers; nor can a module-level GradScaler stand in
        #   (the GradScaler plan across files was dropped: in vid2vid.py, the forward pass and
        #   loss are not next to this amp.scale_loss (dis_losses() computes the loss from what
        #   it is handed, and not every call of it in the repository is a call on self in a
        #   method of Trainer or of a subclass of it in this file): wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand)); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        self.opt_G.step()

    def dis_losses(self, pred_fake, pred_real):
        self.opt_D.zero_grad()
        loss = F.softplus(pred_fake).mean() + F.softplus(-pred_real).mean()
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (Trainer is subclassed, passed on or stored in fs_vid2vid.py, never
        #   called directly; it is built as `.Trainer(...)` of a module imported by name at run
        #   time (train.py:11, in main): which class that is, no GradScaler route can tell, so
        #   the GradScaler cannot follow its callers; nor can a module-level GradScaler stand in
        #   (the GradScaler plan across files was dropped: in vid2vid.py, the forward pass and
        #   loss are not next to this amp.scale_loss (dis_losses() computes the loss from what
        #   it is handed, and not every call of it in the repository is a call on self in a
        #   method of Trainer or of a subclass of it in this file): wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand)); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, self.opt_D, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        self.opt_D.step()
# file: fs_vid2vid.py
from vid2vid import Trainer as Vid2VidTrainer


class Trainer(Vid2VidTrainer):
    def frame(self, data, t):
        return data[0][t] * 2, data[1][t]
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    perceptual = torch.nn.Linear(4, 8).cuda().requires_grad_(False)
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D, perceptual)
    for batch in data:
        trainer.gen_update(batch)
        x, y = batch
        trainer.dis_losses(net_D(net_G(x)), net_D(y))
''',
        codes=('APX102', 'APX220'),
    ),
]


# a trainer class picked by name at run time (``importlib.import_module(cfg.trainer).Trainer``)
# is no definition that "no file calls": the launcher builds it, so it takes no new required
# scaler parameter (which that build would not pass: TypeError); the setup function keeps the
# GradScalers in a module-level variable instead (APX252), which the class reads
REPOSITORY_EXAMPLES += [
    Example(
        "trainer-class-built-by-name-reads-the-module-level-grad-scalers",
        before='''\
# file: setup_nets.py
import torch
from apex import amp


def build(cfg, net_G, net_D):
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    [net_G, net_D], [opt_G, opt_D] = amp.initialize(
        [net_G, net_D], [opt_G, opt_D], opt_level=cfg.opt_level, num_losses=2
    )
    return net_G, net_D, opt_G, opt_D
# file: trainer.py
import torch
import torch.nn.functional as F
from apex import amp


class Trainer:
    def __init__(self, net_G, net_D, opt_G, opt_D, perceptual):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.perceptual = perceptual

    def gen_update(self, data):
        x, y = data
        fake = self.net_G(x)
        loss = F.softplus(-self.net_D(fake)).mean()
        with amp.scale_loss(loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        self.opt_G.step()
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    perceptual = torch.nn.Linear(4, 8).cuda().requires_grad_(False)
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D, perceptual)
    for batch in data:
        trainer.gen_update(batch)
''',
        after='''\
# file: setup_nets.py
import torch


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
grad_scalers = None


def build(cfg, net_G, net_D):
    global grad_scalers
    opt_G = torch.optim.SGD(net_G.parameters(), lr=0.1)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=0.1)
    use_amp = cfg.opt_level != "O0"
    grad_scalers = [torch.amp.GradScaler(next((p.device.type for p in net_G.parameters()), "cuda") if use_amp else "cuda", enabled=use_amp) for _ in range(2)]
    return net_G, net_D, opt_G, opt_D
# file: trainer.py
import torch
import torch.nn.functional as F
import setup_nets


class Trainer:
    def __init__(self, net_G, net_D, opt_G, opt_D, perceptual):
        self.net_G, self.net_D, self.opt_G, self.opt_D = net_G, net_D, opt_G, opt_D
        self.perceptual = perceptual

    def gen_update(self, data):
        x, y = data
        with torch.autocast(next((p.device.type for g in self.opt_G.param_groups for p in g["params"]), "cuda"), dtype=torch.float16, enabled=setup_nets.grad_scalers[0].is_enabled()):
            fake = self.net_G(x)
            loss = F.softplus(-self.net_D(fake)).mean()
        setup_nets.grad_scalers[0].scale(loss).backward()
        setup_nets.grad_scalers[0].step(self.opt_G)
        setup_nets.grad_scalers[0].update()
# file: train.py
import importlib

import torch

from setup_nets import build


def main(cfg, data):
    net_G, net_D, opt_G, opt_D = build(cfg, torch.nn.Linear(4, 4).cuda(), torch.nn.Linear(4, 1).cuda())
    perceptual = torch.nn.Linear(4, 8).cuda().requires_grad_(False)
    trainer = importlib.import_module(cfg.trainer).Trainer(net_G, net_D, opt_G, opt_D, perceptual)
    for batch in data:
        trainer.gen_update(batch)
''',
        codes=("APX101", "APX201", "APX202", "APX203", "APX209", "APX252", "APX301", "APX311"),
    ),
]


#: STEP_HEIRS_REPO with a root class in a third file that keeps a ``self.scaler`` of its own
STEP_HEIRS_ROOT = '''\
# file: root.py
class Root:
    def __init__(self):
        self.scaler = 1.0
''' + STEP_HEIRS_REPO.replace("class BaseTrainer:\n", "from root import Root\n\n\nclass BaseTrainer(Root):\n").replace(
    "        self.cfg = cfg\n", "        super().__init__()\n        self.cfg = cfg\n", 1
)

REPOSITORY_EXAMPLES += [
    Example(
        # ... and the base class derives from a class of a third file that sets self.scaler:
        # the GradScaler both files reach through self takes a name the family leaves free
        "scaling-methods-stepped-by-a-subclass-whose-base-has-a-scaler-attribute-of-its-own",
        before=STEP_HEIRS_ROOT,
        after='''\
# file: root.py
class Root:
    def __init__(self):
        self.scaler = 1.0
''' + STEP_HEIRS_NATIVE.replace("class BaseTrainer:\n", "from root import Root\n\n\nclass BaseTrainer(Root):\n").replace(
            "        self.cfg = cfg\n", "        super().__init__()\n        self.cfg = cfg\n", 1
        ).replace("self.scaler", "self.grad_scaler"),
        codes=("APX101", "APX201", "APX202", "APX203", "APX226", "APX237", "APX301", "APX302"),
    ),
]


#: HOLDER_REPO with the holder class deriving from a class of a third file that reads a
#: ``scaler`` attribute of its own
HOLDER_BASE = "# file: base.py\nclass Base:\n    scaler = 'minmax'\n\n    def describe(self):\n        return self.scaler\n"

REPOSITORY_EXAMPLES.append(
    Example(
        # ... and the holder class derives from a class of another file that reads self.scaler:
        # the holder attribute takes a name its class family leaves free
        "amp-kept-on-an-object-read-as-a-holder-whose-base-has-a-scaler-attribute",
        before=HOLDER_BASE + HOLDER_REPO.replace("class Trainer:\n", "from base import Base\n\n\nclass Trainer(Base):\n"),
        after=HOLDER_BASE + HOLDER_REPO_NATIVE.replace(
            "class Trainer:\n", "from base import Base\n\n\nclass Trainer(Base):\n"
        ).replace(".scaler", ".grad_scaler"),
        codes=("APX101", "APX201", "APX202", "APX237"),
    )
)


#: stereo-transformer's shape: apex.amp (or None) handed to the training function of another
#: file, which has no apex import and scales, clips and steps through its parameter
AMP_VALUE_TO_A_TRAIN_MODULE = """\
# file: main.py
import torch

from engine import train_one_epoch


def save_checkpoint(path, model, optimizer, amp=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp is not None:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def main(args, model, optimizer, loader):
    if args.apex:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    else:
        amp = None
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, optimizer, args.clip_max_norm, amp)
        save_checkpoint("last.pt", model, optimizer, amp)
# file: engine.py
import torch


def train_one_epoch(model, loader, optimizer, max_norm=0.0, amp=None):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        if amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
"""
#: a script without apex.amp that calls that function with the parameter left to its default
AMP_VALUE_TUNE = """\
# file: tune.py
from engine import train_one_epoch


def tune(model, loader, optimizer):
    train_one_epoch(model, loader, optimizer)
"""

REPOSITORY_EXAMPLES += [
    Example(
        # the launcher gives the GradScaler (disabled where apex was not initialized) in apex.amp's
        # slot (APX230); the function's file, without apex, reads its parameter as the GradScaler
        # (APX271): its test, scale_loss, clip and step become the scaler's, and autocast goes
        # around the forward pass of the model the launcher initialized and handed in
        "amp-or-none-given-to-a-training-function-of-another-file",
        before=AMP_VALUE_TO_A_TRAIN_MODULE,
        after="""\
# file: main.py
import torch

from engine import train_one_epoch


def save_checkpoint(path, model, optimizer, scaler=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if scaler.is_enabled():
        state["amp"] = scaler.state_dict()
    torch.save(state, path)


def main(args, model, optimizer, loader):
    use_amp = bool(args.apex)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(args.epochs):
        train_one_epoch(model, loader, optimizer, args.clip_max_norm, scaler)
        save_checkpoint("last.pt", model, optimizer, scaler)
# file: engine.py
import torch


def train_one_epoch(model, loader, optimizer, max_norm=0.0, amp=None):
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        if amp.is_enabled():
            amp.scale(loss).backward()
        else:
            loss.backward()
        if max_norm > 0:
            amp.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        amp.step(optimizer)
        amp.update()
""",
        codes=("APX101", "APX201", "APX209", "APX230", "APX271", "APX301", "APX311", "APX325", "APX401"),
    ),
    Example(
        # ... but a file without apex.amp calls it too, where the parameter keeps its default
        # None: no GradScaler fills that slot there, so the launcher keeps the shim and says why
        "amp-or-none-given-to-a-training-function-another-file-calls-without-it",
        before=AMP_VALUE_TO_A_TRAIN_MODULE + AMP_VALUE_TUNE,
        after="""\
# file: main.py
import torch

from engine import train_one_epoch


def save_checkpoint(path, model, optimizer, amp=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp is not None:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def main(args, model, optimizer, loader):
    if args.apex:
        from apexcompat import amp
        # TODO(apexcompat): no amp.scale_loss in this file, and it is not proven that no loss is
        #   scaled after its amp.initialize: the launcher is no script (no __name__ ==
        #   "__main__" guard, no test module, and importing it runs no amp.initialize): its
        #   callers are not known; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    else:
        amp = None
    for epoch in range(args.epochs):
        # TODO(apexcompat): apex.amp is passed on as a value here: train_one_epoch() of
        #   engine.py scales losses through its parameter amp, and tune.py also refers to it,
        #   which would still hand it apex.amp or None; this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
        train_one_epoch(model, loader, optimizer, args.clip_max_norm, amp)
        save_checkpoint("last.pt", model, optimizer, amp)
# file: engine.py
import torch


def train_one_epoch(model, loader, optimizer, max_norm=0.0, amp=None):
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        if amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
"""
        + AMP_VALUE_TUNE,
        codes=("APX102", "APX220"),
    ),
]

#: the engine of ``AMP_VALUE_TO_A_TRAIN_MODULE`` scaling in a nested function
AMP_VALUE_NESTED_ENGINE = """\
# file: engine.py
import torch


def train_one_epoch(model, loader, optimizer, max_norm=0.0, amp=None):
    def backward(loss):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()

    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        if amp is not None:
            backward(loss)
        else:
            loss.backward()
        if max_norm > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
"""

REPOSITORY_EXAMPLES.append(
    Example(
        # ... but the function scales through its parameter in a nested function, a scope the
        # plan (which reads uses) does not see: its file refuses, the plan is dropped, and the
        # launcher keeps the shim with that reason
        "amp-or-none-given-to-a-training-function-that-scales-in-a-nested-scope",
        before=AMP_VALUE_TO_A_TRAIN_MODULE[: AMP_VALUE_TO_A_TRAIN_MODULE.index("# file: engine.py")]
        + AMP_VALUE_NESTED_ENGINE,
        after="""\
# file: main.py
import torch

from engine import train_one_epoch


def save_checkpoint(path, model, optimizer, amp=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
    if amp is not None:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def main(args, model, optimizer, loader):
    if args.apex:
        from apexcompat import amp
        # TODO(apexcompat): the GradScaler plan across files was dropped: in engine.py, apex.amp
        #   (or None) is given to train_one_epoch() as its parameter amp by the launcher, and
        #   train_one_epoch() rebinds, initializes or reads amp from a nested scope, so that
        #   parameter cannot carry the GradScaler; this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    else:
        amp = None
    for epoch in range(args.epochs):
        # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed
        #   (the GradScaler plan across files was dropped: in engine.py, apex.amp (or None) is
        #   given to train_one_epoch() as its parameter amp by the launcher, and
        #   train_one_epoch() rebinds, initializes or reads amp from a nested scope, so that
        #   parameter cannot carry the GradScaler); this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        train_one_epoch(model, loader, optimizer, args.clip_max_norm, amp)
        save_checkpoint("last.pt", model, optimizer, amp)
"""
        + AMP_VALUE_NESTED_ENGINE,
        codes=("APX102", "APX220"),
    )
)

# the caller-step route: a backward helper whose launchers in other files step after each call
from ._caller_step_examples import CALLER_STEP_EXAMPLES  # noqa: E402

REPOSITORY_EXAMPLES += CALLER_STEP_EXAMPLES

# the returning route received at a script's top level (LightningDOT's train_itm.py)
from ._module_receiver_examples import MODULE_RECEIVER_EXAMPLES  # noqa: E402

REPOSITORY_EXAMPLES += MODULE_RECEIVER_EXAMPLES

# the stepless route: a training initialize whose optimizers are never stepped and never leave its function
from ._stepless_examples import STEPLESS_EXAMPLES  # noqa: E402

REPOSITORY_EXAMPLES += STEPLESS_EXAMPLES

# the flag route: apex.amp (or None) handed to a helper that initializes it under its test (unilm's s2s-ft)
from ._flag_param_examples import FLAG_PARAM_EXAMPLES  # noqa: E402

REPOSITORY_EXAMPLES += FLAG_PARAM_EXAMPLES

# a GradScaler a file makes on its own beside apex's sites never stands in for apex's (sockeye)
from ._own_scaler_examples import OWN_SCALER_EXAMPLES  # noqa: E402

REPOSITORY_EXAMPLES += OWN_SCALER_EXAMPLES

#: a trainer scaling in a method over the optimizer it is handed, which its train() calls on self
#: and steps after (the Hugging Face Trainer of 2020: ``_training_step(model, inputs, optimizer)``)
HANDED_STEP_REPO = '''\
# file: pkg/__init__.py
# file: pkg/trainer.py
import torch
from apex import amp


class Trainer:
    def __init__(self, model, fp16=False, accum=1):
        self.model = model
        self.fp16 = fp16
        self.accum = accum

    def train(self, batches):
        model = self.model
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if self.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for step, (x, y) in enumerate(batches):
            self._training_step(model, x, y, optimizer)
            if (step + 1) % self.accum == 0:
                optimizer.step()
                model.zero_grad()

    def _training_step(self, model, x, y, optimizer):
        loss = torch.nn.functional.mse_loss(model(x), y) / self.accum
        if self.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
# file: train.py
import torch

from pkg.trainer import Trainer


def main(batches):
    Trainer(torch.nn.Linear(4, 1), fp16=True).train(batches)


if __name__ == "__main__":
    main([])
'''
HANDED_STEP_REPO_NATIVE = '''\
# file: pkg/__init__.py
# file: pkg/trainer.py
import torch


class Trainer:
    def __init__(self, model, fp16=False, accum=1):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.fp16 = fp16
        self.accum = accum

    def train(self, batches):
        model = self.model
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        use_amp = bool(self.fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for step, (x, y) in enumerate(batches):
            self._training_step(model, x, y, optimizer)
            if (step + 1) % self.accum == 0:
                self.scaler.step(optimizer)
                self.scaler.update()
                model.zero_grad()

    def _training_step(self, model, x, y, optimizer):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x), y) / self.accum
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        return loss.item()
# file: train.py
import torch

from pkg.trainer import Trainer


def main(batches):
    Trainer(torch.nn.Linear(4, 1), fp16=True).train(batches)


if __name__ == "__main__":
    main([])
'''
#: the same trainer, left on the shim, where another file calls a method of that name
HANDED_STEP_KEPT = '''\
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model, fp16=False, accum=1):
        self.model = model
        self.fp16 = fp16
        self.accum = accum

    def train(self, batches):
        model = self.model
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if self.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for step, (x, y) in enumerate(batches):
            self._training_step(model, x, y, optimizer)
            if (step + 1) % self.accum == 0:
                optimizer.step()
                model.zero_grad()

    def _training_step(self, model, x, y, optimizer):
        loss = torch.nn.functional.mse_loss(model(x), y) / self.accum
        if self.fp16:
            # TODO(apexcompat): optimizer.step() is not in the same function as amp.scale_loss, and
            #   optimizer is a parameter of Trainer._training_step(), a method, and pkg/probe.py (in
            #   probe()) calls a method of that name, whose step of what it hands on is not
            #   followed; this file keeps apex.amp semantics through apexcompat.amp, migrate it by
            #   hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
'''
HANDED_STEP_PROBE = '''\
# file: pkg/probe.py
def probe(trainer, model, x, y, optimizer):
    """One step of the trainer's own backward, for a learning-rate probe."""
    trainer._training_step(model, x, y, optimizer)
    optimizer.step()
'''
#: a trainer whose train() clears the gradients, then calls its scaling method on self and reads
#: amp.master_params, and a file calling a method train() on some other object
AFRESH_REPO = '''\
# file: pkg/__init__.py
# file: pkg/trainer.py
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.model = model
        self.optimizer = optimizer
        self.fp16 = fp16

    def train(self, batches):
        if self.fp16:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
        self.model.zero_grad()
        for x, y in batches:
            self.training_step(x, y)
            if self.fp16:
                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)
            else:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.optimizer.step()
            self.model.zero_grad()

    def training_step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        if self.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
# file: pkg/fit.py
import torch


def fit(model, batches, optimizer):
    """A plain loop of another package that sets its model to training mode first."""
    model.zero_grad()
    model.train()
    for x, y in batches:
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
'''
AFRESH_REPO_NATIVE = '''\
# file: pkg/__init__.py
# file: pkg/trainer.py
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16=False):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer
        self.fp16 = fp16

    def train(self, batches):
        use_amp = bool(self.fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.model.zero_grad()
        for x, y in batches:
            self.training_step(x, y)
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.model.zero_grad()

    def training_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        return loss.item()
# file: pkg/fit.py
import torch


def fit(model, batches, optimizer):
    """A plain loop of another package that sets its model to training mode first."""
    model.zero_grad()
    model.train()
    for x, y in batches:
        torch.nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()
'''


def trainer_of(repository: str) -> str:
    """The text of ``pkg/trainer.py`` in a ``# file:`` repository example."""
    return repository.split("# file: pkg/trainer.py\n", 1)[1].split("# file: ", 1)[0]


REPOSITORY_EXAMPLES += [
    Example(
        # the method scales over the optimizer it is handed; its only calls are self's, in
        # train(), which steps that optimizer after each accumulation: the step goes through the
        # GradScaler the initialize in train() puts on self, which the method reads there
        "method-scaling-a-handed-optimizer-followed-to-its-self-callers",
        before=HANDED_STEP_REPO,
        after=HANDED_STEP_REPO_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # ... but another file calls a method of that name, and what it steps is not followed:
        # the file keeps apex.amp and says where
        "method-scaling-a-handed-optimizer-called-from-another-file-keeps-the-shim",
        before=HANDED_STEP_REPO + HANDED_STEP_PROBE,
        after=HANDED_STEP_REPO.replace(trainer_of(HANDED_STEP_REPO), HANDED_STEP_KEPT) + HANDED_STEP_PROBE,
        codes=("APX102", "APX220"),
    ),
    Example(
        # train() reads amp.master_params after calling its scaling method on self, and another
        # file calls a method train() (an nn.Module's, most likely): train() clears the
        # gradients before its first scaled backward, so whoever calls it, what it reads comes
        # from its own scaled backwards, and its own unscale_ is right
        "master-params-method-clearing-the-gradients-first-unscales-itself",
        before=AFRESH_REPO,
        after=AFRESH_REPO_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311", "APX322"),
    ),
]
