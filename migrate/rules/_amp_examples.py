"""The documented examples of the apex.amp rules (initialize, scale_loss, step, clipping,
checkpoints, imports): each is a whole script before and after the migration, with the codes
it reports. tests/migrate/test_rules_amp.py runs them through the whole rule pipeline and the
docs page lists them; ``InitializeRule`` carries them."""

from __future__ import annotations

from typing import List

from ..settings import Settings
from .base import Example


#: AutoTinyBERT's setup pass: the epoch loop creates the optimizer and initializes under a
#: test of its loop variable, on the first epoch that runs
SETUP_PASS = """\
import torch
from apex import amp


def main(args, model, loaders):
    for epoch in range(args.epochs):
        if epoch < args.start:
            continue
        if epoch == args.start:
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            if args.fp16:
                model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loaders[epoch]:
            loss = model(x).sum()
            if args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
"""

#: the same, with the optimizer created before the loop
SETUP_PASS_OUTSIDE = SETUP_PASS.replace(
    "    for epoch in range(args.epochs):\n",
    "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n    for epoch in range(args.epochs):\n",
).replace("            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n", "")

#: the typical apex.amp loop (shown migrated for two target torch versions)
LINEAR_LOOP = """\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""

#: a forward pass in a try whose handler frees memory and skips the batch, then the loss
FORWARD_IN_A_TRY = """\
import torch
from apex import amp

net = build_encoder().cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
net, opt = amp.initialize(net, opt, opt_level="O1")
for x, label in loader:
    try:
        out = net(x)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        continue
    loss = net.head.loss(out, label)
    opt.zero_grad()
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
"""
#: that handler, and the same clearing the gradients in a loop first
_OOM_SKIP = """\
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
        continue
"""
_OOM_SKIP_CLEARING = """\
    except torch.cuda.OutOfMemoryError:
        for p in net.parameters():
            p.grad = None
        torch.cuda.empty_cache()
        continue
"""

#: an optimizer held by a parameter of the function that scales the loss, stepped through it
HELD_BY_A_PARAMETER = """\
import torch
from apex import amp


def train(model, schedule, batches, fp16):
    for x in batches:
        schedule.zero_grad()
        loss = model(x).mean()
        if fp16:
            with amp.scale_loss(loss, schedule.inner) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        schedule.step()


def main(model, schedule, batches, fp16):
    if fp16:
        model, schedule.inner = amp.initialize(model, schedule.inner, opt_level="O1")
    train(model, schedule, batches, fp16)
"""
HELD_BY_A_PARAMETER_TODO = """\
            # TODO(apexcompat): schedule.inner.step() is not in the same function as amp.scale_loss,
            #   and schedule.step() steps schedule, which holds it: schedule is a parameter of
            #   train(), whose class is not followed into it, so its step() is not proven to step
            #   schedule.inner once (GradScaler.step needs the optimizer it unscaled, or a proven
            #   wrapper of it); this file keeps apex.amp semantics through apexcompat.amp, migrate
            #   it by hand
"""


#: an epoch function under a decorator not known to return it: the scaler cannot be passed
OTHER_DECORATOR = """\
import torch
from apex import amp

from tools import timed


@timed
def train_one_epoch(model, optimizer, batches):
    for x in batches:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def main(batches):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for epoch in range(10):
        train_one_epoch(model, optimizer, batches)
"""
OTHER_DECORATOR_TODO = """\
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to
        #   train_one_epoch: train_one_epoch is decorated; this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
"""

#: a setup helper holding the initialize, called on the training and the evaluation path
SETUP_CALLED_TWICE = """\
import torch
from apex import amp


def setup(model, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def train(model, optimizer, batches):
    for x in batches:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def main(do_train, batches):
    model = torch.nn.Linear(8, 1).cuda()
    if do_train:
        model, optimizer = setup(model, 0.1)
        train(model, optimizer, batches)
    else:
        model, _ = setup(model, 0.0)
        return model(batches[0])
"""
SETUP_CALLED_TWICE_NATIVE = """\
import torch


def setup(model, lr):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    scaler = torch.amp.GradScaler("cuda")
    return model, optimizer, scaler


def train(model, optimizer, batches, scaler):
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(do_train, batches):
    model = torch.nn.Linear(8, 1).cuda()
    if do_train:
        model, optimizer, scaler = setup(model, 0.1)
        train(model, optimizer, batches, scaler)
    else:
        model, _, scaler = setup(model, 0.0)
        return model(batches[0])
"""
#: the setup helper called in a branch, the training function after that branch: the name it
#: would unpack is not bound on the path that skips the branch
SETUP_IN_A_BRANCH_TODO = """\
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to train:
        #   amp.initialize is in setup(), and main() calls train() where no call of setup()
        #   before it in the same block would hand the GradScaler back; this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
"""
#: the setup helper run in a branch, the loss scaled after that branch in the same function
LOSS_SCALED_AFTER_THE_SETUP_BRANCH = """\
import torch
from apex import amp


def setup(model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def main(args, loader):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = setup(model)
    for x in loader:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
LOSS_SCALED_AFTER_THE_SETUP_BRANCH_TODO = """\
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to main:
        #   amp.initialize is in setup(), and main() scales a loss where no call of setup()
        #   before it in the same block would hand the GradScaler back; this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
"""
#: a setup helper that returns before amp.initialize when mixed precision is off: that return
#: hands back a disabled GradScaler, and the caller's autocast follows the one it unpacks
SETUP_RETURNS_EARLY_WHEN_OFF = """\
import torch
from apex import amp


def build(model, lr, half):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    if not half:
        return model, optimizer
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer


def fit(model, batches, half):
    model, optimizer = build(model, 0.1, half)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        if half:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
"""
SETUP_RETURNS_EARLY_WHEN_OFF_NATIVE = """\
import torch


def build(model, lr, half):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    if not half:
        return model, optimizer, torch.amp.GradScaler("cuda", enabled=False)
    scaler = torch.amp.GradScaler("cuda")
    return model, optimizer, scaler


def fit(model, batches, half):
    model, optimizer, scaler = build(model, 0.1, half)
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
"""
#: the early return decided by a flag the helper itself sets (a run-once guard): on a later
#: call apex's state from the first would still be on, so no disabled GradScaler is handed back
SETUP_RETURNS_EARLY_ON_ITS_OWN_FLAG = """\
import torch
from apex import amp


def build(model, state, half):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if state.ready:
        return model, optimizer
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    state.ready = True
    return model, optimizer


def fit(model, state, batches, half):
    model, optimizer = build(model, state, half)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
SETUP_RETURNS_EARLY_ON_ITS_OWN_FLAG_SHIM = """\
import torch
from apexcompat import amp


def build(model, state, half):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if state.ready:
        return model, optimizer
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    state.ready = True
    return model, optimizer


def fit(model, state, batches, half):
    model, optimizer = build(model, state, half)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to fit:
        #   amp.initialize is in build(), which returns before it (line 8), a return not proven
        #   to be the path without mixed precision (a tuple like its other returns, under tests
        #   of its own parameters only, which it never sets); this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
#: the same flag tested with the early return in its else branch
SETUP_RETURNS_EARLY_IN_THE_ELSE_OF_ITS_OWN_FLAG = """\
import torch
from apex import amp


def build(model, state, half):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if not state.ready:
        pass
    else:
        return model, optimizer
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    state.ready = True
    return model, optimizer


def fit(model, state, batches, half):
    model, optimizer = build(model, state, half)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
SETUP_RETURNS_EARLY_IN_THE_ELSE_OF_ITS_OWN_FLAG_SHIM = """\
import torch
from apexcompat import amp


def build(model, state, half):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if not state.ready:
        pass
    else:
        return model, optimizer
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    state.ready = True
    return model, optimizer


def fit(model, state, batches, half):
    model, optimizer = build(model, state, half)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to fit:
        #   amp.initialize is in build(), which returns before it (line 10), a return not proven
        #   to be the path without mixed precision (a tuple like its other returns, under tests
        #   of its own parameters only, which it never sets); this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
#: a restore helper that initializes and an epoch function that scales, neither calling the
#: other, both called only from other files: nothing in this file could hand a GradScaler on
RESTORE_AND_EPOCH_CALLED_ELSEWHERE = """\
import torch

try:
    from apex import amp
except ImportError:
    pass


def restore(folder, model, optimizer, half=False):
    if half:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return 0


def run_epoch(model, optimizer, batches, half=False):
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        if half:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
"""
RESTORE_AND_EPOCH_CALLED_ELSEWHERE_TODO = """\
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to run_epoch:
            #   amp.initialize is in restore(), which no function of this file calls, so no caller
            #   here could hand its GradScaler on; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
"""
#: an epoch function the training path hands the optimizer to and the evaluation path calls
#: without one: the evaluation path has no GradScaler to pass
EPOCH_ALSO_RUN_BY_EVALUATION = """\
import torch
from apex import amp


def run_epoch(model, batches, optimizer=None, fp16=False):
    for x in batches:
        loss = model(x).pow(2).mean()
        if optimizer is not None:
            if fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()


def train(args, model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        amp.initialize(model, optimizer, opt_level="O1")
    run_epoch(model, batches, optimizer, fp16=args.fp16)


def evaluate(model, batches):
    with torch.no_grad():
        run_epoch(model, batches)


def main(args, batches):
    if args.mode == "train":
        train(args, torch.nn.Linear(8, 1).cuda(), batches)
    else:
        evaluate(torch.nn.Linear(8, 1).cuda(), batches)
"""
EPOCH_ALSO_RUN_BY_EVALUATION_TODO = """\
                # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to run_epoch:
                #   run_epoch() is also called from evaluate(), finetune(), where no GradScaler exists;
                #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""
#: a second caller without a GradScaler whose call may reach the scale_loss
FINETUNE_WITHOUT_SCALER = """\


def finetune(model, batches, optimizer):
    run_epoch(model, batches, optimizer, fp16=True)
"""

#: a Trainer class built after initialize, the scaler handed to it (two examples use it)
TRAINER_BUILT_AFTER_INITIALIZE = '''\
import torch
from apex import amp


class Trainer:
    """Runs the optimisation."""

    def __init__(self, model, optimizer, clip=1.0):
        self.model = model
        self.optimizer = optimizer
        self.clip = clip

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def optimizer_step(self):
        torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.clip)
        self.optimizer.step()
        self.optimizer.zero_grad()

    def fit(self, batches):
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
            self.optimizer_step()


def main(args):
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    trainer = Trainer(model, optimizer)
    trainer.fit(loader)
'''

#: ... and its float16 migration
TRAINER_BUILT_AFTER_INITIALIZE_MIGRATED = '''\
import torch


class Trainer:
    """Runs the optimisation."""

    def __init__(self, model, optimizer, clip=1.0, *, scaler):
        self.scaler = scaler
        self.model = model
        self.optimizer = optimizer
        self.clip = clip

    def backward(self, loss):
        self.scaler.scale(loss).backward()

    def optimizer_step(self):
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_((p for group in self.optimizer.param_groups for p in group["params"]), self.clip)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def fit(self, batches):
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
            self.backward(loss)
            self.optimizer_step()


def main(args):
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    trainer = Trainer(model, optimizer, scaler=scaler)
    trainer.fit(loader)
'''

#: the scaler threaded into a same-file function (a float16 and a bfloat16 example)
SCALER_PASSED_TO_A_FUNCTION = """\
import torch
from apex import amp


def train_epoch(model, optimizer, loader):
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for epoch in range(args.epochs):
        train_epoch(model, optimizer, loader)
"""

#: amp.initialize in a Trainer's __init__ (a float16 and a bfloat16 example)
TRAINER_CLASS = """\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
"""

#: a linear model's loop with statements between its loss and its scale_loss (two examples)
BETWEEN_LOSS_AND_SCALE_LOSS = """\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for {loop}:
    logits = model(x)
    loss = torch.nn.functional.cross_entropy(logits, y)
{between}    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""

#: BETWEEN_LOSS_AND_SCALE_LOSS migrated: the statements between stay after the autocast region
BETWEEN_LOSS_AND_SCALE_LOSS_MIGRATED = """\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for {loop}:
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
{between}    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
"""

#: an if that only leaves, and statements that leave the loss alone (metrics, logging)
EXIT_GUARD = dict(
    loop="step, (x, y) in enumerate(loader)",
    between="""\
    if not torch.isfinite(loss):
        print("skipping a batch with a non-finite loss at step", step)
        continue
""",
)
METRICS = dict(
    loop="x, y in loader",
    between="""\
    with torch.no_grad():
        accuracy = (logits.argmax(dim=1) == y).float().mean()
    for meter, value in ((loss_meter, loss), (accuracy_meter, accuracy)):
        meter.update(value.item(), x.size(0))
""",
)

#: a learner whose range test and training each initialize and scale their own losses; the
#: range test's loss is scaled in a helper method (``{extra}``: one more method, or nothing)
INITIALIZE_PER_METHOD = """\
import torch
{import_line}

class Learner:
    def __init__(self, model, fp16):
{init_scaler}        self.model, self.fp16 = model, fp16

    def lr_range_test(self, batches, lr):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=lr)
{range_init}        for x, y in batches:
            self._probe(optimizer, x, y)

    def _probe(self, optimizer, x, y):
        optimizer.zero_grad()
{probe_loss}{probe_backward}{probe_step}
    def fit(self, batches, lr):
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
{fit_init}        for x, y in batches:
            optimizer.zero_grad()
{fit_loss}{fit_backward}{fit_step}{extra}"""

#: the parts of INITIALIZE_PER_METHOD written with apex.amp
PER_METHOD_APEX = dict(
    import_line="from apex import amp\n",
    init_scaler="",
    range_init="        if self.fp16:\n"
    "            self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=\"O1\")\n",
    probe_loss="        loss = torch.nn.functional.mse_loss(self.model(x), y)\n",
    probe_backward="        with amp.scale_loss(loss, optimizer) as scaled_loss:\n            scaled_loss.backward()\n",
    probe_step="        optimizer.step()\n",
    fit_init="        if self.fp16:\n"
    "            self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=\"O1\")\n",
    fit_loss="            loss = torch.nn.functional.mse_loss(self.model(x), y)\n",
    fit_backward="            with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
    "                scaled_loss.backward()\n",
    fit_step="            optimizer.step()\n",
    extra="",
)

#: a trainer that imports apex.amp in __init__ and uses it in another method
UNBOUND_AMP = """\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer, self.fp16 = model, optimizer, fp16
{import_block}
    def step(self, loss):
        if self.fp16:
{todo}            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
"""

#: each initialize of INITIALIZE_PER_METHOD migrated
#: __init__ initializes under a test; a restore method initializes the same objects again
#: under a test that includes it, before amp.load_state_dict (apex raised there)
RESTORE_REINITIALIZES = '''\
import torch
from apex import amp


class Fitter:
    """Fits a network; a checkpoint resumes it."""

    def __init__(self, net, opt, half=None):
        self.net = net
        self.opt = opt
        self.half = half
        if self.half is not None:
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level=self.half)

    def step(self, x, y):
        self.opt.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        if self.half is not None:
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.opt.step()
        return loss.item()

    def checkpoint(self):
        state = {"net": self.net.state_dict(), "opt": self.opt.state_dict()}
        if self.half is not None:
            state["amp"] = amp.state_dict()
        return state

    def resume(self, state):
        if self.half is not None and "amp" in state:
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level=self.half)
            amp.load_state_dict(state["amp"])
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
'''

PER_METHOD_SCALER = (
    '        use_amp = bool(self.fp16)\n'
    '        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)\n'
)
#: a method that calls the range test's helper without an initialize before it
WARM_UP = "\n    def warm_up(self, optimizer, x, y):\n        self._probe(optimizer, x, y)\n"

#: a run-once guard around the initialize whose flag ``__init__`` never sets (the shim keeps
#: it: see fallback-run-once-guard; with the flag set there, run-once-guard-scaler-in-its-branch)
RUN_ONCE_GUARD = """\
import torch

try:
    from apex import amp
except ImportError:
    amp = None


class Fitter:
    def __init__(self, net, half):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.half = half

    def prepare(self):
        if self.half and not getattr(self, "amp_ready", False):
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")
            self.amp_ready = True

    def fit_batch(self, x, y):
        self.prepare()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        with amp.scale_loss(loss, self.opt) as scaled:
            scaled.backward()
        self.opt.step()
        return loss.item()
"""
RUN_ONCE_INIT = '            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")\n'
RUN_ONCE_TODO = """\
            # TODO(apexcompat): the test `self.half and not getattr(self, "amp_ready", False)`
            #   around amp.initialize reads self.amp_ready, which its own branch assigns (a run-once
            #   guard): a GradScaler created after that if with this test as its switch would be
            #   disabled; the GradScaler created in its branch instead needs a disabled one first:
            #   Fitter.__init__ does not set self.amp_ready in its own body; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
"""


SETUP_LOOP = """\
import torch
{head}

def fit(heads, opts, batches, half, level):
{setup}    for x, y in batches:
        for k in range(len(heads)):
            head, opt = heads[k], opts[k]
            opt.zero_grad()
{train}"""
SETUP_LOOP_APEX = """\
    if half:
        for k in range(len(heads)):
            head, opt = amp.initialize(heads[k], opts[k], opt_level=level)
            heads[k], opts[k] = head, opt
"""
SETUP_LOOP_NATIVE = """\
    if half:
        for k in range(len(heads)):
            head, opt = heads[k], opts[k]
            heads[k], opts[k] = head, opt
    use_amp = bool(half and level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
"""
SETUP_LOOP_TRAIN_APEX = """\
            loss = torch.nn.functional.mse_loss(head(x), y)
            if half:
                with amp.scale_loss(loss, opt) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            opt.step()
"""
SETUP_LOOP_TRAIN_NATIVE = """\
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = torch.nn.functional.mse_loss(head(x), y)
            if half:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            scaler.step(opt)
            scaler.update()
"""
SETUP_LOOP_VARYING = """\
    levels = ["O1", "O2"]
    for k in range(len(heads)):
        head, opt = amp.initialize(heads[k], opts[k], opt_level=levels[k])
        heads[k], opts[k] = head, opt
"""
SETUP_LOOP_VARYING_TODO = """\
    levels = ["O1", "O2"]
    for k in range(len(heads)):
        # TODO(apexcompat): amp.initialize runs in a loop whose passes change its options (k):
        #   one GradScaler cannot follow each pass; this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        head, opt = amp.initialize(heads[k], opts[k], opt_level=levels[k])
        heads[k], opts[k] = head, opt
"""

WORKING_LOOP = """\
import torch
{head}

def fit(models, optimizers, batches, half):
    if half:
        for k in range(len(models)):
            model, optimizer = amp.initialize(models[k], optimizers[k], opt_level="O1")
            models[k] = torch.nn.DataParallel(model)
            optimizers[k] = optimizer
    for x, y in batches:
        for k in range(len(models)):
            model, optimizer = models[k], optimizers[k]
            loss = torch.nn.functional.mse_loss(model(x), y)
{todo}            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
            optimizer.step()
"""
WORKING_LOOP_TODO = """\
            # TODO(apexcompat): amp.initialize runs inside the loop at line 7, which does more than
            #   initialize, and the GradScaler is used after it; this file keeps apex.amp semantics
            #   through apexcompat.amp, migrate it by hand
"""

AMP_OR_NONE_PASSED_ON = """\
import torch


def run_epoch(model, optimizer, batches, amp, clip):
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        if amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if amp:
            params = amp.master_params(optimizer)
        else:
            params = model.parameters()
        torch.nn.utils.clip_grad_norm_(params, clip)
        optimizer.step()
    report(amp)
    return amp.state_dict() if amp else None


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    if args.opt_level:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    else:
        amp = None
    for epoch in range(args.epochs):
        amp_state = run_epoch(model, optimizer, loader, amp, args.clip)
    torch.save({"model": model.state_dict(), "amp": amp_state}, "last.pt")
"""


#: the same without the function passing its parameter on (natively migrated)
AMP_OR_NONE_GIVEN = AMP_OR_NONE_PASSED_ON.replace("    report(amp)\n", "")


#: a helper handed apex.amp or None initializes it through its parameter and loads its state,
#: while its caller binds the module (or None) itself and scales the losses, and ``main`` calls
#: the caller (planbug23): the parameter route took the helper's parameter as carrying the
#: caller's GradScaler, the initialize made another one there, and the cross-file plan, which
#: saw no initialize in the file, threaded a third into ``main`` "from another file"
INITIALIZED_THROUGH_PARAMETER = """\
import torch


def prepare(args, model, state, amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.level)
        if state:
            amp.load_state_dict(state["amp"])
    return model, optimizer


def train(args, model, batches, state):
    if args.fp16:
        from apex import amp
    else:
        amp = None
    model, optimizer = prepare(args, model, state, amp=amp)
    for x in batches:
        loss = model(x).mean()
        optimizer.zero_grad()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()


def main(args):
    train(args, torch.nn.Linear(4, 1).cuda(), [], None)
"""
#: its TODOs, each put above its anchor: at the call handing the module over, and at the
#: scale_loss
INITIALIZED_THROUGH_PARAMETER_TODOS = (
    (
        "    model, optimizer = prepare(",
        "    # TODO(apexcompat): apex.amp (or None) is given to prepare() as its parameter amp, on\n"
        "    #   which prepare() calls amp.initialize: the GradScaler would be created in prepare()\n"
        "    #   from a module handed in as a value, which no route follows; this file keeps apex.amp\n"
        "    #   semantics through apexcompat.amp, migrate it by hand\n",
    ),
    (
        "            with amp.scale_loss",
        "            # TODO(apexcompat): the scaler cannot reach this amp.scale_loss: apex.amp (or None) is\n"
        "            #   given to prepare() as its parameter amp, on which prepare() calls amp.initialize:\n"
        "            #   the GradScaler would be created in prepare() from a module handed in as a value,\n"
        "            #   which no route follows; this file keeps apex.amp semantics through apexcompat.amp,\n"
        "            #   migrate it by hand\n",
    ),
)
#: its TODO since that parameter is read as an on/off flag (``_amp_flag_param``): prepare()
#: uses the GradScaler itself (its state loaded), so it is not handed back, and without the
#: repository's plan no module-level GradScaler stands in
HELPER_USES_ITS_SCALER_TODOS = (
    (
        "            with amp.scale_loss",
        '            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to train:\n'
        '            #   train() gets the model and optimizer from prepare(), where amp.initialize is, which\n'
        '            #   uses the GradScaler itself after creating it, so it is not handed back as one more\n'
        '            #   returned value; this file keeps apex.amp semantics through apexcompat.amp, migrate\n'
        '            #   it by hand\n'
    ),
)
#: the module-level apex.amp handed to a helper that initializes it, the losses scaled by the caller
MODULE_AMP_INITIALIZED_THROUGH_PARAMETER = """\
import torch
from apex import amp


def prepare(model, state, amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    if state:
        amp.load_state_dict(state)
    return model, optimizer


def train(model, batches):
    model, optimizer = prepare(model, None, amp)
    for x in batches:
        loss = model(x).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
#: the same run as a script, its ``main`` called under the ``__main__`` guard
INITIALIZED_THROUGH_PARAMETER_SCRIPT = INITIALIZED_THROUGH_PARAMETER + """\


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--level", default="O1")
    main(parser.parse_args())
"""
#: the same with the parameter named ``amp_module`` (and the import bound to that name)
INITIALIZED_THROUGH_PARAMETER_RENAMED = (
    INITIALIZED_THROUGH_PARAMETER.replace("amp=amp", "amp_module=amp_module")
    .replace("state, amp)", "state, amp_module)")
    .replace("if amp:", "if amp_module:")
    .replace("amp.", "amp_module.")
    .replace("from apex import amp", "from apex import amp as amp_module")
    .replace("amp = None", "amp_module = None")
)


def _initialized_through_parameter_shim(before: str, todos=INITIALIZED_THROUGH_PARAMETER_TODOS) -> str:
    """``before`` (one of the shapes above) kept on the shim, with its two TODOs."""
    after = before.replace("from apex import amp", "from apexcompat import amp")
    for anchor, todo in todos:
        after = after.replace(anchor, todo + anchor)
    return after


#: a script whose training runs under its ``__main__`` guard, the initialize in an ``if``
#: there and the losses scaled by module-level functions
MAIN_GUARD_SCRIPT = """\
import argparse

import torch
from apex import amp


def update(loss, optimizer, half):
    if half:
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
    else:
        loss.backward()
    optimizer.step()


def fit(net, optimizer, batches, half):
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        update(loss, optimizer, half)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--half", action="store_true")
    args = parser.parse_args()
    net = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    if args.half:
        net, optimizer = amp.initialize(net, optimizer, opt_level="O1")
    fit(net, optimizer, [], args.half)
"""
MAIN_GUARD_SCRIPT_NATIVE = """\
import argparse

import torch


def update(loss, optimizer, half):
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()


def fit(net, optimizer, batches, half):
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(net(x), y)
        update(loss, optimizer, half)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--half", action="store_true")
    args = parser.parse_args()
    net = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    use_amp = bool(args.half)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    fit(net, optimizer, [], args.half)
"""
#: the options, parsed inside the guard (MAIN_GUARD_SCRIPT) or before it
MAIN_GUARD_ARGS = """\
    parser = argparse.ArgumentParser()
    parser.add_argument("--half", action="store_true")
    args = parser.parse_args()
"""


def _args_outside(text: str) -> str:
    outside = "".join(line[4:] + "\n" for line in MAIN_GUARD_ARGS.splitlines())
    guard = 'if __name__ == "__main__":\n'
    return text.replace(MAIN_GUARD_ARGS, "").replace(guard, outside + guard)


#: a trainer method that reads its optimizer off ``self`` before amp.initialize rebinds the
#: local name (StepRule's example and, with the attribute bound again, a fallback)
OPTIMIZER_READ_FROM_SELF = """\
import torch


class Trainer:
    def __init__(self, args, model):
        self.args = args
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    def train(self, batches):
        model = self.model
        optimizer = self.optimizer
        if self.args.fp16:
            from apex import amp

            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(model(x), y)
            if self.args.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
            model.zero_grad()
"""
OPTIMIZER_READ_FROM_SELF_NATIVE = """\
import torch


class Trainer:
    def __init__(self, args, model):
        self.args = args
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)

    def train(self, batches):
        model = self.model
        optimizer = self.optimizer
        use_amp = bool(self.args.fp16)
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = torch.nn.functional.mse_loss(model(x), y)
            if self.args.fp16:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            scaler.step(self.optimizer)
            scaler.update()
            model.zero_grad()
"""
_STEP_OF_SELF = "            self.optimizer.step()\n"
_SELF_REBOUND = "            if self.args.restart:\n                self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
_SCALED_IN_THE_LOOP = "                with amp.scale_loss(loss, optimizer) as scaled_loss:\n"
_SHIM_TODO_IN_THE_LOOP = (
    "                # TODO(apexcompat): optimizer.step() is not in the same function as amp.scale_loss; this\n"
    "                #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n"
)


#: a GAN whose two optimizers are each stepped after the losses of one loss id (num_losses=2)
GAN_TWO_LOSS_IDS = """\
import torch
from apex import amp

netG, netD = Generator().cuda(), Discriminator().cuda()
optG = torch.optim.Adam(netG.parameters())
optD = torch.optim.Adam(netD.parameters())
[netG, netD], [optG, optD] = amp.initialize([netG, netD], [optG, optD], opt_level="O1", num_losses=2)
for real, noise in loader:
    fake = netG(noise)
    loss_d = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
    loss_g = criterion(netD(fake), ones)

    optG.zero_grad()
    with amp.scale_loss(loss_g, optG, loss_id=0) as scaled_loss:
        scaled_loss.backward()
    optG.step()

    optD.zero_grad()
    with amp.scale_loss(loss_d, optD, loss_id=1) as scaled_loss:
        scaled_loss.backward()
    optD.step()
"""
GAN_TWO_LOSS_IDS_NATIVE = """\
import torch

netG, netD = Generator().cuda(), Discriminator().cuda()
optG = torch.optim.Adam(netG.parameters())
optD = torch.optim.Adam(netD.parameters())
scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
for real, noise in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        fake = netG(noise)
        loss_d = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        loss_g = criterion(netD(fake), ones)

    optG.zero_grad()
    scalers[0].scale(loss_g).backward()
    scalers[0].step(optG)
    scalers[0].update()

    optD.zero_grad()
    scalers[1].scale(loss_d).backward()
    scalers[1].step(optD)
    scalers[1].update()
"""
#: two loss ids feed one optimizer (natively one GradScaler serves both)
TWO_LOSS_IDS_ONE_OPTIMIZER = """\
import torch
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1", num_losses=2)
for x, y in loader:
    optimizer.zero_grad()
    loss_main = criterion(model(x), y)
    with amp.scale_loss(loss_main, optimizer, loss_id=0) as scaled_loss:
        scaled_loss.backward()
    loss_aux = model.regularizer()
    with amp.scale_loss(loss_aux, optimizer, loss_id=1) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""
#: what a script logs of apex's loss scales after the GAN's step (appended to the loop)
SCALES_OF_BOTH_LOSS_IDS = """\
    print(amp._amp_state.loss_scalers[0].loss_scale(), amp._amp_state.loss_scalers[1]._loss_scale)
"""
SECOND_SCALER_STARTS_LOW = """\
amp._amp_state.loss_scalers[1]._loss_scale = 1024.0
"""
SCALE_OF_LOSS_ID_0 = """\
    print(amp._amp_state.loss_scalers[0].loss_scale())
"""


#: an O1 training loop (the two examples below add a loss-scale read to it)
O1_TRAIN = """\
def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""
#: apex's loss scale logged between the amp.scale_loss block and the step
SCALE_READ_BEFORE_THE_STEP = "import torch\nfrom apex import amp\n\n\n" + O1_TRAIN.replace(
    "        optimizer.step()",
    '        print("scale", amp._amp_state.loss_scalers[0].loss_scale())\n        optimizer.step()',
)
#: a gradient statistic undone by hand with the scale of the loss id its caller names
SCALE_OF_A_GIVEN_LOSS_ID = """\
import torch
from apex import amp


def grad_norm(module, loss_id):
    scale = amp._amp_state.loss_scalers[loss_id].loss_scale()
    return module.weight.grad.norm().item() / scale


""" + O1_TRAIN


#: whether any of apex's loss scalers saw an overflow, asked by a helper
ANY_OVERFLOW = """\
import torch
from apex import amp


def any_overflow():
    return any(s._has_overflow for s in amp._amp_state.loss_scalers)


""" + O1_TRAIN


#: a penalty term scaled by hand with apex's second loss scaler, kept in a local
PENALTY_WITH_SECOND_SCALER = """\
import torch
from apex import amp


def penalty(net, x):
    from apex.amp._amp_state import _amp_state

    scaler = _amp_state.loss_scalers[1]
    x = x.clone().requires_grad_()
    out = scaler.loss_scale() * net(x).sum()
    (grad,) = torch.autograd.grad(out, x, create_graph=True)
    return (grad / scaler.loss_scale()).pow(2).mean()


def train(net, optimizer, batches):
    net, optimizer = amp.initialize(net, optimizer, opt_level="O1", num_losses=2)
    for x in batches:
        loss = net(x).mean() + penalty(net, x)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""

PENALTY_WITH_SECOND_SCALER_NATIVE = """\
import torch


def penalty(net, x, scalers):
    x = x.clone().requires_grad_()
    out = scalers[1].get_scale() * net(x).sum()
    (grad,) = torch.autograd.grad(out, x, create_graph=True)
    return (grad / scalers[1].get_scale()).pow(2).mean()


def train(net, optimizer, batches):
    scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = net(x).mean() + penalty(net, x, scalers)
        optimizer.zero_grad()
        scalers[1].scale(loss).backward()
        scalers[1].step(optimizer)
        scalers[1].update()
"""

#: a GAN with one loss id per network that logs every loss scale, in a loop and in a
#: comprehension that use the same name
GAN_LOGS_EVERY_SCALE = """\
import torch
from apex import amp


def fit(gen, disc, opt_g, opt_d, noise_batches):
    [gen, disc], [opt_g, opt_d] = amp.initialize([gen, disc], [opt_g, opt_d], opt_level="O1", num_losses=2)
    for it, z in enumerate(noise_batches):
        critic_loss = disc(gen(z).detach()).mean()
        opt_d.zero_grad()
        with amp.scale_loss(critic_loss, opt_d, loss_id=0) as scaled:
            scaled.backward()
        opt_d.step()
        gen_loss = -disc(gen(z)).mean()
        opt_g.zero_grad()
        with amp.scale_loss(gen_loss, opt_g, loss_id=1) as scaled:
            scaled.backward()
        opt_g.step()
        for sc in amp._amp_state.loss_scalers:
            print("scale", sc._loss_scale)
        history = {k: sc.loss_scale() for k, sc in enumerate(amp._amp_state.loss_scalers)}
"""
GAN_LOGS_EVERY_SCALE_NATIVE = """\
import torch


def fit(gen, disc, opt_g, opt_d, noise_batches):
    scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
    for it, z in enumerate(noise_batches):
        with torch.autocast("cuda", dtype=torch.float16):
            critic_loss = disc(gen(z).detach()).mean()
        opt_d.zero_grad()
        scalers[0].scale(critic_loss).backward()
        scalers[0].step(opt_d)
        scalers[0].update()
        with torch.autocast("cuda", dtype=torch.float16):
            gen_loss = -disc(gen(z)).mean()
        opt_g.zero_grad()
        scalers[1].scale(gen_loss).backward()
        scalers[1].step(opt_g)
        scalers[1].update()
        for sc in scalers:
            print("scale", sc.get_scale())
        history = {k: sc.get_scale() for k, sc in enumerate(scalers)}
"""

#: a gradient norm undone by hand with the scale of the loss id its caller names
UNSCALED_NORM_BY_LOSS_ID = """


def unscaled_norm(module, loss_id):
    return module.weight.grad.norm() / amp._amp_state.loss_scalers[loss_id]._loss_scale
"""

#: a hand-written all-reduce of the master gradients that runs apex's overflow check and
#: scale update itself, on the loss scaler it keeps in a local
HAND_UPDATED_SCALER = """\
import torch
from apex import amp


class Runner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O2")
        self.overflow = torch.zeros(1, dtype=torch.int, device="cuda")

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizer, delay_overflow_check=True) as scaled_loss:
            scaled_loss.backward()

    def step(self):
        scaler = amp._amp_state.loss_scalers[0]
        grads = [p.grad for p in amp.master_params(self.optimizer) if p.grad is not None]
        for g in grads:
            torch.distributed.all_reduce(g.div_(scaler.loss_scale()))
            self.overflow.fill_(int(not torch.isfinite(g).all()))
        scaler._overflow_buf = self.overflow
        if not scaler.update_scale():
            self.optimizer.step()
"""
HAND_UPDATED_SCALER_TODO = """\
        # TODO(apexcompat): private amp._amp_state use: it keeps apex's loss scaler 0 in scaler
        #   and uses what a GradScaler has no public counterpart of: _overflow_buf,
        #   update_scale() (apex's own overflow buffer and scale update); this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
"""

#: DeepPrivacy's shape: a loss id per criterion, and every loss scale read for the log
GAN_STEP_LOGGING_SCALES = """\
import torch
from apex import amp


class GanStep:
    def __init__(self, gen, disc, opt_d, criteria):
        self.criteria = criteria
        [self.gen, self.disc], self.opt_d = amp.initialize(
            [gen, disc], opt_d, opt_level="O1", num_losses=len(criteria)
        )

    def backward(self, batch, loss_funcs, optimizer):
        for i, fn in enumerate(loss_funcs):
            loss, parts = fn(batch)
            with amp.scale_loss(loss.mean(), optimizer, loss_id=i) as scaled_loss:
                scaled_loss.backward()
        optimizer.step()

    def step_d(self, batch):
        with torch.no_grad():
            batch["fake"] = self.gen(batch["z"])
        batch["real_scores"] = self.disc(batch["img"])
        self.backward(batch, self.criteria, self.opt_d)

    def scales(self):
        return {i: s._loss_scale for i, s in enumerate(amp._amp_state.loss_scalers)}
"""
GAN_STEP_SCALES_TODO = """\
        # TODO(apexcompat): private amp._amp_state use: it reads the current scale of every one
        #   of apex's loss scalers (one per loss id), going over amp._amp_state.loss_scalers, of
        #   num_losses=len(criteria): how many GradScalers stand for them is not told here; this
        #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""

#: apex.amp only where an old torch lacks torch.cuda.amp (neural_sp's train.py shape)
OLD_TORCH_BRANCH = """\
from distutils.version import LooseVersion

import torch


def train(model, optimizer, batches, mixed):
    scaler = None
    if mixed:
        if LooseVersion(torch.__version__) >= LooseVersion("1.6.0"):
            scaler = torch.cuda.amp.GradScaler()
        else:
            from apex import amp
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            amp.init()
    for x in batches:
        loss = model(x).sum()
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        elif mixed:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad()
"""

#: a clipper class written with apex's kernels (through attributes), for the examples here and
#: in fused.py
KERNEL_CLIP_CLASS = (
    "class NormClipper:\n    def __init__(self, limit):\n        self.limit = limit\n"
    "        if multi_tensor_applier.available:\n            import amp_C\n"
    "            self.flag = torch.zeros(1, dtype=torch.int)\n"
    "            self.norm_kernel = amp_C.multi_tensor_l2norm\n"
    "            self.scale_kernel = amp_C.multi_tensor_scale\n        else:\n"
    "            raise RuntimeError(\"needs apex's CUDA extensions\")\n\n"
    "    def clip(self, params):\n        grads = [p.grad for p in params if p.grad is not None]\n"
    "        norm, _ = multi_tensor_applier(self.norm_kernel, self.flag, [grads], False)\n"
    "        norm = norm.item()\n        if norm == float(\"inf\"):\n            return\n"
    "        factor = self.limit / (norm + 1e-6)\n        if factor < 1:\n"
    "            multi_tensor_applier(self.scale_kernel, self.flag, [grads, grads], factor)\n"
)

#: a module built around a model that keeps what each call computes until its loss is read
KEEPING_WRAPPER = """\
class Collector(torch.nn.Module):
    # runs the critic and keeps its outputs until the loss is asked for

    def __init__(self, critic):
        super().__init__()
        self.net = critic
        self.kept = []

    def forward(self, x):
        self.kept.append(self.net(x))

    def spread_loss(self):
        loss = -torch.cat(self.kept).std()
        self.kept = []
        return loss


"""
#: a backward helper the trainers of the partial route call through ``functools.partial``
PARTIAL_HELPER = """\
from functools import partial

import torch
from apex import amp


def loss_backwards(fp16, loss, optimizer):
    if fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()


"""
#: the name the partial binds handed to another method
BOUND_NAME_HANDED_ON = PARTIAL_HELPER + """\
class Runner:
    def __init__(self, net, fp16):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.fp16 = fp16
        if fp16:
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")

    def phase(self, backwards, x):
        loss = self.net(x).mean()
        backwards(loss, self.opt)

    def fit(self, x):
        backwards = partial(loss_backwards, self.fp16)
        self.phase(backwards, x)
        self.opt.step()
"""
BOUND_NAME_HANDED_ON_TODO = """\
        # TODO(apexcompat): optimizer.step() is not in the same function as amp.scale_loss, and
        #   its callers cannot be followed: loss_backwards is also used as a value (`backwards =
        #   partial(loss_backwards, self.fp16)` in Runner.fit()); the name it binds, backwards,
        #   is also used other than by a call of fit() (`self.phase(backwards, x)`); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to
        #   loss_backwards: loss_backwards is also used as a value (`backwards =
        #   partial(loss_backwards, self.fp16)` in Runner.fit()); the name it binds, backwards,
        #   is also used other than by a call of fit() (`self.phase(backwards, x)`); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
"""
#: the attribute keeping the initializing object also set to what a caller hands in
HOLDER_ALSO_ASSIGNED = PARTIAL_HELPER + """\
class Model:
    def __init__(self, fp16):
        self.net = torch.nn.Linear(2, 1)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
        if fp16:
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")


class Trainer:
    def __init__(self, fp16):
        self.fp16 = fp16
        self.model = Model(fp16)

    def swap(self, other):
        self.model = other

    def train(self, x):
        backwards = partial(loss_backwards, self.fp16)
        loss = self.model.net(x).mean()
        backwards(loss, self.model.opt)
        self.model.opt.step()
"""
HOLDER_ALSO_ASSIGNED_TODOS = ("""\
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to
        #   loss_backwards: loss_backwards() is called from Trainer.train(), where no GradScaler
        #   exists; the calls there would need the GradScaler of the Model that Trainer keeps as
        #   self.model, and self.model is also assigned `other` in Trainer.swap(), so it may
        #   hold an object without one; this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
""", """\
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to train:
        #   train is a method of class Trainer, which is used other than by calls here (the
        #   GradScaler would live on the Model it keeps as self.model, and self.model is also
        #   assigned `other` in Trainer.swap(), so it may hold an object without one); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
""")
MIXIN_FACTORY = """\
import torch
from apex import amp


def with_mixed_precision(base):
    class MixedPrecision(base):
        def setup(self):
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

        def backward(self, loss):
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()

    return MixedPrecision
"""
MIXIN_FACTORY_TODO = """\
            # TODO(apexcompat): self.optimizer.step() is not in the same function as amp.scale_loss,
            #   and no method of MixedPrecision steps self.optimizer: it derives from base, a
            #   parameter of with_mixed_precision(), whose methods are not followed; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
"""
LOSS_CARRYING_ITS_OPTIMIZER = """\
import torch
from apex import amp


class ScaledLoss:
    def __init__(self, value, optimizer):
        self.value = value
        self.optimizer = optimizer

    def backward(self):
        with amp.scale_loss(self.value, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def item(self):
        return self.value.item()


class Learner:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def loss(self, x, y):
        return ScaledLoss(torch.nn.functional.mse_loss(self.model(x), y), self.optimizer)

    def step(self):
        self.optimizer.step()
"""
LOSS_CARRYING_ITS_OPTIMIZER_TODO = """\
        # TODO(apexcompat): self.optimizer.step() is not in the same function as amp.scale_loss,
        #   and no method of ScaledLoss steps self.optimizer, which its constructor is handed
        #   (optimizer): what steps that optimizer, and whether after this backward, is decided
        #   by the code holding it; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
        # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to backward:
        #   backward is a method of class ScaledLoss, instantiated in Learner.loss(), where no
        #   GradScaler exists; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
"""
CONTEXT_STEPPING_WHAT_IT_IS_HANDED = """\
import torch
from apex import amp


class TrainContext:
    def __init__(self):
        self.models = []
        self.optimizers = []

    def wrap(self, model, optimizer):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.models.append(model)
        self.optimizers.append(optimizer)
        return model, optimizer

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizers) as scaled_loss:
            scaled_loss.backward()

    def step_optimizer(self, optimizer):
        run = optimizer.step
        run()
        optimizer.zero_grad()
"""
CONTEXT_STEPPING_WHAT_IT_IS_HANDED_TODO = """\
        # TODO(apexcompat): self.optimizers.step() is not in the same function as
        #   amp.scale_loss, and no method of TrainContext steps self.optimizers;
        #   TrainContext.step_optimizer() steps the optimizer it is handed (optimizer), so which
        #   optimizer is stepped, and whether after this backward, is decided by the code
        #   calling both; this file keeps apex.amp semantics through apexcompat.amp, migrate it
        #   by hand
"""


RESCALED_LOSS_OF_A_SKIPPING_LOOP = """\
import torch
from apex import amp


class CriterionStep:
    def __init__(self, net, optimizer, criteria, meter):
        self.net, self.optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.criteria = criteria
        self.meter = meter

    def net_label(self):
        return type(self.net).__name__

    def train_step(self, batch):
        total = 0
        for criterion in self.criteria:
            if criterion.skipped:
                continue
            total += criterion(self.net(batch), batch)
        if isinstance(total, torch.Tensor):
            self.meter.add(self.net_label(), total)
            total = total / 2
            with amp.scale_loss(total, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
"""


def _shim_after(before: str, anchor: str, todo: str) -> str:
    """``before`` on apexcompat.amp with ``todo`` above the line ``anchor`` opens."""
    return before.replace("from apex import amp", "from apexcompat import amp").replace(anchor, todo + anchor, 1)


#: vissl's train step in one file: static methods handed the task, which keeps apex.amp beside
#: its own GradScaler (amp_grad_scaler, the torch branch), the backward and the step in two of
#: them with the task's hooks between
STEP_CLASS_HANDED_THE_TASK = """\
import contextlib

import torch
from apex import amp


class Task:
    def __init__(self, model, optimizer, amp_type, amp_args):
        self.model, self.optimizer = model, optimizer
        self.amp_type, self.amp_args = amp_type, amp_args
        self.amp_grad_scaler = torch.amp.GradScaler("cuda") if amp_type == "pytorch" else None

    def prepare(self):
        if self.amp_type == "apex":
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **self.amp_args)


class TrainStep:
    def __call__(self, task, x):
        amp_context = torch.autocast("cuda") if task.amp_type == "pytorch" else contextlib.suppress()
        with amp_context:
            loss = task.model(x).mean()
        self.run_backward(task, loss)
        task.run_hooks("on_backward")
        self.run_optimizer_step(task)

    @staticmethod
    def run_backward(task, loss):
        task.optimizer.zero_grad()
        if task.amp_type == "apex":
            with amp.scale_loss(loss, task.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif task.amp_type == "pytorch":
            task.amp_grad_scaler.scale(loss).backward()
        else:
            loss.backward()

    @staticmethod
    def run_optimizer_step(task):
        if task.amp_type == "pytorch":
            task.amp_grad_scaler.step(task.optimizer)
            task.amp_grad_scaler.update()
        else:
            task.optimizer.step()
"""


EXAMPLES: List[Example] = [
    Example(
        # FARM's shape: the loop is in the caller, backward_propagate(loss, step) scales every
        # loss it is handed and steps only when a test on its parameter holds: the GradScaler's
        # growth pace changes as for an accumulation boundary in the loop (APX314, a warning)
        "accumulation-boundary-on-a-parameter-of-the-scaling-method-warns-of-the-growth-pace",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps, use_amp):
        self.model, self.optimizer, self.grad_acc_steps = model, optimizer, grad_acc_steps
        self.use_amp = use_amp
        if use_amp:
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def train(self, batches):
        for step, batch in enumerate(batches):
            loss = self.model(batch).sum()
            self.backward_propagate(loss, step)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            self.optimizer.step()
            self.optimizer.zero_grad()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, grad_acc_steps, use_amp):
        self.model, self.optimizer, self.grad_acc_steps = model, optimizer, grad_acc_steps
        self.use_amp = use_amp
        if use_amp:
            self.model, self.optimizer = model, optimizer
        amp_enabled = bool(use_amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)

    def train(self, batches):
        for step, batch in enumerate(batches):
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = self.model(batch).sum()
            self.backward_propagate(loss, step)

    def backward_propagate(self, loss, step):
        if self.use_amp:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        if step % self.grad_acc_steps == 0:
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX314"),
    ),
    Example(
        # the GradScaler kept on self takes no name a base class above sets on its instance,
        # whatever that class calls its first parameter (``this.scaler`` would be overwritten)
        "scaler-on-self-avoids-a-base-attribute-set-through-another-first-parameter-name",
        before="""\
import torch
from apex import amp


class BaseTrainer:
    def __init__(this):
        this.scaler = 2.0

    def report(this, loss):
        return loss * this.scaler


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
""",
        after="""\
import torch


class BaseTrainer:
    def __init__(this):
        this.scaler = 2.0

    def report(this, loss):
        return loss * this.scaler


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer):
        super().__init__()
        self.model, self.optimizer = model, optimizer
        self.grad_scaler = torch.amp.GradScaler("cuda")

    def step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).sum()
        self.grad_scaler.scale(loss).backward()
        self.grad_scaler.step(self.optimizer)
        self.grad_scaler.update()
        return self.report(loss)
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a parameter already named scaler: the one that held apex.amp keeps its name
        "amp-parameter-kept-where-scaler-is-a-parameter-already",
        before="""\
import torch


def train(net, opt, data, amp, scaler=None):
    net.train()
    for x, y in data:
        loss = torch.nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        if amp is not None:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        opt.step()


def main(args):
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    if args.fp16:
        from apex import amp
        net, opt = amp.initialize(net, opt, opt_level="O1")
    else:
        amp = None
    for _ in range(args.epochs):
        train(net, opt, args.data, amp=amp)
""",
        after="""\
import torch


def train(net, opt, data, amp, scaler=None):
    net.train()
    for x, y in data:
        with torch.autocast("cuda", dtype=torch.float16, enabled=amp.is_enabled()):
            loss = torch.nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        if amp.is_enabled():
            amp.scale(loss).backward()
        else:
            loss.backward()
        amp.step(opt)
        amp.update()


def main(args):
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    use_amp = bool(args.fp16)
    grad_scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for _ in range(args.epochs):
        train(net, opt, args.data, amp=grad_scaler)
""",
        codes=("APX101", "APX201", "APX209", "APX230", "APX301", "APX311",),
    ),
    Example(
        # ClassyVision: the inference branch's TODO keeps its ``if`` (its test says when the TODO
        # applies); the sibling ``else`` the training initialize emptied goes at the end, with
        # nothing in it (``emptied_ifs``)
        "inference-todo-in-a-nested-branch-keeps-its-if",
        before="""\
from apex import amp


class Task:
    def prepare(self, model, optimizer, amp_args):
        self.model, self.optimizer = model, optimizer
        if amp_args is not None:
            if optimizer is None:
                self.model = amp.initialize(self.model, **amp_args)
            else:
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **amp_args)

    def train_step(self, x):
        loss = self.model(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Task:
    def prepare(self, model, optimizer, amp_args):
        self.model, self.optimizer = model, optimizer
        if amp_args is not None:
            if optimizer is None:
                # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
                #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
                pass
        amp_options = dict(amp_args) if amp_args is not None and optimizer is not None else {"enabled": False}
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        self.scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
        self.scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)

    def train_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(x).sum()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX206", "APX209", "APX301", "APX311",),
    ),
    Example(
        # LightningDOT: both branches of ``if teacher is None`` held a model-only initialize
        # and now say the same TODO: the ``if`` goes, its TODO stays once, on the ``pass`` of
        # the block it leaves empty (``emptied_ifs``); that block's ``if`` stays (its test says
        # when the TODO applies), the ``else`` the training initialize emptied goes
        "inference-todo-in-both-branches-is-written-once",
        before="""\
from apex import amp


class Task:
    def prepare(self, model, optimizer, teacher, amp_args):
        self.model, self.optimizer = model, optimizer
        if amp_args is not None:
            if optimizer is None:
                if teacher is None:
                    self.model = amp.initialize(self.model, **amp_args)
                else:
                    self.model, teacher = amp.initialize([self.model, teacher], **amp_args)
            else:
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **amp_args)
        self.teacher = teacher

    def train_step(self, x):
        loss = self.model(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Task:
    def prepare(self, model, optimizer, teacher, amp_args):
        self.model, self.optimizer = model, optimizer
        if amp_args is not None:
            if optimizer is None:
                # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
                #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
                pass
        amp_options = dict(amp_args) if amp_args is not None and optimizer is not None else {"enabled": False}
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        self.scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
        self.scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
        self.teacher = teacher

    def train_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(x).sum()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX206", "APX209", "APX301", "APX311"),
    ),
    Example(
        # DeepGNN: the ``else`` whose model-only initialize left the inference TODO on a
        # ``pass`` is no empty branch to prune after the training initialize's ``if``
        "inference-todo-in-the-else-of-the-training-if-stays",
        before="""\
from apex import amp


class Trainer:
    def prepare(self, model):
        if self.optimizer:
            # training: wrap apex around model and optimizer
            if self.args.fp16:
                model, self.optimizer = amp.initialize(model, self.optimizer, opt_level="O1")
        else:
            # evaluation: the model only
            if self.args.fp16:
                model = amp.initialize(model, opt_level="O1")
        return model

    def train_step(self, model, x):
        loss = model(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def prepare(self, model):
        if self.optimizer:
            pass
        else:
            # evaluation: the model only
            if self.args.fp16:
                # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
                #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
                pass
        use_amp = bool(self.optimizer and self.args.fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        return model

    def train_step(self, model, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = model(x).sum()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX206", "APX209", "APX301", "APX311"),
    ),
    Example(
        # Glow-TTS's inference script loads apex's loss-scaler state beside a model-only
        # initialize: the reason is that initialize (no GradScaler), not a missing one (the
        # file alone, without the repository plan; where the plan proves that its run scales
        # no loss the line goes: loss-scaler-state-of-an-inference-script-that-reaches-no-scale-loss-is-dropped)
        "loss-scaler-state-loaded-beside-an-inference-initialize-keeps-the-shim",
        before="""\
import torch
from apex import amp


class Inferencer:
    def __init__(self, model, fp16):
        self.model, self.fp16 = model.cuda(), fp16
        if fp16:
            self.model = amp.initialize(models=self.model, opt_level="O1")

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        if self.fp16 and "amp" in state:
            amp.load_state_dict(state["amp"])
""",
        after="""\
import torch
from apexcompat import amp


class Inferencer:
    def __init__(self, model, fp16):
        self.model, self.fp16 = model.cuda(), fp16
        if fp16:
            self.model = amp.initialize(models=self.model, opt_level="O1")

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        if self.fp16 and "amp" in state:
            # TODO(apexcompat): amp.load_state_dict restores the loss scale of a training run, but
            #   the amp.initialize of this file is for inference (no optimizers), so no GradScaler
            #   is made here; where no code run in the same process scales a loss, the line can go;
            #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            amp.load_state_dict(state["amp"])
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # PyContrast: the model-only initialize nested in the training initialize's ``if``
        # leaves its TODO on a ``pass``; that ``if`` is no empty shell to drop
        "inference-todo-nested-in-the-training-if-keeps-it",
        before="""\
from apex import amp


class Trainer:
    def prepare(self, model, model_ema, optimizer, args):
        if args.amp:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            if model_ema is not None:
                model_ema = amp.initialize(model_ema, opt_level="O1")
        return model, model_ema, optimizer

    def train_step(self, model, optimizer, x):
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def prepare(self, model, model_ema, optimizer, args):
        if args.amp:
            if model_ema is not None:
                # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
                #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
                pass
        use_amp = bool(args.amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        return model, model_ema, optimizer

    def train_step(self, model, optimizer, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = model(x).sum()
        self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX206", "APX209", "APX301", "APX311"),
    ),
    Example(
        # apex.amp handed by keyword: the parameter that now holds the GradScaler is renamed
        # scaler, and so is the keyword of the call (``net.train()`` is no use of the function)
        "amp-given-by-keyword-parameter-and-keyword-renamed-scaler",
        before="""\
import torch


def train(net, opt, data, amp):
    net.train()
    for x, y in data:
        loss = torch.nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        if amp is not None:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        opt.step()


def main(args):
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    if args.fp16:
        from apex import amp
        net, opt = amp.initialize(net, opt, opt_level="O1")
    else:
        amp = None
    for _ in range(args.epochs):
        train(net, opt, args.data, amp=amp)
""",
        after="""\
import torch


def train(net, opt, data, scaler):
    net.train()
    for x, y in data:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(net(x), y)
        opt.zero_grad()
        if scaler.is_enabled():
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(opt)
        scaler.update()


def main(args):
    net = torch.nn.Linear(4, 1).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for _ in range(args.epochs):
        train(net, opt, args.data, scaler=scaler)
""",
        codes=("APX101", "APX201", "APX209", "APX230", "APX301", "APX311"),
    ),
    Example(
        # the initialize was the only statement of an ``elif`` inside the ``if`` its GradScaler
        # now follows: the emptied ``elif`` goes rather than staying as ``elif APEX_OK: pass``
        "emptied-elif-inside-the-if-the-scaler-follows-goes",
        before="""\
import torch
from apex import amp

NATIVE_OK = False
APEX_OK = True


class Learner:
    def __init__(self, net, opt, half, training=True):
        self.net, self.opt, self.half = net, opt, half
        if training:
            if self.half and NATIVE_OK:
                self.native = torch.cuda.amp.GradScaler()
            elif APEX_OK:
                self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")

    def update(self, batch):
        loss = self.net(batch).mean()
        if self.half and NATIVE_OK:
            self.native.scale(loss).backward()
        elif APEX_OK:
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.opt.step()
""",
        after="""\
import torch

NATIVE_OK = False
APEX_OK = True


class Learner:
    def __init__(self, net, opt, half, training=True):
        self.net, self.opt, self.half = net, opt, half
        if training:
            if self.half and NATIVE_OK:
                self.native = torch.amp.GradScaler("cuda")
        use_amp = bool(training and not (self.half and NATIVE_OK) and APEX_OK)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def update(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.net(batch).mean()
        if self.half and NATIVE_OK:
            self.native.scale(loss).backward()
        elif APEX_OK:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.opt)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX902"),
    ),
    Example(
        # DeepGNN: the initialize was the only statement of an ``if`` (no ``else``) inside the ``if``
        # its GradScaler now follows; that ``if`` is no ``if ...: pass``: it goes, its test only reads
        # values (the comment above it names apex and goes with it)
        "emptied-if-inside-the-if-the-scaler-follows-goes",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if optimizer is not None:
        if args.native_amp:
            grad_scaler = torch.cuda.amp.GradScaler()
        # For training, wrap apex for both model and optimizer.
        if args.fp16 == "apex":
            model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    if optimizer is not None:
        if args.native_amp:
            grad_scaler = torch.amp.GradScaler("cuda")
    use_amp = optimizer is not None and args.fp16 == "apex" and args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX902"),
    ),
    Example(
        # the same emptied ``if`` under a test that calls a method (asking may count, log, draw a
        # number): it stays, as ``pass``
        "emptied-if-whose-test-calls-stays",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if optimizer is not None:
        args.log("optimizer given")
        if args.use_apex():
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    if optimizer is not None:
        args.log("optimizer given")
        if args.use_apex():
            pass
    use_amp = bool(optimizer is not None and args.use_apex())
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the same emptied ``if`` below a comment that does not name apex: the ``if`` goes at the
        # end (``emptied_ifs``), the user's comment stays in its place
        "emptied-if-below-a-comment-of-its-own-goes-the-comment-stays",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if optimizer is not None:
        args.log("optimizer given")
        # mixed precision on demand
        if args.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    if optimizer is not None:
        args.log("optimizer given")
        # mixed precision on demand
    use_amp = bool(optimizer is not None and args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # ``import torch.utils.data`` already binds ``torch``: the GradScaler and autocast lines
        # need no ``import torch`` added above them
        "dotted-torch-import-already-binds-torch",
        before="""\
import torch.utils.data
from apex import amp


def fit(net, opt, pairs):
    net, opt = amp.initialize(net, opt, opt_level="O1")
    for inputs, target in pairs:
        loss = torch.nn.functional.l1_loss(net(inputs), target)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
""",
        after="""\
import torch.utils.data


def fit(net, opt, pairs):
    scaler = torch.amp.GradScaler("cuda")
    for inputs, target in pairs:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.l1_loss(net(inputs), target)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # ``optimizer = self.optimizer`` is no alias when the function binds ``self.optimizer``
        # again (StepRule's step-through-the-attribute-the-optimizer-was-read-from)
        "step-through-an-attribute-rebound-in-the-function-keeps-the-shim",
        before=OPTIMIZER_READ_FROM_SELF.replace(_STEP_OF_SELF, _STEP_OF_SELF + _SELF_REBOUND),
        after=OPTIMIZER_READ_FROM_SELF.replace(_STEP_OF_SELF, _STEP_OF_SELF + _SELF_REBOUND)
        .replace("from apex import amp", "from apexcompat import amp")
        .replace(_SCALED_IN_THE_LOOP, _SHIM_TODO_IN_THE_LOOP + _SCALED_IN_THE_LOOP),
        codes=("APX102", "APX220"),
    ),
    Example(
        # adversarial training (FGM): the perturbed loss's plain backward adds to the gradients
        # apex had already unscaled; a GradScaler unscales them all at the step (StepRule)
        "plain-backward-between-the-scaled-one-and-the-step-is-scaled-too",
        before="""\
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    perturb.attack()
    adv_loss = criterion(model(x), y)
    adv_loss.backward()
    perturb.restore()
    optimizer.step()
""",
        after="""\
import torch

scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    perturb.attack()
    adv_loss = criterion(model(x), y)
    scaler.scale(adv_loss).backward()
    perturb.restore()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the same with the perturbed loss's backward taken on the call that computes it
        # (``criterion(model(x), y).backward()``): a backward on a call is as plain as one on a
        # name, only ``<scaler>.scale(...).backward()`` is scaled already (it stayed plain, and
        # its gradients were divided by the loss scale at the step, silently)
        "plain-backward-on-a-call-between-the-scaled-one-and-the-step-is-scaled-too",
        before="""\
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    perturb.attack()
    criterion(model(x), y).backward()
    perturb.restore()
    optimizer.step()
""",
        after="""\
import torch

scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x), y)
    scaler.scale(loss).backward()
    perturb.attack()
    scaler.scale(criterion(model(x), y)).backward()
    perturb.restore()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the scaled loss read after the block (its ratio to the loss is apex's scale, used to
        # unscale an input's gradient by hand): the name stays bound (ScaleLossRule)
        "scaled-loss-read-after-the-block-stays-bound",
        before="""\
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x + delta), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    factor = scaled_loss.item() / loss.item()
    optimizer.step()
""",
        after="""\
import torch

scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = criterion(model(x + delta), y)
    scaled_loss = scaler.scale(loss)
    scaled_loss.backward()
    factor = scaled_loss.item() / loss.item()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "opt-level-literal",
        before=LINEAR_LOOP,
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a ``continue`` of a loop inside the forward pass stays in that loop: it does not
        # leave the autocast region (the loop was taken for a jump, and the file kept the shim)
        "forward-pass-with-a-loop-that-continues-goes-under-autocast",
        before=LINEAR_LOOP.replace(
            "    loss = torch.nn.functional.cross_entropy(model(x), y)\n",
            "    loss = torch.nn.functional.cross_entropy(model(x), y)\n"
            "    for weight in model.parameters():\n"
            "        if weight.dim() < 2:\n"
            "            continue\n"
            "        loss = loss + 1e-4 * weight.pow(2).sum()\n",
        ),
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
        for weight in model.parameters():
            if weight.dim() < 2:
                continue
            loss = loss + 1e-4 * weight.pow(2).sum()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the forward pass moves one level in under the new autocast: the lines that continue
        # its statements move with them (after a backslash, or inside brackets indented less
        # than the block, comments included), while a triple-quoted string keeps its text
        "continuation-lines-move-in-with-the-statements-autocast-wraps",
        before=LINEAR_LOOP.replace(
            "    loss = torch.nn.functional.cross_entropy(model(x), y)\n",
            "    logits = model(x)\n"
            "    if logits.dim() > 2 and \\\n"
            "            logits.size(1) == 1:\n"
            "        logits = logits.squeeze(1)\n"
            '    note = """kept\n'
            '  as written"""\n'
            "    loss = torch.nn.functional.cross_entropy(logits, y) + \\\n"
            "        1e-4 * sum(\n"
            "  # weight decay, by hand\n"
            "  w.pow(2).sum() for w in model.parameters())\n",
        ),
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        logits = model(x)
        if logits.dim() > 2 and \\
                logits.size(1) == 1:
            logits = logits.squeeze(1)
        note = \"\"\"kept
  as written\"\"\"
        loss = torch.nn.functional.cross_entropy(logits, y) + \\
            1e-4 * sum(
      # weight decay, by hand
      w.pow(2).sum() for w in model.parameters())
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # both branches initialize: each makes its GradScaler in place, where its test held,
        # so a branch that also rebinds what the test reads is no run-once guard (before: the
        # shim, "a GradScaler created after that if ... would be disabled")
        "initialize-in-both-branches-of-a-test-its-branch-rebinds",
        before="""\
import torch
from apex import amp


def train(model, teacher, optimizer, batches, level):
    if teacher is not None:
        [model, teacher], optimizer = amp.initialize([model, teacher], optimizer, opt_level=level)
        teacher = torch.nn.DataParallel(teacher)
    else:
        model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    for x in batches:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, teacher, optimizer, batches, level):
    if teacher is not None:
        use_amp = level != "O0"
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        teacher = torch.nn.DataParallel(teacher)
    else:
        use_amp = level != "O0"
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).sum()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "initialize-line-comment-kept",
        before=LINEAR_LOOP.replace('opt_level="O1")\n', 'opt_level="O1")  # mixed precision, see README\n'),
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")  # mixed precision, see README
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the comment lines below an if that goes with its initialize (LibCST gives them to
        # the if's block, up to the last one indented into it) stay as they were
        "comments-below-a-removed-initialize-if-stay",
        before="""\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
if args.fp16:
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")

# model = torch.compile(model)
#     (off: slow to start)
    # see the compile notes
for x, y in loader:
    optimizer.zero_grad()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
use_amp = bool(args.fp16)
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

# model = torch.compile(model)
#     (off: slow to start)
    # see the compile notes
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "autocast-starts-at-the-forward-pass",
        before="""\
import torch
from apex import amp

model = build_generator().cuda()
optimizer = torch.optim.Adam(model.parameters())
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for step in range(steps):
    rng = torch.Generator().manual_seed(step)
    noise = torch.randn(32, 8, generator=rng)
    optimizer.zero_grad()
    loss = model(noise).pow(2).mean()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
import torch

model = build_generator().cuda()
optimizer = torch.optim.Adam(model.parameters())
scaler = torch.amp.GradScaler("cuda")
for step in range(steps):
    rng = torch.Generator().manual_seed(step)
    noise = torch.randn(32, 8, generator=rng)
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = model(noise).pow(2).mean()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "flag-guard-and-opt-level-from-args",
        before="""\
import argparse

import torch
from apex import amp

parser = argparse.ArgumentParser()
parser.add_argument("--opt-level", default="O1")
parser.add_argument("--fp16", action="store_true")


def main():
    args = parser.parse_args()
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, keep_batchnorm_fp32=True)
    for x, y in loader:
        output = model(x)
        loss = criterion(output, y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--opt-level", default="O1")
parser.add_argument("--fp16", action="store_true")


def main():
    args = parser.parse_args()
    model = torch.nn.Linear(10, 2).cuda()
    optimizer = torch.optim.Adam(model.parameters())
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            output = model(x)
            loss = criterion(output, y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX203", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the scaler is created after the whole if/else, switched on by the negated test,
        # so the fp32 path (opt_level=None) still has the self.scaler the methods use
        "initialize-in-else-branch",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level=None):
        self.model, self.optimizer = model, optimizer
        if opt_level is None:
            print("training in fp32")
        else:
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, opt_level=None):
        self.model, self.optimizer = model, optimizer
        if opt_level is None:
            print("training in fp32")
        else:
            self.model, self.optimizer = model, optimizer
        use_amp = opt_level is not None and opt_level != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # both branches of the accumulation boundary scale the same loss: its forward pass is
        # wrapped once, before the if, and neither scale_loss asks for it by hand
        "accumulation-branches-share-one-autocast",
        before="""\
from apex import amp


def train(model, optimizer, batches, accum):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, x in enumerate(batches):
        loss = model(x).sum()
        loss = loss / accum
        if (i + 1) % accum == 0:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        else:
            with amp.scale_loss(loss, optimizer, delay_unscale=True) as scaled_loss:
                scaled_loss.backward()
""",
        after="""\
import torch


def train(model, optimizer, batches, accum):
    scaler = torch.amp.GradScaler("cuda")
    for i, x in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
            loss = loss / accum
        if (i + 1) % accum == 0:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
        else:
            scaler.scale(loss).backward()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX301", "APX302", "APX311"),
    ),
    Example(
        # the device is an attribute of self set only in one branch (EfficientSegmentation's
        # distributed set-up; its other trainer never sets it): it may not exist where the
        # GradScaler is made, so "cuda" it stays, as apex ran there; it named self.device,
        # which raised AttributeError on the other path
        "device-attribute-set-in-one-branch-only-stays-cuda",
        before="""\
import torch
from apex import amp


class Segmentor:
    def run(self, model, optimizer, distributed, rank):
        self.model = model
        if distributed:
            self.device = torch.device("cuda", rank)
            self.model = self.model.to(self.device)
        else:
            self.model = self.model.cuda()
        self.optimizer = optimizer
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def train_epoch(self, loader, criterion):
        for images, masks in loader:
            self.optimizer.zero_grad()
            loss = criterion(self.model(images), masks)
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()

    def metrics(self, values):
        return torch.as_tensor(values).to(self.device)
""",
        after="""\
import torch


class Segmentor:
    def run(self, model, optimizer, distributed, rank):
        self.model = model
        if distributed:
            self.device = torch.device("cuda", rank)
            self.model = self.model.to(self.device)
        else:
            self.model = self.model.cuda()
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def train_epoch(self, loader, criterion):
        for images, masks in loader:
            self.optimizer.zero_grad()
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(self.model(images), masks)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def metrics(self, values):
        return torch.as_tensor(values).to(self.device)
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the device attribute is set in every branch of an if/else of __init__ (or the branch
        # raises: simpletransformers' use_cuda): it exists wherever the GradScaler is made, so
        # autocast and the GradScaler follow it
        "device-attribute-set-in-every-branch-of-init-is-followed",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, use_cuda):
        if use_cuda:
            if not torch.cuda.is_available():
                raise ValueError("CUDA is not available")
            self.device = torch.device("cuda")
        else:
            self.device = "cpu"
        self.model = model.to(self.device)
        self.optimizer = optimizer

    def train_epoch(self, loader, criterion):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
        for x, y in loader:
            self.optimizer.zero_grad()
            loss = criterion(self.model(x), y)
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, use_cuda):
        if use_cuda:
            if not torch.cuda.is_available():
                raise ValueError("CUDA is not available")
            self.device = torch.device("cuda")
        else:
            self.device = "cpu"
        self.model = model.to(self.device)
        self.optimizer = optimizer

    def train_epoch(self, loader, criterion):
        scaler = torch.amp.GradScaler(torch.device(self.device).type)
        for x, y in loader:
            self.optimizer.zero_grad()
            with torch.autocast(torch.device(self.device).type, dtype=torch.float16):
                loss = criterion(self.model(x), y)
            scaler.scale(loss).backward()
            scaler.step(self.optimizer)
            scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # each branch runs the model and computes the loss, one of them adding up the losses of
        # the outputs in a plain loop (EfficientSegmentation's deep supervision): the loop rides
        # in its branch's autocast region as it does before a scale_loss; it stopped the search
        "branch-forward-with-a-loop-adding-up-the-loss",
        before="""\
import torch
from apex import amp


class Segmentor:
    def __init__(self, model, optimizer, deep_supervision, is_apex_train):
        self.model = model
        self.optimizer = optimizer
        self.deep_supervision = deep_supervision
        self.is_apex_train = is_apex_train
        if self.is_apex_train:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def train_epoch(self, loader):
        for images, masks in loader:
            self.optimizer.zero_grad()
            if self.deep_supervision:
                outputs = self.model(images)
                loss = 0
                loss_func = torch.nn.MSELoss()
                for out in outputs:
                    loss += loss_func(out, masks)
                loss /= len(outputs)
            else:
                output = self.model(images)
                loss_func = torch.nn.MSELoss()
                loss = loss_func(output, masks)

            if self.is_apex_train:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
""",
        after="""\
import torch


class Segmentor:
    def __init__(self, model, optimizer, deep_supervision, is_apex_train):
        self.model = model
        self.optimizer = optimizer
        self.deep_supervision = deep_supervision
        self.is_apex_train = is_apex_train
        use_amp = bool(self.is_apex_train)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def train_epoch(self, loader):
        for images, masks in loader:
            self.optimizer.zero_grad()
            if self.deep_supervision:
                with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                    outputs = self.model(images)
                    loss = 0
                    loss_func = torch.nn.MSELoss()
                    for out in outputs:
                        loss += loss_func(out, masks)
                    loss /= len(outputs)
            else:
                with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                    output = self.model(images)
                    loss_func = torch.nn.MSELoss()
                    loss = loss_func(output, masks)

            if self.is_apex_train:
                self.scaler.scale(loss).backward()
            else:
                loss.backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a branch defines a helper before its forward pass (Bengali.AI's cutmix ``def
        # rand_bbox(size, lam): ... return``): the definition runs nothing, each branch's forward
        # pass still gets its autocast region; it made the chain a barrier (APX220, whole file
        # on the shim)
        "branch-forward-after-a-helper-defined-in-the-branch",
        before="""\
import numpy as np
import torch
from apex import amp


def train(model, optimizer, loader, criterion, use_apex, cutmix_prob):
    if use_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for images, labels in loader:
        if np.random.rand() < cutmix_prob:

            def rand_box(size, lam):
                cut = int(size[-1] * np.sqrt(1.0 - lam))
                return cut, cut

            lam = np.random.beta(1.0, 1.0)
            index = torch.randperm(images.size(0))
            h, w = rand_box(images.size(), lam)
            images[:, :, :h, :w] = images[index, :, :h, :w]
            outputs = model(images)
            loss = criterion(outputs, labels) * lam + criterion(outputs, labels[index]) * (1 - lam)
        else:
            outputs = model(images)
            loss = criterion(outputs, labels)

        if use_apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import numpy as np
import torch


def train(model, optimizer, loader, criterion, use_apex, cutmix_prob):
    use_amp = bool(use_apex)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for images, labels in loader:
        if np.random.rand() < cutmix_prob:

            def rand_box(size, lam):
                cut = int(size[-1] * np.sqrt(1.0 - lam))
                return cut, cut

            lam = np.random.beta(1.0, 1.0)
            index = torch.randperm(images.size(0))
            h, w = rand_box(images.size(), lam)
            images[:, :, :h, :w] = images[index, :, :h, :w]
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                outputs = model(images)
                loss = criterion(outputs, labels) * lam + criterion(outputs, labels[index]) * (1 - lam)
        else:
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                outputs = model(images)
                loss = criterion(outputs, labels)

        if use_apex:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the model runs before the if, each branch computes the loss from its outputs: two
        # autocast regions, the forward pass (once) and the loss of each branch
        "forward-before-the-branches-that-compute-the-loss",
        before="""\
from apex import amp


def train(model, criterion, optimizer, batches, accum):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(batches):
        outputs = model(x)

        if accum > 1:
            loss = criterion(outputs, y) / accum
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % accum == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            loss = criterion(outputs, y)
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
""",
        after="""\
import torch


def train(model, criterion, optimizer, batches, accum):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(x)

        if accum > 1:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(outputs, y) / accum
            scaler.scale(loss).backward()
            if (i + 1) % accum == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        else:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = criterion(outputs, y)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX209", "APX209", "APX301", "APX301", "APX311", "APX311", "APX314"),
    ),
    Example(
        "enabled-argument",
        before="""\
from apex import amp


def fit(model, optimizer, data, use_fp16):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", enabled=use_fp16, loss_scale="dynamic")
    for x in data:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def fit(model, optimizer, data, use_fp16):
    use_amp = bool(use_fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in data:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # apex's dynamic scaler starts at min(max_loss_scale, 2**16): a lower cap is the start
        "max-loss-scale-below-the-initial-scale-is-where-the-scaler-starts",
        before="""\
from apex import amp


def fit(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", max_loss_scale=512.0)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda", init_scale=512.0)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a run-time max_loss_scale is read where the GradScaler is made, under the initialize's test
        "max-loss-scale-read-at-run-time-sets-where-the-scaler-starts",
        before="""\
from apex import amp


def fit(model, optimizer, batches, args):
    if args.amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", max_loss_scale=args.max_loss_scale)
    for x in batches:
        loss = model(x).sum()
        if args.amp:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches, args):
    use_amp = bool(args.amp)
    scaler = torch.amp.GradScaler("cuda", init_scale=min(65536.0, args.max_loss_scale) if args.amp else 65536.0, enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if args.amp:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a run-time loss_scale: its dynamic branch starts at the cap (VL-BERT: 128.0)
        "max-loss-scale-below-a-run-time-loss-scale-starts-the-dynamic-branch",
        before="""\
from apex import amp


def fit(model, optimizer, batches, cfg):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=cfg.loss_scale, max_loss_scale=128.0)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches, cfg):
    amp_loss_scale = cfg.loss_scale
    amp_scale, amp_growth = (128.0, 2000) if amp_loss_scale in (None, "dynamic") else (float(amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX203", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        # DeepDeblur: the cap in the **options dict: min(2**16, it) when it runs, as apex
        "max-loss-scale-in-an-options-mapping-sets-where-the-scaler-starts",
        before="""\
from apex import amp


def fit(model, optimizer, batches, args):
    kwargs_amp = {"opt_level": args.opt_level, "loss_scale": args.loss_scale, "max_loss_scale": args.max_loss_scale}
    model, optimizer = amp.initialize(model, optimizer, **kwargs_amp)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches, args):
    kwargs_amp = {"opt_level": args.opt_level, "loss_scale": args.loss_scale, "max_loss_scale": args.max_loss_scale}
    amp_options = dict(kwargs_amp)
    amp_loss_scale = amp_options.get("loss_scale", "dynamic")
    amp_scale, amp_growth = (
        (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
        if amp_loss_scale == "dynamic"
        else (float(amp_loss_scale), 10**9)
    )
    use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        "static-loss-scale-and-dropped-options",
        before="""\
from apex import amp


def fit(model, optimizer, batches):
    model, optimizer = amp.initialize(
        model, optimizer, opt_level="O1", loss_scale=128.0, max_loss_scale=2.0**16, num_losses=1, verbosity=0
    )
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches):
    # TODO(apexcompat): static loss_scale=128.0: the GradScaler keeps this scale, but unlike
    #   apex it skips a step whose grads hold inf/nan, which apex took; check that this is
    #   acceptable
    scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=10**9)
    scaler.set_backoff_factor(1.0)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX203", "APX203", "APX203", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        "o3-inference-model-half",
        before="""\
from apex import amp


def load_for_inference(model):
    model = amp.initialize(model, opt_level="O3")
    model.eval()
    return model
""",
        after="""\
def load_for_inference(model):
    # TODO(apexcompat): O3 inference: the model is now float16; apex also cast its floating
    #   inputs to float16 and its outputs back to float32 - cast the inputs with .half() and
    #   the outputs with .float() where they are used
    model.half()
    model.eval()
    return model
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # O1 inference followed in its function: each later statement that uses the model
        # (a call of it, or handing it to a function that may run it) runs under autocast,
        # switched as the initialize was; looks at it (.eval(), isinstance) and its rebinding
        # by a wrapper (the wrapper's call is a use) stay as they are
        "o1-inference-uses-under-autocast",
        before="""\
import torch
from apex import amp


def main(args, model, loader):
    model = model.cuda()
    if args.fp16:
        model = amp.initialize(model, opt_level="O1")
    model.eval()
    if isinstance(model, torch.nn.Module):
        model = torch.nn.DataParallel(model)
    score = evaluate(args, model, loader)
    for x in loader:
        out = model(x)
        print(out)
    return score
""",
        after="""\
import torch


def main(args, model, loader):
    model = model.cuda()
    use_amp = bool(args.fp16)
    model.eval()
    if isinstance(model, torch.nn.Module):
        model = torch.nn.DataParallel(model)
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        score = evaluate(args, model, loader)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            out = model(x)
        print(out)
    return score
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # the uses follow the initialize in its own branch (ATLOP's test mode): the branch's
        # test holds there, so no switch is needed
        "o1-inference-uses-in-its-own-branch",
        before="""\
import torch
from apex import amp


def main(args, model, features):
    if args.load_path == "":
        train(args, model, features)
    else:
        model = amp.initialize(model, opt_level="O1", verbosity=0)
        model.load_state_dict(torch.load(args.load_path))
        score = evaluate(args, model, features)
        print(score)
""",
        after="""\
import torch


def main(args, model, features):
    if args.load_path == "":
        train(args, model, features)
    else:
        model.load_state_dict(torch.load(args.load_path))
        with torch.autocast("cuda", dtype=torch.float16):
            score = evaluate(args, model, features)
        print(score)
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # an opt level chosen at run time among O0 and O2 (retinanet-examples' infer): the
        # switch is off at O0; the model deleted at the end is no use of it
        "inference-opt-level-chosen-at-run-time",
        before="""\
from apex import amp


def infer(model, loader, with_apex, mixed_precision):
    if with_apex:
        model = amp.initialize(model, None, opt_level="O2" if mixed_precision else "O0")
    model.eval()
    results = [model(x) for x in loader]
    del model
    return results
""",
        after="""\
import torch


def infer(model, loader, with_apex, mixed_precision):
    use_amp = bool(with_apex and ("O2" if mixed_precision else "O0") != "O0")
    model.eval()
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        results = [model(x) for x in loader]
    del model
    return results
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # a trainer class initializes in __init__ and the launcher that builds it saves amp's state:
        # the GradScaler is read off that instance (trainer.scaler); found by the shapes check
        "launcher-saves-the-state-of-the-gradscaler-its-trainer-instance-holds",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def train_step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


def main(model, optimizer, batches, path):
    trainer = Trainer(model, optimizer)
    for x, y in batches:
        trainer.train_step(x, y)
    torch.save({"model": trainer.model.state_dict(), "amp": amp.state_dict()}, path)
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()


def main(model, optimizer, batches, path):
    trainer = Trainer(model, optimizer)
    for x, y in batches:
        trainer.train_step(x, y)
    torch.save({"model": trainer.model.state_dict(), "amp": trainer.scaler.state_dict()}, path)
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX401"),
    ),
    Example(
        # a clip inside each of two amp.scale_loss blocks before one step: apex's second clip saw
        # that backward's gradients only, and a second unscale_ after it would raise; the file
        # keeps the shim (found by the shapes check)
        "clips-inside-two-scale-loss-blocks-before-one-step-keep-the-shim",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, optimizer, data):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in data:
        out = model(x)
        loss_a = F.mse_loss(out[:, :2], y[:, :2])
        loss_b = F.mse_loss(out[:, 2:], y[:, 2:])
        with amp.scale_loss(loss_a, optimizer) as scaled_loss:
            scaled_loss.backward(retain_graph=True)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        with amp.scale_loss(loss_b, optimizer) as scaled_loss:
            scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
import torch.nn.functional as F
from apexcompat import amp


def train(model, optimizer, data):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in data:
        out = model(x)
        loss_a = F.mse_loss(out[:, :2], y[:, :2])
        loss_b = F.mse_loss(out[:, 2:], y[:, 2:])
        with amp.scale_loss(loss_a, optimizer) as scaled_loss:
            scaled_loss.backward(retain_graph=True)
            # TODO(apexcompat): torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0) runs inside
            #   the amp.scale_loss block, where (O1) apex's gradients are still scaled and hold only
            #   this backward's: a clip there cuts the scaled gradients at its threshold before apex
            #   divides them by the loss scale, so moving it after scaler.unscale_() changes what
            #   trains, and a GradScaler's gradients hold every backward since the step, so a clip
            #   right after scaler.scale(loss).backward() is the same only where the step and
            #   zero_grad() follow every backward and the opt level is O1 under the default flags
            #   (written in the script, or a flag of this file whose default is O1; under O2 the
            #   block's master gradients are still empty and apex's clip there did nothing), which
            #   is not proven here; this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        with amp.scale_loss(loss_b, optimizer) as scaled_loss:
            scaled_loss.backward()
            # TODO(apexcompat): torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0) runs inside
            #   the amp.scale_loss block, where (O1) apex's gradients are still scaled and hold only
            #   this backward's: a clip there cuts the scaled gradients at its threshold before apex
            #   divides them by the loss scale, so moving it after scaler.unscale_() changes what
            #   trains, and a GradScaler's gradients hold every backward since the step, so a clip
            #   right after scaler.scale(loss).backward() is the same only where the step and
            #   zero_grad() follow every backward and the opt level is O1 under the default flags
            #   (written in the script, or a flag of this file whose default is O1; under O2 the
            #   block's master gradients are still empty and apex's clip there did nothing), which
            #   is not proven here; this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # O2, the scaled backward in a helper the loop calls, then a clip of model.parameters():
        # apex clipped its float16 model copy, which the step never reads, as after a
        # scale_loss in the loop itself; the file keeps the shim (found by the shapes check)
        "o2-model-clip-after-a-backward-helper-keeps-the-shim",
        before="""\
import torch
from apex import amp


def backward(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        backward(loss, optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
from apexcompat import amp


def backward(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        backward(loss, optimizer)
        # TODO(apexcompat): torch.nn.utils.clip_grad_norm_ clips model.parameters() after
        #   amp.scale_loss under opt level O2 on every amp run: apex's O2 model is a float16
        #   copy whose gradients are still scaled and which the step never reads (the fp32
        #   master weights are stepped), so apex's clip did not cut what trains, while natively
        #   the model is fp32 and the clip cuts the gradients the step uses; this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # two losses of one forward pass, each backed in an amp.scale_loss block of its own, one
        # right after the other: the first block's span reaches the second loss too, and the
        # second block finds its loss there (found by the training-loop shapes check)
        "two-losses-of-one-forward-pass-backed-one-after-the-other",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, optimizer, data):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in data:
        out = model(x)
        loss_a = F.mse_loss(out[:, :2], y[:, :2])
        loss_b = F.mse_loss(out[:, 2:], y[:, 2:])
        with amp.scale_loss(loss_a, optimizer) as scaled_loss:
            scaled_loss.backward(retain_graph=True)
        with amp.scale_loss(loss_b, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
import torch.nn.functional as F


def train(model, optimizer, data):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in data:
        with torch.autocast("cuda", dtype=torch.float16):
            out = model(x)
            loss_a = F.mse_loss(out[:, :2], y[:, :2])
            loss_b = F.mse_loss(out[:, 2:], y[:, 2:])
        scaler.scale(loss_a).backward(retain_graph=True)
        scaler.scale(loss_b).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # an initialize without optimizers alone in a try whose handler catches apex's
        # TypeError (cryodrgn's abinit.py hands it self.scaler, None there: apex raised and the
        # handler made the GradScaler): without the initialize the handler never runs, so a
        # native rewrite would train in float32; the file keeps the shim
        "inference-initialize-alone-in-a-try-that-catches-its-error-keeps-the-shim",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model):
        self.model = model
        self.scaler = None
        try:
            self.scaler = amp.initialize(self.scaler, opt_level="O1")
        except:  # noqa: E722
            self.scaler = torch.cuda.amp.GradScaler()
""",
        after="""\
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model):
        self.model = model
        self.scaler = None
        try:
            # TODO(apexcompat): amp.initialize(self.scaler, opt_level="O1") (no optimizers) is alone
            #   in a try whose `except` handler catches what apex raises there when it is not given
            #   a model (a TypeError): the handler may be the path that runs, and with the
            #   initialize gone it never would; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            self.scaler = amp.initialize(self.scaler, opt_level="O1")
        except:  # noqa: E722
            self.scaler = torch.amp.GradScaler("cuda")
""",
        codes=("APX102", "APX220", "APX902"),
    ),
    Example(
        # the opt level through a name bound once to a choice among O0 and O1 (DLE MaskRCNN's
        # test_net.py): switched on that name; a checkpointer given the model loads its weights
        # and runs no forward pass, so it stays outside; the loop body's use is wrapped
        "inference-opt-level-through-a-variable",
        before="""\
from apex import amp


def main(cfg, model, loaders):
    amp_opt_level = "O1" if cfg.DTYPE == "float16" else "O0"
    model = amp.initialize(model, opt_level=amp_opt_level)
    checkpointer = DetectronCheckpointer(cfg, model)
    checkpointer.load(cfg.WEIGHT)
    for loader in loaders:
        result = inference(model, loader)
        print(result)
""",
        after="""\
import torch


def main(cfg, model, loaders):
    amp_opt_level = "O1" if cfg.DTYPE == "float16" else "O0"
    use_amp = amp_opt_level != "O0"
    checkpointer = DetectronCheckpointer(cfg, model)
    checkpointer.load(cfg.WEIGHT)
    for loader in loaders:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            result = inference(model, loader)
        print(result)
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # a generator expression runs the model when it is consumed, wherever that is: the
        # TODO stays
        "o1-inference-model-in-a-generator-keeps-the-todo",
        before="""\
from apex import amp


def infer(model, loader):
    model = amp.initialize(model, opt_level="O1")
    preds = (model(x) for x in loader)
    return list(preds)
""",
        after="""\
def infer(model, loader):
    # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
    #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
    preds = (model(x) for x in loader)
    return list(preds)
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # a training initialize in the same function: its switch (use_amp) is read by the
        # training autocast, so the teacher's inference initialize keeps its TODO rather than
        # bind a switch of its own
        "inference-beside-a-training-initialize-keeps-the-todo",
        before="""\
import torch
from apex import amp


def main(args, model, teacher, opt, loader):
    if args.fp16:
        model, opt = amp.initialize(model, opt, opt_level="O1")
    if args.teacher_fp16:
        teacher = amp.initialize(teacher, opt_level="O1")
    for x in loader:
        target = teacher(x)
        loss = (model(x) - target).pow(2).mean()
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
""",
        after="""\
import torch


def main(args, model, teacher, opt, loader):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    if args.teacher_fp16:
        # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
        #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
        pass
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            target = teacher(x)
            loss = (model(x) - target).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX206", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a with block of an imported helper (a progress bar) is no precision context: the
        # forward pass inside it is wrapped
        "o1-inference-inside-a-progress-bar",
        before="""\
from apex import amp
from tqdm import tqdm


def infer(model, loader):
    model = amp.initialize(model, opt_level="O1")
    with tqdm(total=len(loader)) as bar:
        for x in loader:
            out = model(x)
            bar.update(1)
""",
        after="""\
from tqdm import tqdm
import torch


def infer(model, loader):
    with tqdm(total=len(loader)) as bar:
        for x in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                out = model(x)
            bar.update(1)
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # no switch: the initialize always runs (O2 is autocast too); a model's new name is
        # the one followed
        "o2-inference-under-its-new-name",
        before="""\
from apex import amp


def predict(net, batches):
    bench = amp.initialize(net, opt_level="O2")
    bench.eval()
    return [bench(b) for b in batches]
""",
        after="""\
import torch


def predict(net, batches):
    bench = net
    bench.eval()
    with torch.autocast("cuda", dtype=torch.float16):
        return [bench(b) for b in batches]
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # the model kept on an object runs later, out of sight: the TODO stays
        "o1-inference-model-kept-on-an-object-keeps-the-todo",
        before="""\
from apex import amp


def setup(self, model, batch):
    model = amp.initialize(model, opt_level="O1")
    out = model(batch)
    self.model = model
    return out
""",
        after="""\
def setup(self, model, batch):
    # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
    #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
    out = model(batch)
    self.model = model
    return out
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # a lambda runs the model whenever it is called: the TODO stays
        "o1-inference-model-in-a-lambda-keeps-the-todo",
        before="""\
from apex import amp


def setup(model):
    model = amp.initialize(model, opt_level="O1")
    return lambda batch: model(batch)
""",
        after="""\
def setup(model):
    # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
    #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
    return lambda batch: model(batch)
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # the script picks the precision context itself (timm's amp_autocast): the TODO stays
        "o1-inference-under-a-chosen-context-keeps-the-todo",
        before="""\
from apex import amp


def run(model, batch, amp_autocast):
    model = amp.initialize(model, opt_level="O1")
    with amp_autocast():
        return model(batch)
""",
        after="""\
def run(model, batch, amp_autocast):
    # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
    #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
    with amp_autocast():
        return model(batch)
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        # the forward passes run under a context variable the function binds to a no-op
        # before the initialize's if (timm-style validate.py: efficientdet-pytorch): bound to
        # torch.autocast where the initialize stood, it casts exactly the paths apex cast; a
        # use outside it (the warm-up pass) is wrapped, switched as the initialize was
        "o1-inference-binds-the-no-op-context-variable",
        before="""\
from contextlib import suppress

import torch
from apex import amp


def validate(args, model, loader):
    amp_autocast = suppress
    if args.apex_amp:
        model = amp.initialize(model, opt_level="O1")
    elif args.native_amp:
        amp_autocast = torch.cuda.amp.autocast
    model.eval()
    with torch.no_grad():
        model(torch.randn(1, 3))
        for x in loader:
            with amp_autocast():
                out = model(x)
            print(out)
""",
        after="""\
from contextlib import suppress

import torch
import functools


def validate(args, model, loader):
    amp_autocast = suppress
    if args.apex_amp:
        amp_autocast = functools.partial(torch.autocast, device_type="cuda", dtype=torch.float16)
    elif args.native_amp:
        amp_autocast = torch.cuda.amp.autocast
    use_amp = bool(args.apex_amp)
    model.eval()
    with torch.no_grad():
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            model(torch.randn(1, 3))
        for x in loader:
            with amp_autocast():
                out = model(x)
            print(out)
""",
        codes=("APX101", "APX206", "APX904"),
    ),
    Example(
        # the variable may be bound to native autocast before the initialize on the same path
        # (TokenLabeling's validate.py, where only an assert keeps both flags apart): binding it
        # again would change that path, so the TODO stays
        "o1-inference-context-variable-bound-earlier-keeps-the-todo",
        before="""\
from contextlib import suppress

import torch
from apex import amp


def validate(args, model, loader):
    amp_autocast = suppress
    if args.native_amp:
        amp_autocast = torch.cuda.amp.autocast
    if args.apex_amp:
        model = amp.initialize(model, opt_level="O1")
    for x in loader:
        with amp_autocast():
            out = model(x)
        print(out)
""",
        after="""\
from contextlib import suppress

import torch


def validate(args, model, loader):
    amp_autocast = suppress
    if args.native_amp:
        amp_autocast = torch.cuda.amp.autocast
    if args.apex_amp:
        # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
        #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
        pass
    for x in loader:
        with amp_autocast():
            out = model(x)
        print(out)
""",
        codes=("APX101", "APX206", "APX904"),
    ),
    Example(
        # O1/O2 inference: apex ran the forward in mixed precision; nothing here shows where
        # the forward is, so the TODO stays in the file and the site is manual work
        "o1-inference-autocast-by-hand",
        before="""\
from apex import amp


def load_for_inference(model):
    model = amp.initialize(model, opt_level="O1")
    model.eval()
    return model
""",
        after="""\
def load_for_inference(model):
    # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
    #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
    model.eval()
    return model
""",
        codes=("APX101", "APX206"),
    ),
    Example(
        "old-handle-api",
        before="""\
from apex import amp


def fit(model, optimizer, batches, args):
    amp_handle = amp.init(enabled=args.fp16)
    for x in batches:
        optimizer.zero_grad()
        loss = model(x).sum()
        with amp_handle.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches, args):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX209", "APX211", "APX301", "APX311"),
    ),
    Example(
        "scaler-passed-to-same-file-function",
        before=SCALER_PASSED_TO_A_FUNCTION,
        after="""\
import torch


def train_epoch(model, optimizer, loader, scaler):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(args.epochs):
        train_epoch(model, optimizer, loader, scaler)
""",
        codes=("APX101", "APX201", "APX202", "APX207", "APX209", "APX301", "APX311"),
    ),
    Example(
        "class-trainer-keeps-scaler-on-self",
        before=TRAINER_CLASS,
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = model, optimizer
        use_amp = opt_level != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "trainer-class-built-after-initialize",
        before=TRAINER_BUILT_AFTER_INITIALIZE,
        after=TRAINER_BUILT_AFTER_INITIALIZE_MIGRATED,
        codes=("APX101", "APX201", "APX202", "APX207", "APX209", "APX301", "APX311", "APX321"),
    ),
    Example(
        "transformers-style-fp16-flag",
        before="""\
import torch
from tqdm import tqdm


def train(args, train_dataloader, model, optimizer, scheduler):
    if args.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex from https://www.github.com/nvidia/apex to use fp16 training.")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)

    # multi-gpu training (should be after apex fp16 initialization)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    global_step = 0
    tr_loss = 0.0
    model.zero_grad()
    for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
        model.train()
        batch = tuple(t.to(args.device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
        outputs = model(**inputs)
        loss = outputs[0]  # model outputs are always tuple in transformers (see doc)

        if args.n_gpu > 1:
            loss = loss.mean()  # mean() to average on multi-gpu parallel training
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps

        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        tr_loss += loss.item()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            if args.fp16:
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)

            optimizer.step()
            scheduler.step()  # Update learning rate schedule
            model.zero_grad()
            global_step += 1
    return global_step, tr_loss / global_step
""",
        after="""\
import torch
from tqdm import tqdm


def train(args, train_dataloader, model, optimizer, scheduler):
    use_amp = bool(args.fp16 and args.fp16_opt_level != "O0")
    scaler = torch.amp.GradScaler(torch.device(args.device).type, enabled=use_amp)

    # multi-gpu training (should be after apex fp16 initialization)
    if args.n_gpu > 1:
        model = torch.nn.DataParallel(model)

    global_step = 0
    tr_loss = 0.0
    model.zero_grad()
    for step, batch in enumerate(tqdm(train_dataloader, desc="Iteration")):
        model.train()
        batch = tuple(t.to(args.device) for t in batch)
        inputs = {"input_ids": batch[0], "attention_mask": batch[1], "labels": batch[3]}
        with torch.autocast(torch.device(args.device).type, dtype=torch.float16, enabled=use_amp):
            outputs = model(**inputs)
            loss = outputs[0]  # model outputs are always tuple in transformers (see doc)

            if args.n_gpu > 1:
                loss = loss.mean()  # mean() to average on multi-gpu parallel training
            if args.gradient_accumulation_steps > 1:
                loss = loss / args.gradient_accumulation_steps

        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()

        tr_loss += loss.item()
        if (step + 1) % args.gradient_accumulation_steps == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)

            scaler.step(optimizer)
            scaler.update()
            scheduler.step()  # Update learning rate schedule
            model.zero_grad()
            global_step += 1
    return global_step, tr_loss / global_step
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX301", "APX311", "APX314", "APX322"),
    ),
    Example(
        "elif-guard-and-a-variable-named-scaler",
        before="""\
from apex import amp
from sklearn.preprocessing import StandardScaler


def train(model, optimizer, batches, args):
    scaler = StandardScaler()
    if args.cpu:
        model = model.cpu()
    elif args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for x in batches:
        x = scaler.transform(x)
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
from sklearn.preprocessing import StandardScaler
import torch


def train(model, optimizer, batches, args):
    scaler = StandardScaler()
    if args.cpu:
        model = model.cpu()
    use_amp = bool(not args.cpu and args.fp16)
    grad_scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        x = scaler.transform(x)
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        grad_scaler.scale(loss).backward()
        grad_scaler.step(optimizer)
        grad_scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "functions-imported-from-apex-amp",
        before="""\
from apex.amp import initialize, scale_loss


def train(model, optimizer, batches):
    model, optimizer = initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "closure-sees-the-scaler",
        before="""\
from apex import amp


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def train_step(x):
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    for x in loader:
        train_step(x)
""",
        after="""\
import torch


def main(model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")

    def train_step(x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()

    for x in loader:
        train_step(x)
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        "gan-two-optimizers-and-loss-id",
        before="""\
import torch
from apex import amp


def train(netD, netG, optD, optG, loader, args):
    [netD, netG], [optD, optG] = amp.initialize([netD, netG], [optD, optG], opt_level=args.opt_level, num_losses=2)
    for real in loader:
        noise = torch.randn(real.size(0), 16)
        # discriminator
        optD.zero_grad()
        fake = netG(noise)
        errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        with amp.scale_loss(errD, optD, loss_id=0) as errD_scaled:
            errD_scaled.backward()
        optD.step()
        # generator
        optG.zero_grad()
        errG = criterion(netD(fake), ones)
        with amp.scale_loss(errG, optG, loss_id=1) as errG_scaled:
            errG_scaled.backward()
        optG.step()
""",
        after="""\
import torch


def train(netD, netG, optD, optG, loader, args):
    use_amp = args.opt_level != "O0"
    scalers = [torch.amp.GradScaler("cuda", enabled=use_amp) for _ in range(2)]
    for real in loader:
        noise = torch.randn(real.size(0), 16)
        # discriminator
        optD.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            fake = netG(noise)
            errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        scalers[0].scale(errD).backward()
        scalers[0].step(optD)
        scalers[0].update()
        # generator
        optG.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            errG = criterion(netD(fake), ones)
        scalers[1].scale(errG).backward()
        scalers[1].step(optG)
        scalers[1].update()
""",
        codes=("APX101", "APX201", "APX202", "APX203", "APX209", "APX209", "APX301", "APX301", "APX311", "APX311"),
    ),
    Example(
        "second-loss-from-the-same-forward-block",
        before=GAN_TWO_LOSS_IDS,
        after=GAN_TWO_LOSS_IDS_NATIVE,
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX301", "APX311", "APX311"),
    ),
    # two loss ids feed one optimizer: one GradScaler.step must see both at one scale, so one
    # GradScaler serves both losses (apex unscaled each loss with its own scale)
    Example(
        "two-loss-ids-into-one-optimizer-share-one-scaler",
        before=TWO_LOSS_IDS_ONE_OPTIMIZER,
        after="""\
import torch

scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss_main = criterion(model(x), y)
    scaler.scale(loss_main).backward()
    with torch.autocast("cuda", dtype=torch.float16):
        loss_aux = model.regularizer()
    scaler.scale(loss_aux).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX209", "APX301", "APX301", "APX302", "APX302", "APX311"),
    ),
    # apex kept one loss scaler per loss id; with one GradScaler per loss id the scale of
    # scaler i (loss_scale() or its _loss_scale) is scalers[i].get_scale() (before: the read
    # became scalers.get_scale(), an AttributeError on the list)
    Example(
        "scale-of-each-loss-id-read-from-its-own-grad-scaler",
        before=GAN_TWO_LOSS_IDS + SCALES_OF_BOTH_LOSS_IDS,
        after=GAN_TWO_LOSS_IDS_NATIVE + "    print(scalers[0].get_scale(), scalers[1].get_scale())\n",
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX301", "APX311", "APX311", "APX506", "APX506"),
    ),
    # a setting of apex's loss scaler 1 alone updates loss id 1's GradScaler (before: one
    # GradScaler served both losses, the setting applied to both)
    Example(
        "setting-of-one-loss-scaler-updates-that-loss-ids-grad-scaler",
        before=GAN_TWO_LOSS_IDS.replace("num_losses=2)\n", "num_losses=2)\n" + SECOND_SCALER_STARTS_LOW),
        after=GAN_TWO_LOSS_IDS_NATIVE.replace(
            "range(2)]\n", 'range(2)]\nscalers[1].load_state_dict({**scalers[1].state_dict(), "scale": 1024.0})\n'
        ),
        codes=("APX101", "APX201", "APX203", "APX208", "APX209", "APX301", "APX301", "APX311", "APX311"),
    ),
    # where one GradScaler serves the losses of both loss ids, its scale is not apex's scale of
    # loss scaler 0 alone (before: rewritten to scaler.get_scale())
    Example(
        "fallback-scale-of-one-loss-id-where-one-grad-scaler-serves-every-loss",
        before=TWO_LOSS_IDS_ONE_OPTIMIZER + SCALE_OF_LOSS_ID_0,
        after=TWO_LOSS_IDS_ONE_OPTIMIZER.replace("from apex", "from apexcompat")
        + """\
    # TODO(apexcompat): private amp._amp_state use: it reads the current scale of apex's
    #   loss scaler 0 (one per loss id), of num_losses=2, but natively one GradScaler serves
    #   every loss (optimizer is stepped after the losses of loss ids 0, 1): its scale is
    #   not that loss scaler's; this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
"""
        + SCALE_OF_LOSS_ID_0,
        codes=("APX102", "APX220"),
    ),
    # apex updates its scale where the amp.scale_loss block exits, a GradScaler in update()
    # after the step: read between the two, the scales differ on an overflow or a growth
    # (before: rewritten to scaler.get_scale())
    Example(
        "fallback-scale-read-between-the-scale-loss-block-and-the-step",
        before=SCALE_READ_BEFORE_THE_STEP,
        after=SCALE_READ_BEFORE_THE_STEP.replace("from apex", "from apexcompat").replace(
            "        print(",
            """\
        # TODO(apexcompat): private amp._amp_state use: it reads the current scale of apex's
        #   loss scaler 0 (one per loss id), after an amp.scale_loss block and before
        #   optimizer.step() in train(): apex updated that scale where the block exited (halved
        #   on an overflow, doubled after its run of clean steps), a GradScaler updates it in
        #   scaler.update() after the step, so there the two differ; this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        print(""",
        ),
        codes=("APX102", "APX220"),
    ),
    # the loss id is a parameter and apex kept one loss scaler: only loss id 0 had one (any
    # other raised IndexError), which nothing here proves; the reason says so
    Example(
        "fallback-scale-of-a-loss-id-given-as-a-parameter",
        before=SCALE_OF_A_GIVEN_LOSS_ID,
        after=SCALE_OF_A_GIVEN_LOSS_ID.replace("from apex", "from apexcompat").replace(
            "    scale = amp",
            """\
    # TODO(apexcompat): private amp._amp_state use: it reads the current scale of apex's
    #   loss scaler for the loss id loss_id (a parameter of grad_norm()), which is no
    #   number: apex kept one loss scaler, and nothing here proves the loss id is 0 (any
    #   other raised IndexError); this file keeps apex.amp semantics through apexcompat.amp,
    #   migrate it by hand
    scale = amp""",
        ),
        codes=("APX102", "APX220"),
    ),
    # the loss id is a parameter, and each of apex's two loss ids has its GradScaler: the same
    # index into the list of GradScalers picks the same loss id's (and raises the same
    # IndexError past the end), which reaches the helper as a parameter
    Example(
        "scale-of-a-loss-id-given-as-a-parameter-indexes-the-gradscalers",
        before=GAN_LOGS_EVERY_SCALE.replace(
            "        history = {k: sc.loss_scale() for k, sc in enumerate(amp._amp_state.loss_scalers)}\n",
            "        print(unscaled_norm(gen, 1))\n",
        )
        + UNSCALED_NORM_BY_LOSS_ID,
        after=GAN_LOGS_EVERY_SCALE_NATIVE.replace(
            "        history = {k: sc.get_scale() for k, sc in enumerate(scalers)}\n",
            "        print(unscaled_norm(gen, 1, scalers))\n",
        )
        + UNSCALED_NORM_BY_LOSS_ID.replace("loss_id):", "loss_id, scalers):").replace(
            "amp._amp_state.loss_scalers[loss_id]._loss_scale", "scalers[loss_id].get_scale()"
        ),
        codes=("APX101", "APX201", "APX203", "APX207", "APX209", "APX301", "APX311", "APX506"),
    ),
    # apex's overflow flag: set where the scale_loss block exits; a GradScaler keeps its
    # found-inf private, seen only as the scale update() lowers: the reason says when each is
    # set (it said only "the scale scaler.update() lowered")
    Example(
        "fallback-overflow-flag-of-the-loss-scalers",
        before=ANY_OVERFLOW,
        after=ANY_OVERFLOW.replace("from apex", "from apexcompat").replace(
            "    return any(",
            """\
    # TODO(apexcompat): private amp._amp_state use: it reads whether one of apex's loss
    #   scalers (one per loss id) found an overflow in the last backward (_has_overflow, set
    #   where the amp.scale_loss block exited, before the step it skips), which a GradScaler
    #   keeps private: it finds the inf/nan in scaler.unscale_() or scaler.step() and shows
    #   it only as the lower scale scaler.update() leaves; this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    return any(""",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        "target-torch-2.2-uses-cuda-gradscaler",
        before=LINEAR_LOOP,
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.cuda.amp.GradScaler()
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
        settings=Settings(target_torch=(2, 2)),
    ),
    Example(
        "amp-imported-inside-function",
        before="""\
def train(model, optimizer, batches, opt_level="O1"):
    from apex import amp

    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch

def train(model, optimizer, batches, opt_level="O1"):
    use_amp = opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        "availability-check-folded",
        before="""\
try:
    from apex import amp
except ImportError:
    amp = None


def main(args, model, optimizer, loader):
    if args.fp16:
        if amp is None:
            raise ImportError("Please install apex to use --fp16.")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).sum()
        if args.fp16 and amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main(args, model, optimizer, loader):
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX202", "APX209", "APX212", "APX212", "APX301", "APX311"),
    ),
    Example(
        # the `if` that only guarded the assert goes with it, rather than stay as `if ...: pass`
        "availability-assert-and-its-guard-removed",
        before="""\
try:
    from apex import amp
except ImportError:
    amp = None


def main(config, model, optimizer, loader):
    if config.opt_level != "O0":
        assert amp is not None, "apex is not installed"
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main(config, model, optimizer, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX212", "APX301", "APX311"),
    ),
    Example(
        # the class already keeps its own torch.cuda.amp GradScaler as self.scaler (another
        # --fp16 path): ours takes a free name, else it would overwrite that one with a
        # disabled scaler and the native path would train in float16 without loss scaling
        # (facebookresearch/CodeGen's Trainer, sweep6)
        "class-with-its-own-self-scaler-keeps-it",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16, apex):
        self.model = model
        self.optimizer = optimizer
        self.fp16 = fp16
        self.apex = apex
        self.scaler = None
        if fp16 and not apex:
            self.scaler = torch.cuda.amp.GradScaler()
        if fp16 and apex:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        if not self.fp16:
            loss.backward()
            self.optimizer.step()
        elif self.apex:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16, apex):
        self.model = model
        self.optimizer = optimizer
        self.fp16 = fp16
        self.apex = apex
        self.scaler = None
        if fp16 and not apex:
            self.scaler = torch.amp.GradScaler("cuda")
        use_amp = bool(fp16 and apex)
        self.grad_scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.grad_scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        if not self.fp16:
            loss.backward()
            self.optimizer.step()
        elif self.apex:
            self.grad_scaler.scale(loss).backward()
            self.grad_scaler.step(self.optimizer)
            self.grad_scaler.update()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX902"),
    ),
    Example(
        # the file's amp.scale_loss is entered through an ExitStack (myrtlespeech's callback,
        # sweep6): the initialize's reason points at it (it said the losses were scaled
        # elsewhere)
        "fallback-scale-loss-outside-a-with-named-at-the-initialize",
        before="""\
import contextlib

from apex import amp


class MixedPrecision:
    def __init__(self, trainer, opt_level="O1"):
        self.trainer = trainer
        trainer.model, trainer.optim = amp.initialize(trainer.model, trainer.optim, opt_level=opt_level)
        self.stack = contextlib.ExitStack()

    def on_backward_begin(self, loss):
        return self.stack.enter_context(amp.scale_loss(loss, self.trainer.optim))

    def on_backward_end(self):
        self.stack.close()
""",
        after="""\
import contextlib

from apexcompat import amp


class MixedPrecision:
    def __init__(self, trainer, opt_level="O1"):
        self.trainer = trainer
        # TODO(apexcompat): the amp.scale_loss of this file (in on_backward_begin()) has no
        #   native rewrite (the finding there says why); this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
        trainer.model, trainer.optim = amp.initialize(trainer.model, trainer.optim, opt_level=opt_level)
        self.stack = contextlib.ExitStack()

    def on_backward_begin(self, loss):
        # TODO(apexcompat): amp.scale_loss is used outside a with statement; this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        return self.stack.enter_context(amp.scale_loss(loss, self.trainer.optim))

    def on_backward_end(self):
        self.stack.close()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        "fallback-amp-stored-on-object",
        before="""\
from apex import amp


class Engine:
    def __init__(self, model, optimizer):
        self.amp = amp
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
from apexcompat import amp


class Engine:
    def __init__(self, model, optimizer):
        # TODO(apexcompat): apex.amp is stored as self.amp here; its uses through that attribute
        #   cannot be followed (the repository around this file was not indexed); this file
        #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        self.amp = amp
        # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled through
        #   self.amp, not followed; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward(self, loss):
        with self.amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        codes=("APX102", "APX220", "APX220"),
    ),
    Example(
        # a clip inside the scale_loss block (GPT2-Chinese's train.py) reads what apex had not yet
        # unscaled: this backward's gradients times the loss scale.  Before, it became a clip of
        # the unscaled sum at max_norm (max_norm * get_scale() on the scaled one): a different
        # threshold from the original run's, silently
        "fallback-clip-inside-the-scale-loss-block",
        before="""\
import torch
from apex import amp


def fit(model, optimizer, batches, fp16, opt_level, accumulation, max_norm):
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    for i, x in enumerate(batches):
        loss = model(x).mean() / accumulation
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if (i + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch
from apexcompat import amp


def fit(model, optimizer, batches, fp16, opt_level, accumulation, max_norm):
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    for i, x in enumerate(batches):
        loss = model(x).mean() / accumulation
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                # TODO(apexcompat): amp.master_params(optimizer) is read inside the amp.scale_loss
                #   block, where (O1) apex's gradients are still scaled and hold only this backward's: a
                #   clip there cuts the scaled gradients at its threshold before apex divides them by
                #   the loss scale, so moving it after scaler.unscale_() changes what trains, and a
                #   GradScaler's gradients hold every backward since the step, so a clip right after
                #   scaler.scale(loss).backward() is the same only where the step and zero_grad() follow
                #   every backward and the opt level is O1 under the default flags (written in the
                #   script, or a flag of this file whose default is O1; under O2 the block's master
                #   gradients are still empty and apex's clip there did nothing), which is not proven
                #   here; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        if (i + 1) % accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # a clip inside the scale_loss block with the opt level read from a flag whose default is
        # O2: there the block's amp.master_params are the fp32 master weights, whose gradients
        # apex fills only when the block exits (None in it after zero_grad), so apex's clip did
        # nothing on the default run, while a native clip would cut the scaled gradients: the
        # file keeps apex.amp through the shim (a default of O1 is migrated, ClippingRule's
        # examples)
        "clip-inside-the-block-with-a-flag-defaulting-to-o2-keeps-apex",
        before="""\
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--opt-level", default="O2")
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
""",
        after="""\
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--opt-level", default="O2")
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        from apexcompat import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                # TODO(apexcompat): amp.master_params(optimizer) is read inside the amp.scale_loss
                #   block, where (O1) apex's gradients are still scaled and hold only this backward's: a
                #   clip there cuts the scaled gradients at its threshold before apex divides them by
                #   the loss scale, so moving it after scaler.unscale_() changes what trains, and a
                #   GradScaler's gradients hold every backward since the step, so a clip right after
                #   scaler.scale(loss).backward() is the same only where the step and zero_grad() follow
                #   every backward and the opt level is O1 under the default flags (written in the
                #   script, or a flag of this file whose default is O1; under O2 the block's master
                #   gradients are still empty and apex's clip there did nothing), which is not proven
                #   here; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()


if __name__ == "__main__":
    main()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # second.pytorch's shape: opt_level="O2" whenever amp is on, then a clip of the model's
        # own parameters after the block: under O2 those are apex's float16 copies, whose scaled
        # gradients no step reads, so apex's clip cut nothing that trains; natively it would
        "model-clip-after-the-block-at-o2-on-every-amp-run-keeps-apex",
        before="""\
import torch
from apex import amp


def train(net, optimizer, batches, mixed):
    if mixed:
        net, optimizer = amp.initialize(net, optimizer, opt_level="O2", keep_batchnorm_fp32=True)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(net(x).float(), y)
        if mixed:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
from apexcompat import amp


def train(net, optimizer, batches, mixed):
    if mixed:
        net, optimizer = amp.initialize(net, optimizer, opt_level="O2", keep_batchnorm_fp32=True)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(net(x).float(), y)
        if mixed:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        # TODO(apexcompat): torch.nn.utils.clip_grad_norm_ clips net.parameters() after
        #   amp.scale_loss under opt level O2 on every amp run: apex's O2 model is a float16
        #   copy whose gradients are still scaled and which the step never reads (the fp32
        #   master weights are stepped), so apex's clip did not cut what trains, while natively
        #   the model is fp32 and the clip cuts the gradients the step uses; this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        torch.nn.utils.clip_grad_norm_(net.parameters(), 10.0)
        optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the scaled optimizer is held by a parameter that the function steps instead
        # (glow-tts's train(): amp.scale_loss(loss, optimizer_g._optim), then optimizer_g.step()):
        # the parameter's class is not followed into the function, so the reason says that,
        # instead of "not provably the same step"
        "fallback-optimizer-held-by-a-parameter-stepped-through-it",
        before=HELD_BY_A_PARAMETER,
        after=HELD_BY_A_PARAMETER.replace("from apex import amp", "from apexcompat import amp").replace(
            "            with amp.scale_loss(", HELD_BY_A_PARAMETER_TODO + "            with amp.scale_loss("
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex's old amp.init() called after amp.initialize (neural_sp's asr and lm train.py, on
        # their torch < 1.6 branch): the reason names it (before: "amp.initialize is called for
        # training more than once")
        "fallback-old-init-beside-initialize-named",
        before="""\
import torch
from apex import amp


def main(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    amp.init()
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
from apexcompat import amp


def main(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    # TODO(apexcompat): amp.init() (apex's old handle API) is called beside amp.initialize
    #   for training; one GradScaler cannot follow both; this file keeps apex.amp semantics
    #   through apexcompat.amp, migrate it by hand
    amp.init()
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the same pair on the old-torch side of a version test, the newer side creating a
        # GradScaler of its own: the reason says that branch is dead on the torch the native
        # rewrite needs (before: "amp.init() (apex's old handle API) is called beside ...")
        "fallback-initialize-only-on-an-old-torch-branch-says-so",
        before=OLD_TORCH_BRANCH,
        after=OLD_TORCH_BRANCH.replace("torch.cuda.amp.GradScaler()", 'torch.amp.GradScaler("cuda")').replace(
            "            from apex import amp\n", "            from apexcompat import amp\n"
        ).replace(
            "            amp.init()\n",
            """\
            # TODO(apexcompat): amp.initialize runs only in the branch of
            #   `LooseVersion(torch.__version__) >= LooseVersion("1.6.0")` (line 9) that no torch
            #   from 2.4 on (--target-torch) takes, so under the native rewrite this apex.amp code
            #   never runs: delete that branch (and what only it sets) by hand; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            amp.init()
""",
        ),
        codes=("APX102", "APX220", "APX902"),
    ),
    Example(
        "fallback-scale-loss-without-initialize",
        before="""\
from apex import amp


def train_step(model, optimizer, batch):
    loss = model(batch).mean()
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
from apexcompat import amp


def train_step(model, optimizer, batch):
    loss = model(batch).mean()
    optimizer.zero_grad()
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss; this file keeps apex.amp semantics through apexcompat.amp, migrate
    #   it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        "fallback-initialize-without-scale-loss",
        before="""\
from apex import amp

from .engine import run_training


def main(model, optimizer, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    run_training(model, optimizer)
""",
        after="""\
from apexcompat import amp

from .engine import run_training


def main(model, optimizer, args):
    # TODO(apexcompat): no amp.scale_loss in this file: the losses are scaled elsewhere;
    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    run_training(model, optimizer)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # both refusals are the per-file half of a route that would read the GradScaler off
        # the handed task, as the torch branch reads amp_grad_scaler (e2e r65: the cross-file one)
        "fallback-step-class-handed-the-task-beside-its-native-branch",
        before=STEP_CLASS_HANDED_THE_TASK,
        after=STEP_CLASS_HANDED_THE_TASK.replace("from apex import amp", "from apexcompat import amp").replace(
            "            with amp.scale_loss(", """\
            # TODO(apexcompat): task.optimizer.step() is not in the same function as amp.scale_loss;
            #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to
            #   run_backward: run_backward is a static method of class TrainStep: the GradScaler is
            #   not threaded into one; this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with amp.scale_loss(""",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex.amp handed as a value to a loss module built from another file, which scales
        # and steps with it: the reason says where it went (before: "the losses are scaled
        # elsewhere"); no GradScaler route follows a module value into a callable
        "initialize-whose-amp-is-handed-to-a-loss-module-says-where",
        before="""\
from apex import amp

from losses import SteppingLoss


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    criterion = SteppingLoss()
    for x, y in batches:
        criterion(model(x), y, amp, optimizer)
""",
        after="""\
from apexcompat import amp

from losses import SteppingLoss


def train(model, optimizer, batches):
    # TODO(apexcompat): no amp.scale_loss in this file: apex.amp is handed on as a value (to
    #   criterion() in train()), and what the code it reaches does with it (the losses it
    #   may scale) is not followed; this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    criterion = SteppingLoss()
    for x, y in batches:
        # TODO(apexcompat): apex.amp is passed on as a value here; its uses cannot be followed;
        #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        criterion(model(x), y, amp, optimizer)
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        "loss-scale-from-a-variable",
        before="""\
from apex import amp


def train(model, optimizer, batches, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=args.loss_scale)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, args):
    amp_loss_scale = args.loss_scale
    amp_scale, amp_growth = (65536.0, 2000) if amp_loss_scale in (None, "dynamic") else (float(amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the GradScaler goes after the if; the value is the parameter's, never rebound
        "loss-scale-chosen-from-a-parameter-read-after-the-if",
        before="""\
from apex import amp


def setup(model, optimizer, loss_scale, use_fp16):
    if use_fp16:
        model, optimizer = amp.initialize(
            model, optimizer, opt_level="O2", loss_scale="dynamic" if loss_scale == 0 else loss_scale
        )
    return model, optimizer


def train(model, optimizer, batches, loss_scale, use_fp16):
    model, optimizer = setup(model, optimizer, loss_scale, use_fp16)
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def setup(model, optimizer, loss_scale, use_fp16):
    use_amp = bool(use_fp16)
    amp_loss_scale = ("dynamic" if loss_scale == 0 else loss_scale) if use_fp16 else "dynamic"
    amp_scale, amp_growth = (65536.0, 2000) if amp_loss_scale in (None, "dynamic") else (float(amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    return model, optimizer, scaler


def train(model, optimizer, batches, loss_scale, use_fp16):
    model, optimizer, scaler = setup(model, optimizer, loss_scale, use_fp16)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX217", "APX301", "APX311"),
    ),
    Example(
        # the value is a local bound once, in the if that initializes, before the initialize
        # (nothing else binds it), and the opt level is chosen at run time among literals,
        # O2 or O0 (O0 turns the GradScaler off): the GradScaler after the if reads it under
        # the if's test, so the static 128 stays static (it became a dynamic scale, with a
        # TODO)
        "loss-scale-from-a-local-of-the-initializing-if-with-a-chosen-opt-level",
        before="""\
from apex import amp


def train(model, optimizer, batches, half, use_apex, fast_loader):
    if use_apex:
        scale = "dynamic" if fast_loader else "128.0"
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2" if half else "O0", loss_scale=scale)
    for x in batches:
        loss = model(x).sum()
        if use_apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, half, use_apex, fast_loader):
    if use_apex:
        scale = "dynamic" if fast_loader else "128.0"
    use_amp = bool(use_apex and ("O2" if half else "O0") != "O0")
    amp_loss_scale = scale if use_apex and ("O2" if half else "O0") != "O0" else "dynamic"
    amp_scale, amp_growth = (65536.0, 2000) if amp_loss_scale in (None, "dynamic") else (float(amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        if use_apex:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the value may change between the initialize and the GradScaler after the if
        "loss-scale-rebound-after-the-initialize-reported",
        before="""\
from apex import amp


def train(model, optimizer, batches, loss_scale, use_fp16):
    if use_fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale=loss_scale)
        loss_scale = None
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, loss_scale, use_fp16):
    if use_fp16:
        loss_scale = None
    use_amp = bool(use_fp16)
    # TODO(apexcompat): loss_scale=loss_scale is chosen at run time; the GradScaler is
    #   dynamic. If it is a number, pass init_scale=<it>, growth_interval=10**9 to the
    #   GradScaler
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX205", "APX209", "APX301", "APX311"),
    ),
    Example(
        "forward-pass-in-a-helper",
        before="""\
from apex import amp


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for batch in batches:
        loss = compute_loss(model, batch)
        with amp.scale_loss(loss, optimizer, delay_overflow_check=True) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for batch in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = compute_loss(model, batch)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX303", "APX311"),
    ),
    Example(
        # the list of optimizers one method scales the loss for is stepped one by one in a loop
        # of another method of the class: each step goes through the GradScaler, and its update
        # follows the loop
        "list-of-optimizers-stepped-in-a-loop-of-another-method",
        before="""\
import torch
from apex import amp


class PairStep:
    def __init__(self, encoder, decoder, optimizers):
        [self.encoder, self.decoder], self.optimizers = amp.initialize(
            [encoder, decoder], optimizers, opt_level="O1"
        )

    def backward(self, x):
        loss = self.decoder(self.encoder(x)).sum()
        with amp.scale_loss(loss, self.optimizers) as scaled_loss:
            scaled_loss.backward()

    def step(self):
        for optimizer in self.optimizers:
            optimizer.step()
""",
        after="""\
import torch


class PairStep:
    def __init__(self, encoder, decoder, optimizers):
        [self.encoder, self.decoder], self.optimizers = [encoder, decoder], optimizers
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.decoder(self.encoder(x)).sum()
        self.scaler.scale(loss).backward()

    def step(self):
        for optimizer in self.optimizers:
            self.scaler.step(optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the statement next to the scale_loss only rescales a loss summed before its block, in
        # a loop (that skips criteria) of the enclosing block from `total = 0`: the region holds
        # that start and the whole loop, the rescale and the metric call stay outside
        "autocast-over-a-loop-that-sums-a-loss-rescaled-in-an-inner-block",
        before=RESCALED_LOSS_OF_A_SKIPPING_LOOP,
        after="""\
import torch


class CriterionStep:
    def __init__(self, net, optimizer, criteria, meter):
        self.net, self.optimizer = net, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.criteria = criteria
        self.meter = meter

    def net_label(self):
        return type(self.net).__name__

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            total = 0
            for criterion in self.criteria:
                if criterion.skipped:
                    continue
                total += criterion(self.net(batch), batch)
        if isinstance(total, torch.Tensor):
            self.meter.add(self.net_label(), total)
            total = total / 2
            self.scaler.scale(total).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # DL-Art-School's step: injectors run the networks into a state dict, then a loop over
        # loss objects sums the loss under `if train:`, rescaled in an inner `if` before its
        # amp.scale_loss: one region over the injector loop (from the first call that feeds the
        # losses), one over the loss's start and loop; the if tests and the rescale stay outside
        "autocast-over-injectors-and-a-loss-loop-of-outer-blocks",
        before="""\
import torch
from apex import amp


class Step:
    def __init__(self, nets, optimizer, injectors, losses, weights, accum):
        nets, self.optimizer = amp.initialize(nets, optimizer, opt_level="O1")
        self.net = nets[0]
        self.injectors, self.losses, self.weights, self.accum = injectors, losses, weights, accum

    def forward_backward(self, state, train=True):
        local = dict(state)
        # the injectors run the networks on what earlier ones produced
        for inj in self.injectors:
            if inj.eval_only and train:
                continue
            local.update(inj(local))
        if train:
            total = 0
            for name, loss in self.losses.items():
                total += self.weights[name] * loss(self.net, local)
            if isinstance(total, torch.Tensor):
                total = total / self.accum
                with amp.scale_loss(total, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
        return {k: v.detach() for k, v in local.items()}

    def step(self):
        self.optimizer.step()
""",
        after="""\
import torch


class Step:
    def __init__(self, nets, optimizer, injectors, losses, weights, accum):
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.net = nets[0]
        self.injectors, self.losses, self.weights, self.accum = injectors, losses, weights, accum

    def forward_backward(self, state, train=True):
        local = dict(state)
        # the injectors run the networks on what earlier ones produced
        with torch.autocast("cuda", dtype=torch.float16):
            for inj in self.injectors:
                if inj.eval_only and train:
                    continue
                local.update(inj(local))
        if train:
            with torch.autocast("cuda", dtype=torch.float16):
                total = 0
                for name, loss in self.losses.items():
                    total += self.weights[name] * loss(self.net, local)
            if isinstance(total, torch.Tensor):
                total = total / self.accum
                self.scaler.scale(total).backward()
        return {k: v.detach() for k, v in local.items()}

    def step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # ... but a call between the loop and the rescale computes what the rescale adds to the
        # loss (the head's auxiliary term): it would stay outside the regions, so the TODO stays
        "autocast-not-over-a-loss-loop-whose-rescale-reads-a-call-after-it",
        before="""\
import torch
from apex import amp


class Step:
    def __init__(self, net, head, optimizer, crits):
        self.net, self.optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.head, self.crits = head, crits

    def run(self, x):
        out = self.net(x)
        total = 0
        for crit in self.crits:
            total += crit(out)
        self.head(out)
        if isinstance(total, torch.Tensor):
            total = total + self.head.aux
            with amp.scale_loss(total, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Step:
    def __init__(self, net, head, optimizer, crits):
        self.net, self.optimizer = net, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.head, self.crits = head, crits

    def run(self, x):
        out = self.net(x)
        total = 0
        for crit in self.crits:
            total += crit(out)
        self.head(out)
        if isinstance(total, torch.Tensor):
            total = total + self.head.aux
            # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (line
            #   15, after the loop that sums the loss and outside the region autocast could take,
            #   calls what the rescale before the scaled backward reads): wrap them in `with
            #   torch.autocast("cuda", dtype=torch.float16):` by hand
            self.scaler.scale(total).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # cvpods' optimization hook: the loss is only read off what another object's step filled
        # (no call): the forward pass that computed it is elsewhere, and the TODO says where
        "autocast-todo-names-a-loss-read-off-another-object",
        before="""\
import torch
from apex import amp


def train(model, optimizer, runner, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for data in loader:
        runner.run_step(data)
        losses = runner.storage.step_outputs["loss_for_backward"]
        optimizer.zero_grad()
        with amp.scale_loss(losses, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, runner, loader):
    scaler = torch.amp.GradScaler("cuda")
    for data in loader:
        runner.run_step(data)
        losses = runner.storage.step_outputs["loss_for_backward"]
        optimizer.zero_grad()
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (the
        #   loss is read from `runner.storage.step_outputs["loss_for_backward"]`, which other
        #   code fills: the forward pass that computes it runs there, which is not followed):
        #   wrap them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        scaler.scale(losses).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # cvpods' apex_wrapper: whether amp.initialize has run, asked of apex's global state with
        # hasattr; no GradScaler or autocast call tells that, so the file keeps the shim and the
        # TODO says what it asks (its float_function still gets the helper)
        "private-state-probe-of-whether-initialize-ran-kept-on-the-shim",
        before="""\
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
        return func(*args, **kwargs)

    return float_wraps
""",
        after='''\
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
        return func(*args, **kwargs)

    return float_wraps
''',
        codes=("APX102", "APX220", "APX504"),
    ),
    Example(
        # the same shape at module level: the forward pass before the `if` feeds the loss loop
        # (up to the module, not only to a function's body); the initialize that binds the model
        # runs no forward pass and starts no region
        "autocast-over-a-module-level-forward-and-loss-loop",
        before="""\
import torch
from apex import amp

model, optimizer = amp.initialize(torch.nn.Linear(4, 4).cuda(), torch.optim.SGD([], lr=0.1), opt_level="O1")
crits = [torch.nn.functional.mse_loss]
x = torch.randn(2, 4).cuda()
train = True
out = model(x)
if train:
    total = 0
    for c in crits:
        total += c(out, x)
    if isinstance(total, torch.Tensor):
        total = total / 2
        with amp.scale_loss(total, optimizer) as scaled_loss:
            scaled_loss.backward()
optimizer.step()
""",
        after="""\
import torch

model, optimizer = torch.nn.Linear(4, 4).cuda(), torch.optim.SGD([], lr=0.1)
scaler = torch.amp.GradScaler("cuda")
crits = [torch.nn.functional.mse_loss]
x = torch.randn(2, 4).cuda()
train = True
with torch.autocast("cuda", dtype=torch.float16):
    out = model(x)
if train:
    with torch.autocast("cuda", dtype=torch.float16):
        total = 0
        for c in crits:
            total += c(out, x)
    if isinstance(total, torch.Tensor):
        total = total / 2
        scaler.scale(total).backward()
scaler.step(optimizer)
scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # ... but the injectors run in a while loop, which no autocast region holds whole: the
        # TODO names the loop and what it feeds
        "autocast-not-over-a-loss-loop-fed-by-a-while-loop",
        before="""\
import torch
from apex import amp


class Step:
    def __init__(self, nets, optimizer, injectors, losses, weights, accum):
        nets, self.optimizer = amp.initialize(nets, optimizer, opt_level="O1")
        self.net = nets[0]
        self.injectors, self.losses, self.weights, self.accum = injectors, losses, weights, accum

    def forward_backward(self, state, train=True):
        local = dict(state)
        pending = list(self.injectors)
        while pending:
            local.update(pending.pop(0)(local))
        if train:
            total = 0
            for name, loss in self.losses.items():
                total += self.weights[name] * loss(self.net, local)
            if isinstance(total, torch.Tensor):
                total = total / self.accum
                with amp.scale_loss(total, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
        return {k: v.detach() for k, v in local.items()}

    def step(self):
        self.optimizer.step()
""",
        after="""\
import torch


class Step:
    def __init__(self, nets, optimizer, injectors, losses, weights, accum):
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.net = nets[0]
        self.injectors, self.losses, self.weights, self.accum = injectors, losses, weights, accum

    def forward_backward(self, state, train=True):
        local = dict(state)
        pending = list(self.injectors)
        while pending:
            local.update(pending.pop(0)(local))
        if train:
            total = 0
            for name, loss in self.losses.items():
                total += self.weights[name] * loss(self.net, local)
            if isinstance(total, torch.Tensor):
                total = total / self.accum
                # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (the
                #   loss summed in the loop of line 18 reads what line 14 computes, in a while loop no
                #   autocast region can hold whole): wrap them in `with torch.autocast("cuda",
                #   dtype=torch.float16):` by hand
                self.scaler.scale(total).backward()
        return {k: v.detach() for k, v in local.items()}

    def step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # the forward pass runs in a try whose handler skips an out-of-memory batch (or raises
        # again): the region holds the whole try, so a handler that leaves closes it on its way
        # out; the finiteness check and the scaled backward stay after it
        "autocast-holds-a-try-around-the-forward-pass",
        before="""\
import torch
from apex import amp


class Runner:
    def __init__(self, net, optimizer):
        self.net, self.optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.skipped = 0

    def train_step(self, batch):
        # an out-of-memory batch is skipped
        try:
            out = self.net(batch["x"])
        except RuntimeError as err:
            if "out of memory" in str(err):
                torch.cuda.empty_cache()
                self.skipped += 1
                return False
            raise
        value = out["loss"].item()
        if value != value:
            return False
        with amp.scale_loss(out["loss"] / 2, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return True
""",
        after="""\
import torch


class Runner:
    def __init__(self, net, optimizer):
        self.net, self.optimizer = net, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.skipped = 0

    def train_step(self, batch):
        # an out-of-memory batch is skipped
        with torch.autocast("cuda", dtype=torch.float16):
            try:
                out = self.net(batch["x"])
            except RuntimeError as err:
                if "out of memory" in str(err):
                    torch.cuda.empty_cache()
                    self.skipped += 1
                    return False
                raise
        value = out["loss"].item()
        if value != value:
            return False
        self.scaler.scale(out["loss"] / 2).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return True
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a second loss computed after the first scaled backward from calls that run no model
        # found here (MiB's EWC regularizer: record_gradients() reads the Fisher information
        # from p.grad), backed before the same step: apex had unscaled the first backward's
        # gradients for what runs between, so scaler.unscale_ follows it, and the term's
        # float32 backward runs plain, outside autocast, adding its gradients at their true size
        "term-backed-after-the-scaled-backward-runs-plain-after-unscale",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, net, optimizer, penalty):
        self.net, self.optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.penalty = penalty

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.penalty.record_gradients()
        extra = 0.1 * self.penalty.value()
        with amp.scale_loss(extra, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, net, optimizer, penalty):
        self.net, self.optimizer = net, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.penalty = penalty

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.optimizer)
        self.penalty.record_gradients()
        extra = 0.1 * self.penalty.value()
        extra.backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX276", "APX301", "APX301", "APX311"),
    ),
    Example(
        # the same, with a clip before the step: the clip route gives it an unscale_ after the
        # second backward, which one after the first would make raise, so no region is placed
        # for the term: manual work
        "no-autocast-for-a-term-backed-after-the-scaled-backward-before-a-clip",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, net, optimizer, penalty):
        self.net, self.optimizer = amp.initialize(net, optimizer, opt_level="O1")
        self.penalty = penalty

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.penalty.record_gradients()
        extra = 0.1 * self.penalty.value()
        with amp.scale_loss(extra, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, net, optimizer, penalty):
        self.net, self.optimizer = net, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.penalty = penalty

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.scaler.scale(loss).backward()
        self.penalty.record_gradients()
        extra = 0.1 * self.penalty.value()
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss
        #   (`extra = 0.1 * self.penalty.value()` calls no model found here, after the scaled
        #   backward of `amp.scale_loss(loss, self.optimizer)` and before the step: apex had
        #   unscaled that backward's gradients for whatever runs there, a GradScaler keeps them
        #   scaled until the step, and what these calls compute or read is not followed): wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        self.scaler.scale(extra).backward()
        self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX210", "APX301", "APX301", "APX311", "APX325"),
    ),
    Example(
        # rotom's reward: the loss multiplies a log-probability computed by the policy's forward
        # pass at the start of the loop, before another scaled backward and its step, by a value
        # computed without gradients: no region can span from that forward pass to here, and the
        # reason names where the loss's forward pass is (not the earlier, already stepped backward)
        "no-autocast-for-a-loss-read-from-a-forward-pass-before-other-steps",
        before="""\
import torch
from apex import amp


def process(model, policy, batch):
    feats = model(batch)
    return policy(feats).log_softmax(-1).sum()


def evaluate(model, batch):
    return model(batch).pow(2).mean()


def train(model, policy, optimizer, policy_optimizer, batches):
    for batch in batches:
        log_prob = process(model, policy, batch)
        optimizer.zero_grad()
        loss = model(batch).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        with torch.no_grad():
            v_loss = evaluate(model, batch)
        reward = log_prob * -v_loss
        with amp.scale_loss(reward, policy_optimizer) as scaled_loss:
            scaled_loss.backward()
        policy_optimizer.step()
        policy_optimizer.zero_grad()


def main(model, policy, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    [model, policy], [optimizer, policy_optimizer] = amp.initialize([model, policy], [optimizer, policy_optimizer], opt_level="O1")
    train(model, policy, optimizer, policy_optimizer, batches)
""",
        after="""\
import torch


def process(model, policy, batch):
    feats = model(batch)
    return policy(feats).log_softmax(-1).sum()


def evaluate(model, batch):
    return model(batch).pow(2).mean()


def train(model, policy, optimizer, policy_optimizer, batches, scaler):
    for batch in batches:
        log_prob = process(model, policy, batch)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        with torch.no_grad():
            v_loss = evaluate(model, batch)
        reward = log_prob * -v_loss
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss
        #   (`reward = log_prob * -v_loss` calls no model found here: it reads log_prob,
        #   computed by `log_prob = process(model, policy, batch)` earlier in train(), with
        #   other scaled backwards and steps between, which no autocast region can span): wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        scaler.scale(reward).backward()
        scaler.step(policy_optimizer)
        scaler.update()
        policy_optimizer.zero_grad()


def main(model, policy, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    train(model, policy, optimizer, policy_optimizer, batches, scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX210", "APX301", "APX301", "APX311", "APX311"),
    ),
    Example(
        # rotom's reward with the evaluation written out: the model calls next to the loss run
        # under torch.no_grad(), so no gradient flows through them; the one the scaled loss
        # trains (log_prob's, at the start of the loop, before another scaled backward and its
        # step) is out of any region's reach: an autocast over the evaluation and the reward
        # would leave it in float32 without a word, so the site is refused with that reason
        "no-autocast-for-a-loss-whose-gradient-skips-the-no-grad-forward-next-to-it",
        before="""\
import torch
from apex import amp


def process(model, policy, batch):
    feats = model(batch)
    return policy(feats).log_softmax(-1).sum()


def train(model, policy, optimizer, policy_optimizer, batches):
    for batch in batches:
        log_prob = process(model, policy, batch)
        optimizer.zero_grad()
        loss = model(batch).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        with torch.no_grad():
            v_loss = model(batch).pow(2).mean()
        reward = log_prob * -v_loss
        with amp.scale_loss(reward, policy_optimizer) as scaled_loss:
            scaled_loss.backward()
        policy_optimizer.step()
        policy_optimizer.zero_grad()


def main(model, policy, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    [model, policy], [optimizer, policy_optimizer] = amp.initialize([model, policy], [optimizer, policy_optimizer], opt_level="O1")
    train(model, policy, optimizer, policy_optimizer, batches)
""",
        after="""\
import torch


def process(model, policy, batch):
    feats = model(batch)
    return policy(feats).log_softmax(-1).sum()


def train(model, policy, optimizer, policy_optimizer, batches, scaler):
    for batch in batches:
        log_prob = process(model, policy, batch)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        with torch.no_grad():
            v_loss = model(batch).pow(2).mean()
        reward = log_prob * -v_loss
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (every
        #   model call found next to it runs without gradients, under torch.no_grad() or
        #   torch.inference_mode() or detached: the loss reads log_prob, computed by `log_prob =
        #   process(model, policy, batch)` earlier in train(), the forward pass its gradient
        #   flows through, with statements between that no autocast region can span): wrap them
        #   in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        scaler.scale(reward).backward()
        scaler.step(policy_optimizer)
        scaler.update()
        policy_optimizer.zero_grad()


def main(model, policy, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    train(model, policy, optimizer, policy_optimizer, batches, scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX210", "APX301", "APX301", "APX311", "APX311"),
    ),
    Example(
        # the same with the evaluation detached instead of run under torch.no_grad()
        "no-autocast-for-a-loss-whose-gradient-skips-the-detached-forward-next-to-it",
        before="""\
import torch
from apex import amp


def process(model, policy, batch):
    feats = model(batch)
    return policy(feats).log_softmax(-1).sum()


def train(model, policy, optimizer, policy_optimizer, batches):
    for batch in batches:
        log_prob = process(model, policy, batch)
        optimizer.zero_grad()
        loss = model(batch).pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        v_loss = model(batch).pow(2).mean().detach()
        reward = log_prob * -v_loss
        with amp.scale_loss(reward, policy_optimizer) as scaled_loss:
            scaled_loss.backward()
        policy_optimizer.step()
        policy_optimizer.zero_grad()


def main(model, policy, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    [model, policy], [optimizer, policy_optimizer] = amp.initialize([model, policy], [optimizer, policy_optimizer], opt_level="O1")
    train(model, policy, optimizer, policy_optimizer, batches)
""",
        after="""\
import torch


def process(model, policy, batch):
    feats = model(batch)
    return policy(feats).log_softmax(-1).sum()


def train(model, policy, optimizer, policy_optimizer, batches, scaler):
    for batch in batches:
        log_prob = process(model, policy, batch)
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(batch).pow(2).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        v_loss = model(batch).pow(2).mean().detach()
        reward = log_prob * -v_loss
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (every
        #   model call found next to it runs without gradients, under torch.no_grad() or
        #   torch.inference_mode() or detached: the loss reads log_prob, computed by `log_prob =
        #   process(model, policy, batch)` earlier in train(), the forward pass its gradient
        #   flows through, with statements between that no autocast region can span): wrap them
        #   in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        scaler.scale(reward).backward()
        scaler.step(policy_optimizer)
        scaler.update()
        policy_optimizer.zero_grad()


def main(model, policy, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    policy_optimizer = torch.optim.SGD(policy.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    train(model, policy, optimizer, policy_optimizer, batches, scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX210", "APX301", "APX301", "APX311", "APX311"),
    ),
    Example(
        # the same evaluation under torch.no_grad(), for a loss reading a parameter of the
        # method: the forward pass it trains (log_prob's) ran in the caller, so a region over
        # the evaluation and the reward would leave it in float32 without a word
        "no-autocast-for-a-loss-whose-gradient-comes-in-through-a-parameter",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def step(self, log_prob, batch):
        with torch.no_grad():
            v = self.model(batch).pow(2).mean()
        reward = log_prob * -v
        with amp.scale_loss(reward, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, log_prob, batch):
        with torch.no_grad():
            v = self.model(batch).pow(2).mean()
        reward = log_prob * -v
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (every
        #   model call found next to it runs without gradients, under torch.no_grad() or
        #   torch.inference_mode() or detached: the loss reads log_prob, a parameter of step():
        #   the forward pass its gradient flows through runs in its caller, out of reach of any
        #   autocast region here): wrap them in `with torch.autocast("cuda",
        #   dtype=torch.float16):` by hand
        self.scaler.scale(reward).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # the backbone runs under torch.no_grad() and the loss reads only what the span
        # computes: the head trained there (no model amp.initialize was given) runs inside the
        # region, as it ran in float16 under apex, so the span is wrapped; only a loss reading
        # what comes from outside the span (the examples above) is refused
        "autocast-over-a-no-grad-backbone-and-the-head-trained-next-to-it",
        before="""\
import torch
from apex import amp


class Probe:
    def __init__(self, backbone, head, optimizer):
        self.backbone, self.optimizer = amp.initialize(backbone, optimizer, opt_level="O1")
        self.head = head

    def step(self, images):
        with torch.no_grad():
            feats = self.backbone(images)
        loss = self.head(feats).logsumexp(-1).mean()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Probe:
    def __init__(self, backbone, head, optimizer):
        self.backbone, self.optimizer = backbone, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.head = head

    def step(self, images):
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                feats = self.backbone(images)
            loss = self.head(feats).logsumexp(-1).mean()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the loss comes from a callable the trainer was handed, which hides the model: no
        # autocast can be placed provably, so the site is manual work (error: --check fails
        # until it is done)
        "forward-pass-out-of-sight",
        before="""\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, objective):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.objective = objective

    def train_step(self, batch):
        loss = self.objective(batch)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, objective):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")
        self.objective = objective

    def train_step(self, batch):
        loss = self.objective(batch)
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss: wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    # the device is chosen at run time: autocast and the GradScaler follow it (CPU included)
    Example(
        "device-chosen-at-run-time",
        before="""\
import torch
from apex import amp


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Linear(8, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for _ in range(100):
        x = torch.randn(32, 8, device=device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = torch.nn.Linear(8, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler(device.type)
    for _ in range(100):
        x = torch.randn(32, 8, device=device)
        with torch.autocast(device.type, dtype=torch.float16):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    # the device of a method is not read from a global the script binds only under its
    # `__main__` guard: a process mp.spawn starts imports the module without running that block,
    # so `args` is unbound in `train` there (x-lxmert's trainer gave autocast
    # `torch.device(args.gpu)`, the constructor's parameter, in a method that has none)
    Example(
        "device-not-read-from-a-global-bound-only-under-the-main-guard",
        before="""\
import torch
import torch.multiprocessing as mp
from apex import amp


class Trainer:
    def __init__(self, args, model, optimizer):
        self.args = args
        self.model = model.to(args.gpu)
        self.optimizer = optimizer
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def train(self, loader):
        for batch in loader:
            loss = self.model(batch).mean()
            self.optimizer.zero_grad()
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self.optimizer.step()


def main_worker(gpu, args):
    args.gpu = gpu
    model = torch.nn.Linear(8, 1)
    Trainer(args, model, torch.optim.SGD(model.parameters(), lr=0.1)).train(make_loader(args))


if __name__ == "__main__":
    args = parse_args()
    mp.spawn(main_worker, nprocs=args.world_size, args=(args,))
""",
        after="""\
import torch
import torch.multiprocessing as mp


class Trainer:
    def __init__(self, args, model, optimizer):
        self.args = args
        self.model = model.to(args.gpu)
        self.optimizer = optimizer
        self.scaler = torch.amp.GradScaler(torch.device(args.gpu).type)

    def train(self, loader):
        for batch in loader:
            with torch.autocast("cuda", dtype=torch.float16):
                loss = self.model(batch).mean()
            self.optimizer.zero_grad()
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()


def main_worker(gpu, args):
    args.gpu = gpu
    model = torch.nn.Linear(8, 1)
    Trainer(args, model, torch.optim.SGD(model.parameters(), lr=0.1)).train(make_loader(args))


if __name__ == "__main__":
    args = parse_args()
    mp.spawn(main_worker, nprocs=args.world_size, args=(args,))
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    # the initialize in a `try` whose handler leaves (vokenization's xmatching: `except
    # Exception: print(e); return`) inside `if args.fp16:`: past the try it ran, so the scaler
    # is created after the `if` with its test as switch; it was created inside the try, with
    # autocast always on, so `--fp16` off trained in float16 and then found no scaler
    Example(
        "initialize-in-a-try-whose-handler-returns-keeps-its-if-as-switch",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if args.fp16:
        try:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        except Exception as e:
            print(e)
            return
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 5.0)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    if args.fp16:
        try:
            pass
        except Exception as e:
            print(e)
            return
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX322"),
    ),
    # the forward pass in a sibling `with` block (profiling ranges), the backward in another:
    # the search leaves plain `with` blocks, and autocast wraps the forward's
    Example(
        "forward-in-a-sibling-with-block",
        before="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, use_amp=False):
        self.model = model
        self.optimizer = optimizer
        self.use_amp = use_amp
        if self.use_amp:
            from apex import amp
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def loss(self, inputs, model):
        return model(inputs).mean(), {}

    def do_step(self, data):
        with torch.autograd.set_detect_anomaly(mode=False):
            with Nvtx("forward"):
                loss, meta = self.loss(data, self.model)

            self.optimizer.zero_grad()

            with Nvtx("backward"):
                if self.use_amp:
                    from apex import amp
                    with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                        scaled_loss.backward()
                else:
                    loss.backward()

        with Nvtx("weight update"):
            self.optimizer.step()
        return loss, meta
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, use_amp=False):
        self.model = model
        self.optimizer = optimizer
        self.use_amp = use_amp
        amp_enabled = bool(self.use_amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=amp_enabled)

    def loss(self, inputs, model):
        return model(inputs).mean(), {}

    def do_step(self, data):
        with torch.autograd.set_detect_anomaly(mode=False):
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                with Nvtx("forward"):
                    loss, meta = self.loss(data, self.model)

            self.optimizer.zero_grad()

            with Nvtx("backward"):
                if self.use_amp:
                    self.scaler.scale(loss).backward()
                else:
                    loss.backward()

        with Nvtx("weight update"):
            self.scaler.step(self.optimizer)
            self.scaler.update()
        return loss, meta
""",
        codes=("APX101", "APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    # O3 inference under a flag, with an empty optimizer list (waveglow's inference.py): the
    # model is cast where the initialize stood, and the unpacking keeps its shape
    Example(
        "o3-inference-under-a-flag",
        before="""\
import torch
from apex import amp


def synthesize(model, mel, is_fp16):
    model.cuda().eval()
    if is_fp16:
        model, _ = amp.initialize(model, [], opt_level="O3")
    with torch.no_grad():
        return model(mel)
""",
        after="""\
import torch


def synthesize(model, mel, is_fp16):
    model.cuda().eval()
    if is_fp16:
        # TODO(apexcompat): O3 inference: the model is now float16; apex also cast its floating
        #   inputs to float16 and its outputs back to float32 - cast the inputs with .half() and
        #   the outputs with .float() where they are used
        model, _ = model.half(), []
    with torch.no_grad():
        return model(mel)
""",
        codes=("APX101", "APX206"),
    ),
    # the old API's amp.init() in an evaluation script (maskrcnn-benchmark's test_net.py): no
    # loss is scaled, so it is O1 casting for inference, which autocast does by hand
    Example(
        "old-api-init-for-inference",
        before="""\
import torch
from apex import amp


def evaluate(cfg, model, loader):
    use_mixed_precision = cfg.DTYPE == "float16"
    amp_handle = amp.init(enabled=use_mixed_precision)
    model.eval()
    with torch.no_grad():
        return [model(x) for x in loader]
""",
        after="""\
import torch


def evaluate(cfg, model, loader):
    use_mixed_precision = cfg.DTYPE == "float16"
    # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
    #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
    model.eval()
    with torch.no_grad():
        return [model(x) for x in loader]
""",
        codes=("APX101", "APX206"),
    ),
    # inference initializes under nested flags (VL-BERT's vcr/val.py): each TODO stays on the
    # `pass` left in its own `if`, so a second run finds both again
    Example(
        "inference-todos-stay-in-their-if",
        before="""\
import torch
from apex import amp


def main(args, answer_model, rationale_model):
    if args.answer:
        answer_model = answer_model.cuda()
        if args.fp16:
            [answer_model] = amp.initialize([answer_model],
                                            opt_level='O2',
                                            keep_batchnorm_fp32=False)
        answer_model.eval()
    if args.rationale:
        if args.fp16:
            [rationale_model] = amp.initialize([rationale_model], opt_level='O3')
        rationale_model.eval()
    print("Evaluate...")
""",
        after="""\
import torch


def main(args, answer_model, rationale_model):
    if args.answer:
        answer_model = answer_model.cuda()
        if args.fp16:
            # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
            #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
            pass
        answer_model.eval()
    if args.rationale:
        if args.fp16:
            # TODO(apexcompat): O3 inference: the model is now float16; apex also cast its floating
            #   inputs to float16 and its outputs back to float32 - cast the inputs with .half() and
            #   the outputs with .float() where they are used
            rationale_model.half()
        rationale_model.eval()
    print("Evaluate...")
""",
        codes=("APX101", "APX206", "APX206"),
    ),
    Example(
        # the two initializes are branches of one if/else, so only one runs: each creates the scaler
        # with its own options, and the fp32 path (no --half) gets a disabled one before the if
        "alternative-initializes-each-create-the-scaler",
        before="""\
import torch
from apex import amp


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if args.half:
        if args.static_scale > 0:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=256.0)
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale="dynamic")
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if args.half:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.amp.GradScaler("cuda", enabled=False)
    if args.half:
        if args.static_scale > 0:
            # TODO(apexcompat): static loss_scale=256.0: the GradScaler keeps this scale, but unlike
            #   apex it skips a step whose grads hold inf/nan, which apex took; check that this is
            #   acceptable
            scaler = torch.amp.GradScaler("cuda", init_scale=256.0, growth_interval=10**9)
            scaler.set_backoff_factor(1.0)
        else:
            scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # if/elif/else all initialize: every path creates the scaler, no disabled one is needed
        "alternative-initializes-on-every-path",
        before="""\
import torch
from apex import amp


def fit(model, optimizer, batches, opt_level, dynamic):
    if dynamic:
        model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    elif opt_level == "O1":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", loss_scale=1024)
    else:
        model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, loss_scale=128)
    for x in batches:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def fit(model, optimizer, batches, opt_level, dynamic):
    if dynamic:
        use_amp = opt_level != "O0"
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    elif opt_level == "O1":
        # TODO(apexcompat): static loss_scale=1024: the GradScaler keeps this scale, but unlike
        #   apex it skips a step whose grads hold inf/nan, which apex took; check that this is
        #   acceptable
        scaler = torch.amp.GradScaler("cuda", init_scale=1024, growth_interval=10**9)
        scaler.set_backoff_factor(1.0)
    else:
        use_amp = opt_level != "O0"
        # TODO(apexcompat): static loss_scale=128: the GradScaler keeps this scale, but unlike
        #   apex it skips a step whose grads hold inf/nan, which apex took; check that this is
        #   acceptable
        scaler = torch.amp.GradScaler("cuda", init_scale=128, growth_interval=10**9, enabled=use_amp)
        scaler.set_backoff_factor(1.0)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=(
            "APX101", "APX201", "APX201", "APX201", "APX202", "APX202", "APX204", "APX204", "APX209", "APX301", "APX311"
        ),
    ),
    Example(
        # branches of an if inside a loop: both initializes run, one per iteration
        "fallback-initialize-in-a-loop",
        before="""\
import torch
from apex import amp


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for stage in ("warmup", "main"):
        if stage == "warmup":
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
        loss = model(batch).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch
from apexcompat import amp


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for stage in ("warmup", "main"):
        if stage == "warmup":
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        else:
            # TODO(apexcompat): amp.initialize is called for training more than once; one GradScaler
            #   cannot follow both; this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
        loss = model(batch).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the helper that initializes returns what main unpacks: it returns the scaler too
        "helper-returns-the-scaler",
        before="""\
import torch
from apex import amp


def prepare(model, lr, fp16, total_steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = None
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale="dynamic")
    if total_steps is not None:
        scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, total_iters=total_steps)
    return model, optimizer, scheduler


def main(args):
    model = build_model().cuda()
    model, optimizer, scheduler = prepare(model, args.lr, args.fp16, args.steps)
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def prepare(model, lr, fp16, total_steps):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    scheduler = None
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    if total_steps is not None:
        scheduler = torch.optim.lr_scheduler.LinearLR(optimizer, total_iters=total_steps)
    return model, optimizer, scheduler, scaler


def main(args):
    model = build_model().cuda()
    model, optimizer, scheduler, scaler = prepare(model, args.lr, args.fp16, args.steps)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX217", "APX301", "APX311", "APX316"),
    ),
    Example(
        # initialize(model, optimizers=None) returned the model alone; the kept assignment does too
        "helper-returns-the-scaler-optimizer-may-be-none",
        before="""\
import torch
from apex import amp


def setup(model, fp16, training):
    optimizer = None
    if training:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if fp16:
        initialized = amp.initialize(model, optimizers=optimizer, opt_level="O1")
        model, optimizer = initialized if training else (initialized, None)
    return model, optimizer


def main(args):
    model, optimizer = setup(build_model().cuda(), args.fp16, True)
    for x in loader:
        loss = model(x).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def setup(model, fp16, training):
    optimizer = None
    if training:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if fp16:
        initialized = model if optimizer is None else (model, optimizer)
        model, optimizer = initialized if training else (initialized, None)
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    return model, optimizer, scaler


def main(args):
    model, optimizer, scaler = setup(build_model().cuda(), args.fp16, True)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX217", "APX301", "APX311"),
    ),
    # another backend's branch runs the forward pass under its own autocast, the apex branch
    # without one (SwinBERT's fairscale beside apex): the autocast switched like the GradScaler
    # spans the whole if, the inner one still decides in its branch
    Example(
        "forward-under-another-backends-autocast-in-one-branch-is-spanned-whole",
        before="""\
import torch
from apex import amp


def main(args, loader):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    native = args.backend == "native"
    if native:
        grads = torch.amp.GradScaler("cuda")
    else:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        if native:
            with torch.autocast("cuda"):
                out = model(x)
        else:
            out = model(x)
        loss = out.pow(2).mean()
        if native:
            grads.scale(loss).backward()
            grads.step(optimizer)
            grads.update()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
""",
        after="""\
import torch


def main(args, loader):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    native = args.backend == "native"
    if native:
        grads = torch.amp.GradScaler("cuda")
    use_amp = not native
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            if native:
                with torch.autocast("cuda"):
                    out = model(x)
            else:
                out = model(x)
            loss = out.pow(2).mean()
        if native:
            grads.scale(loss).backward()
            grads.step(optimizer)
            grads.update()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    # the forward already runs under an autocast switched on for a native branch only: it is
    # switched on for the GradScaler too, and the apex branch gets the new scaler, not the user's
    Example(
        "forward-under-an-autocast-switched-for-a-native-branch",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, use_apex, use_native):
    if use_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    native_scaler = torch.amp.GradScaler("cuda", enabled=use_native)
    for x, y in loader:
        with torch.autocast("cuda", enabled=use_native):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if use_apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        else:
            native_scaler.scale(loss).backward()
            native_scaler.step(optimizer)
            native_scaler.update()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, use_apex, use_native):
    use_amp = bool(use_apex)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    native_scaler = torch.amp.GradScaler("cuda", enabled=use_native)
    for x, y in loader:
        with torch.autocast("cuda", enabled=use_native or use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if use_apex:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        else:
            native_scaler.scale(loss).backward()
            native_scaler.step(optimizer)
            native_scaler.update()
        optimizer.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311'),
    ),
    # apex's loss scaler tuned right after initialize through a local alias (DLE-GNMT's shape):
    # the settings become GradScaler arguments; a ceiling for the scale has no counterpart
    Example(
        "loss-scaler-settings-through-an-alias-become-grad-scaler-arguments",
        before="""\
import torch.nn.functional as F
from apex import amp


def train(model, optimizer, batches, init_scale):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    loss_scaler = amp._amp_state.loss_scalers[0]
    loss_scaler._loss_scale = init_scale
    loss_scaler._scale_seq_len = 500
    loss_scaler._max_loss_scale = 2.0**20
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch.nn.functional as F
import torch


def train(model, optimizer, batches, init_scale):
    scaler = torch.amp.GradScaler("cuda", init_scale=init_scale, growth_interval=500)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=('APX101', 'APX201', 'APX208', 'APX208', 'APX209', 'APX222', 'APX301', 'APX311'),
    ),
    # the settings run in another method, at a time nothing proves: they update the GradScaler
    # there through its public API (the current scale, as apex's assignment set it)
    Example(
        "loss-scaler-settings-in-another-method-update-the-grad-scaler",
        before="""\
import torch.nn.functional as F
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def configure_scaler(self, init_scale, window):
        scaler_state = amp._amp_state.loss_scalers[0]
        scaler_state._loss_scale = init_scale
        scaler_state._scale_seq_len = window

    def train_step(self, x, y):
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
""",
        after="""\
import torch.nn.functional as F
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def configure_scaler(self, init_scale, window):
        self.scaler.load_state_dict({**self.scaler.state_dict(), "scale": init_scale})
        self.scaler.set_growth_interval(window)

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
""",
        codes=('APX101', 'APX201', 'APX208', 'APX208', 'APX209', 'APX301', 'APX311'),
    ),
    # apex ignores the growth interval of a static loss scale: the setting goes, the scale stays put
    Example(
        "growth-interval-of-a-static-loss-scale-is-dropped",
        before="""\
import torch.nn.functional as F
from apex import amp


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
    amp._amp_state.loss_scalers[0]._scale_seq_len = 100
    for x, y in batches:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch.nn.functional as F
import torch


def train(model, optimizer, batches):
    # TODO(apexcompat): static loss_scale=128.0: the GradScaler keeps this scale, but unlike
    #   apex it skips a step whose grads hold inf/nan, which apex took; check that this is
    #   acceptable
    scaler = torch.amp.GradScaler("cuda", init_scale=128.0, growth_interval=10**9)
    scaler.set_backoff_factor(1.0)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=('APX101', 'APX201', 'APX202', 'APX204', 'APX209', 'APX222', 'APX301', 'APX311'),
    ),
    # a module-level helper scales the loss it is handed, its caller (a method) steps: the
    # GradScaler kept on self is passed to the helper as a new parameter, which the scale-loss
    # and step rules must find there too (they did not when no plain name held the scaler:
    # the initialize was rewritten, the scale_loss and the step were left on apexcompat.amp,
    # which then raised as uninitialized, with no finding)
    Example(
        "backward-helper-called-by-a-method-keeping-the-scaler-on-self",
        before="""\
import torch
from apex import amp


def backward_scaled(use_fp16, loss, optimizer):
    if use_fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()


class Runner:
    def __init__(self, net, use_fp16=False):
        self.net = net
        self.optim = torch.optim.SGD(net.parameters(), lr=0.01)
        self.use_fp16 = use_fp16
        if use_fp16:
            self.net, self.optim = amp.initialize(self.net, self.optim, opt_level="O1")

    def fit(self, batches):
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            backward_scaled(self.use_fp16, loss, self.optim)
            self.optim.step()
            self.optim.zero_grad()
""",
        after="""\
import torch


def backward_scaled(use_fp16, loss, optimizer, scaler):
    if use_fp16:
        scaler.scale(loss).backward()
    else:
        loss.backward()


class Runner:
    def __init__(self, net, use_fp16=False):
        self.net = net
        self.optim = torch.optim.SGD(net.parameters(), lr=0.01)
        self.use_fp16 = use_fp16
        use_amp = bool(use_fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def fit(self, batches):
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
                loss = torch.nn.functional.mse_loss(self.net(x), y)
            backward_scaled(self.use_fp16, loss, self.optim, self.scaler)
            self.scaler.step(self.optim)
            self.scaler.update()
            self.optim.zero_grad()
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX301", "APX311"),
    ),
    # lucidrains' trainers (stylegan2, unet-stylegan2, denoising-diffusion): the helper that scales
    # the loss is called through `backwards = partial(helper, self.fp16)` in one method, and that
    # method's class keeps the object whose __init__ initializes as self.pair: each call passes
    # the GradScaler of its loss id by keyword, read through self.pair, as are the models autocast
    # covers (also the module built around one, D_wrapped); each step gets its own update
    Example(
        "backward-helper-bound-by-partial-in-a-trainer-keeping-the-initializing-object",
        before="""\
from functools import partial

import torch
from apex import amp


def backward_scaled(fp16, loss, optimizer, loss_id, **kwargs):
    if fp16:
        with amp.scale_loss(loss, optimizer, loss_id) as scaled_loss:
            scaled_loss.backward(**kwargs)
    else:
        loss.backward(**kwargs)


class Adversaries(torch.nn.Module):
    def __init__(self, fp16=False):
        super().__init__()
        self.G = torch.nn.Linear(8, 8)
        self.D = torch.nn.Linear(8, 1)
        self.D_wrapped = torch.nn.Sequential(self.D)
        self.G_opt = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        self.D_opt = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.fp16 = fp16
        if fp16:
            (self.G, self.D), (self.G_opt, self.D_opt) = amp.initialize(
                [self.G, self.D], [self.G_opt, self.D_opt], opt_level="O1", num_losses=2
            )


class Trainer:
    def __init__(self, fp16=False):
        self.fp16 = fp16
        self.pair = None

    def build(self):
        self.pair = Adversaries(fp16=self.fp16)

    def train(self, reals):
        if self.pair is None:
            self.build()
        backwards = partial(backward_scaled, self.fp16)
        self.pair.D_opt.zero_grad()
        fakes = self.pair.G(torch.randn_like(reals)).detach()
        d_loss = torch.relu(1 + self.pair.D_wrapped(fakes)).mean() + torch.relu(1 - self.pair.D(reals)).mean()
        backwards(d_loss, self.pair.D_opt, loss_id=0)
        self.pair.D_opt.step()
        self.pair.G_opt.zero_grad()
        g_loss = -self.pair.D(self.pair.G(torch.randn_like(reals))).mean()
        backwards(g_loss, self.pair.G_opt, loss_id=1)
        self.pair.G_opt.step()
""",
        after="""\
from functools import partial

import torch


def backward_scaled(fp16, loss, optimizer, loss_id, *, scalers, **kwargs):
    if fp16:
        scalers.scale(loss).backward(**kwargs)
    else:
        loss.backward(**kwargs)


class Adversaries(torch.nn.Module):
    def __init__(self, fp16=False):
        super().__init__()
        self.G = torch.nn.Linear(8, 8)
        self.D = torch.nn.Linear(8, 1)
        self.D_wrapped = torch.nn.Sequential(self.D)
        self.G_opt = torch.optim.Adam(self.G.parameters(), lr=1e-3)
        self.D_opt = torch.optim.Adam(self.D.parameters(), lr=1e-3)
        self.fp16 = fp16
        use_amp = bool(fp16)
        self.scalers = [torch.amp.GradScaler("cuda", enabled=use_amp) for _ in range(2)]


class Trainer:
    def __init__(self, fp16=False):
        self.fp16 = fp16
        self.pair = None

    def build(self):
        self.pair = Adversaries(fp16=self.fp16)

    def train(self, reals):
        if self.pair is None:
            self.build()
        backwards = partial(backward_scaled, self.fp16)
        self.pair.D_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.pair.scalers[0].is_enabled()):
            fakes = self.pair.G(torch.randn_like(reals)).detach()
            d_loss = torch.relu(1 + self.pair.D_wrapped(fakes)).mean() + torch.relu(1 - self.pair.D(reals)).mean()
        backwards(d_loss, self.pair.D_opt, loss_id=0, scalers=self.pair.scalers[0])
        self.pair.scalers[0].step(self.pair.D_opt)
        self.pair.scalers[0].update()
        self.pair.G_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.pair.scalers[0].is_enabled()):
            g_loss = -self.pair.D(self.pair.G(torch.randn_like(reals))).mean()
        backwards(g_loss, self.pair.G_opt, loss_id=1, scalers=self.pair.scalers[1])
        self.pair.scalers[1].step(self.pair.G_opt)
        self.pair.scalers[1].update()
""",
        codes=('APX101', 'APX201', 'APX203', 'APX207', 'APX209', 'APX209', 'APX301', 'APX311', 'APX311'),
    ),
    # stylegan2's contrastive regularizer: a module built around the critic keeps what each call
    # of it computes (its value is discarded), under an if and in a loop, and the loss is read off
    # it afterwards: autocast spans those calls too, the module read through the attribute that
    # keeps the initializing object
    Example(
        "forward-kept-by-a-wrapper-of-the-model-is-under-the-autocast-of-the-loss-read-off-it",
        before="""\
from functools import partial

import torch
from apex import amp


def backward_scaled(fp16, loss, optimizer):
    if fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()


""" + KEEPING_WRAPPER + """\
class Critic(torch.nn.Module):
    def __init__(self, fp16=False):
        super().__init__()
        self.D = torch.nn.Linear(8, 1)
        self.D_reg = Collector(self.D)
        self.D_opt = torch.optim.SGD(self.D.parameters(), lr=0.1)
        self.fp16 = fp16
        if fp16:
            self.D, self.D_opt = amp.initialize(self.D, self.D_opt, opt_level="O1")


class Trainer:
    def __init__(self, fp16=False):
        self.fp16 = fp16
        self.critic = Critic(fp16)

    def regularize(self, batches, extra):
        backwards = partial(backward_scaled, self.fp16)
        self.critic.D_opt.zero_grad()
        if extra is not None:
            for x in extra:
                self.critic.D_reg(x)
        for x in batches:
            self.critic.D_reg(x)
        loss = self.critic.D_reg.spread_loss()
        backwards(loss, self.critic.D_opt)
        self.critic.D_opt.step()
""",
        after="""\
from functools import partial

import torch


def backward_scaled(fp16, loss, optimizer, scaler):
    if fp16:
        scaler.scale(loss).backward()
    else:
        loss.backward()


""" + KEEPING_WRAPPER + """\
class Critic(torch.nn.Module):
    def __init__(self, fp16=False):
        super().__init__()
        self.D = torch.nn.Linear(8, 1)
        self.D_reg = Collector(self.D)
        self.D_opt = torch.optim.SGD(self.D.parameters(), lr=0.1)
        self.fp16 = fp16
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)


class Trainer:
    def __init__(self, fp16=False):
        self.fp16 = fp16
        self.critic = Critic(fp16)

    def regularize(self, batches, extra):
        backwards = partial(backward_scaled, self.fp16)
        self.critic.D_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.critic.scaler.is_enabled()):
            if extra is not None:
                for x in extra:
                    self.critic.D_reg(x)
            for x in batches:
                self.critic.D_reg(x)
            loss = self.critic.D_reg.spread_loss()
        backwards(loss, self.critic.D_opt, self.critic.scaler)
        self.critic.scaler.step(self.critic.D_opt)
        self.critic.scaler.update()
""",
        codes=('APX101', 'APX201', 'APX207', 'APX209', 'APX301', 'APX311'),
    ),
    # the name the partial binds is handed to another method: its calls there are not followed
    Example(
        "partial-of-the-backward-helper-handed-on-keeps-the-shim",
        before=BOUND_NAME_HANDED_ON,
        after=BOUND_NAME_HANDED_ON.replace("from apex import amp", "from apexcompat import amp").replace(
            "        with amp.scale_loss(", BOUND_NAME_HANDED_ON_TODO + "        with amp.scale_loss("
        ),
        codes=('APX102', 'APX220', 'APX220'),
    ),
    # the attribute that keeps the initializing object is also assigned what a caller hands in: it
    # may hold an object without a GradScaler
    Example(
        "initializing-object-in-an-attribute-also-assigned-another-way-keeps-the-shim",
        before=HOLDER_ALSO_ASSIGNED,
        after=HOLDER_ALSO_ASSIGNED.replace("from apex import amp", "from apexcompat import amp")
        .replace("        with amp.scale_loss(", HOLDER_ALSO_ASSIGNED_TODOS[0] + "        with amp.scale_loss(")
        .replace("        self.model.opt.step()", HOLDER_ALSO_ASSIGNED_TODOS[1] + "        self.model.opt.step()"),
        codes=('APX102', 'APX220', 'APX220'),
    ),
    # XLM's trainer: __init__ calls the method that initializes only under an if, and the
    # other methods use the scaler either way: __init__ creates a disabled one first
    Example(
        "scaler-made-in-a-method-init-calls-under-an-if-is-disabled-otherwise",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16, clip):
        self.model, self.opt = model, optimizer
        self.fp16, self.clip = fp16, clip
        if fp16:
            self.setup_amp()

    def setup_amp(self):
        self.model, self.opt = amp.initialize(self.model, self.opt, opt_level="O1")

    def step(self, batch):
        loss = self.model(batch).mean()
        if self.fp16:
            with amp.scale_loss(loss, self.opt) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.opt), self.clip)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.opt.step()
        self.opt.zero_grad()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16, clip):
        self.model, self.opt = model, optimizer
        self.fp16, self.clip = fp16, clip
        self.scaler = torch.amp.GradScaler(enabled=False)
        if fp16:
            self.setup_amp()

    def setup_amp(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(batch).mean()
        if self.fp16:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.opt)
            torch.nn.utils.clip_grad_norm_((p for group in self.opt.param_groups for p in group["params"]), self.clip)
        else:
            self.scaler.scale(loss).backward()
            self.scaler.unscale_(self.opt)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)
        self.scaler.step(self.opt)
        self.scaler.update()
        self.opt.zero_grad()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX221', 'APX255', 'APX301', 'APX311', 'APX316', 'APX321'),
    ),
    # the forward pass is in a subclass that inherits the method scaling the loss (XLM's
    # EncDecTrainer.mt_step calls Trainer.optimize): autocast goes around it there
    Example(
        "forward-in-a-subclass-that-inherits-the-backward-method",
        before="""\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward_and_step(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


class ClassifierTrainer(Trainer):
    def __init__(self, model, optimizer, criterion):
        super().__init__(model, optimizer)
        self.criterion = criterion

    def train_step(self, inputs, labels):
        logits = self.model(inputs)
        loss = self.criterion(logits, labels)
        self.backward_and_step(loss)
        return loss.item()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def backward_and_step(self, loss):
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()


class ClassifierTrainer(Trainer):
    def __init__(self, model, optimizer, criterion):
        super().__init__(model, optimizer)
        self.criterion = criterion

    def train_step(self, inputs, labels):
        with torch.autocast("cuda", dtype=torch.float16):
            logits = self.model(inputs)
            loss = self.criterion(logits, labels)
        self.backward_and_step(loss)
        return loss.item()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX301', 'APX311'),
    ),
    # the method that initializes runs only when another method (not __init__) is called with
    # fp16: an instance may never get a scaler, and nothing proves when that method runs
    Example(
        "scaler-made-in-a-method-called-under-an-if-outside-init-stays-on-apexcompat",
        before="""\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer = model, optimizer

    def enable_fp16(self, fp16):
        if fp16:
            self.setup_amp()

    def setup_amp(self):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, batch):
        loss = self.model(batch).mean()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
from apexcompat import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer = model, optimizer

    def enable_fp16(self, fp16):
        if fp16:
            self.setup_amp()

    def setup_amp(self):
        # TODO(apexcompat): the GradScaler would be created in setup_amp(), which runs only if
        #   fp16; the other methods would find no self.scaler otherwise (the if is not in
        #   __init__); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, batch):
        loss = self.model(batch).mean()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        codes=('APX102', 'APX220'),
    ),
    # a caller of the helper that never steps would keep scaled gradients: no native rewrite
    Example(
        "caller-that-does-not-step-stays-on-apexcompat",
        before="""\
from apex import amp


def backward(model, batch, optimizer):
    loss = model(batch).mean()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()


def train(model, optimizer, loader):
    for batch in loader:
        backward(model, batch, optimizer)
        optimizer.step()
        optimizer.zero_grad()


def gradient_norms(model, optimizer, batch):
    backward(model, batch, optimizer)
    return [p.grad.norm() for p in model.parameters()]


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, loader)
    print(gradient_norms(model, optimizer, next(iter(loader))))
""",
        after="""\
from apexcompat import amp


def backward(model, batch, optimizer):
    loss = model(batch).mean()
    # TODO(apexcompat): optimizer.step() is not in the same function as amp.scale_loss, and
    #   gradient_norms(), which calls backward(), has no optimizer.step() after it; this
    #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()


def train(model, optimizer, loader):
    for batch in loader:
        backward(model, batch, optimizer)
        optimizer.step()
        optimizer.zero_grad()


def gradient_norms(model, optimizer, batch):
    backward(model, batch, optimizer)
    return [p.grad.norm() for p in model.parameters()]


def main(model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train(model, optimizer, loader)
    print(gradient_norms(model, optimizer, next(iter(loader))))
""",
        codes=('APX102', 'APX220'),
    ),
    # `"apex" in sys.modules` is an availability check like `amp is not None` (Transformer-XL)
    Example(
        "apex-in-sys-modules-check-folds",
        before="""\
import sys

import torch

try:
    from apex import amp
except ImportError:
    pass


def train(model, optimizer, loader, fp16):
    if fp16 and "apex" not in sys.modules:
        raise RuntimeError("fp16 needs apex")
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import sys

import torch


def train(model, optimizer, loader, fp16):
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=('APX101', 'APX103', 'APX201', 'APX209', 'APX212', 'APX301', 'APX311'),
    ),
    # timm's training-script shape: ApexScaler/NativeScaler from the installed timm.utils, a
    # no-op `amp_autocast = suppress` rebound only on the native branch, and the loss computed
    # under it in a function given both: ApexScaler() becomes NativeScaler(), the apex branch
    # binds amp_autocast to torch.autocast, and the checkpoint key change is left as a TODO
    Example(
        "installed-timm-apex-scaler-becomes-native-scaler",
        before="""\
import argparse
from contextlib import suppress

import torch
from timm.utils import ApexScaler, NativeScaler

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


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if args.amp_impl == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp_impl == "native":
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
""",
        after="""\
import argparse
from contextlib import suppress

import torch
from timm.utils import NativeScaler
import functools

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


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress  # do nothing
    loss_scaler = None
    if args.amp_impl == "apex":
        amp_autocast = functools.partial(torch.autocast, device_type="cuda", dtype=torch.float16)
        # TODO(apexcompat): ApexScaler() became timm's NativeScaler() (the same calls), which
        #   keeps its state under the checkpoint key 'amp_scaler'; ApexScaler kept apex's under
        #   'amp' ({'loss_scaler0': {'loss_scale': s, 'unskipped': n}}), which timm's
        #   resume_checkpoint no longer reads: a run resumed from a checkpoint written before
        #   this migration restarts the loss scale at 65536 unless that entry is converted
        #   first: checkpoint['amp_scaler'] = dict(loss_scaler.state_dict(), scale=s,
        #   _growth_tracker=n)
        loss_scaler = NativeScaler()
    elif args.amp_impl == "native":
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, amp_autocast=amp_autocast, loss_scaler=loss_scaler)
""",
        codes=('APX101', 'APX103', 'APX215', 'APX216', 'APX904'),
    ),
    # the same, but the loss is computed without the autocast variable (the training function
    # never gets it): binding it would not reach the forward pass, so the file keeps the shim
    Example(
        "installed-timm-apex-scaler-without-the-autocast-variable-keeps-the-shim",
        before="""\
from contextlib import suppress

import torch
from timm.utils import ApexScaler, NativeScaler

try:
    from apex import amp
except ImportError:
    amp = None


def train_one_epoch(model, loader, optimizer, loss_scaler):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss_scaler(loss, optimizer)


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    if args.amp_impl == "apex":
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    else:
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, loss_scaler)
""",
        after="""\
from contextlib import suppress

import torch
from timm.utils import ApexScaler, NativeScaler

try:
    from apexcompat import amp
except ImportError:
    amp = None


def train_one_epoch(model, loader, optimizer, loss_scaler):
    for x, y in loader:
        loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
        optimizer.zero_grad()
        loss_scaler(loss, optimizer)


def main(args, model, loader):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp_autocast = suppress
    if args.amp_impl == "apex":
        # TODO(apexcompat): no amp.scale_loss in this file: ApexScaler scales the losses, but
        #   loss_scaler is passed to train_one_epoch() without amp_autocast; this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    else:
        amp_autocast = torch.cuda.amp.autocast
        loss_scaler = NativeScaler()
    for epoch in range(10):
        train_one_epoch(model, loader, optimizer, loss_scaler)
""",
        codes=('APX102', 'APX220', 'APX904'),
    ),
    Example(
        # amp.initialize(model, optimizer, **cfg): the options come from the config at run time;
        # they are read from it there (opt level, enabled, a numeric loss_scale is static)
        "initialize-options-from-a-mapping",
        before='''\
import torch
from apex import amp


class Task:
    """amp_args: the keyword arguments of amp.initialize from the config, or None."""

    def __init__(self, model, optimizer, amp_args=None):
        self.model = model
        self.optimizer = optimizer
        self.amp_args = amp_args

    def prepare(self):
        if self.amp_args is not None:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **self.amp_args)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        if self.amp_args is not None:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.optimizer.step()
''',
        after='''\
import torch


class Task:
    """amp_args: the keyword arguments of amp.initialize from the config, or None."""

    def __init__(self, model, optimizer, amp_args=None):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer
        self.amp_args = amp_args

    def prepare(self):
        amp_options = dict(self.amp_args) if self.amp_args is not None else {"enabled": False}
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        self.scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
        self.scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
''',
        codes=('APX101', 'APX201', 'APX202', 'APX204', 'APX209', 'APX261', 'APX301', 'APX311', 'APX316'),
    ),
    Example(
        # an enum chooses apex or a native GradScaler of the class's own: the apex branch gets
        # its GradScaler (off on the other paths) and autocast, the native branch stays as it was;
        # the plain else stays plain with a warning (APX256): the native step beside it keeps it
        # from being scaled, and the tool cannot show it runs with the GradScaler off
        "apex-branch-beside-a-native-branch",
        before="""\
import enum

import torch
from apex import amp


class Precision(enum.Enum):
    APEX = "apex"
    NATIVE = "native"


class Task:
    def __init__(self, model, optimizer, amp_config=None, precision=None):
        self.model = model
        self.optimizer = optimizer
        self.amp_config = amp_config
        self.precision = precision
        self.native_scaler = None
        if precision == Precision.NATIVE:
            self.native_scaler = torch.cuda.amp.GradScaler()

    def prepare(self):
        if self.precision == Precision.APEX:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, **self.amp_config)

    def forward_context(self):
        return torch.cuda.amp.autocast() if self.precision == Precision.NATIVE else torch.enable_grad()

    def train_step(self, x, y):
        with self.forward_context():
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.run_optimizer(loss)
        return loss.item()

    def run_optimizer(self, loss):
        self.optimizer.zero_grad()
        if self.precision == Precision.APEX:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        elif self.precision == Precision.NATIVE:
            self.native_scaler.scale(loss).backward()
        else:
            loss.backward()
        if self.precision == Precision.NATIVE:
            self.native_scaler.step(self.optimizer)
            self.native_scaler.update()
        else:
            self.optimizer.step()

    def state_dict(self):
        state = {"model": self.model.state_dict()}
        if self.precision == Precision.APEX:
            state["amp"] = amp.state_dict()
        elif self.native_scaler is not None:
            state["amp"] = self.native_scaler.state_dict()
        return state

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        if "amp" in state:
            if self.precision == Precision.APEX:
                amp.load_state_dict(state["amp"])
            else:
                self.native_scaler.load_state_dict(state["amp"])
""",
        after='''\
import enum

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


class Precision(enum.Enum):
    APEX = "apex"
    NATIVE = "native"


class Task:
    def __init__(self, model, optimizer, amp_config=None, precision=None):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer
        self.amp_config = amp_config
        self.precision = precision
        self.native_scaler = None
        if precision == Precision.NATIVE:
            self.native_scaler = torch.amp.GradScaler("cuda")

    def prepare(self):
        amp_options = dict(self.amp_config) if self.precision == Precision.APEX else {"enabled": False}
        amp_loss_scale = amp_options.get("loss_scale", "dynamic")
        amp_scale, amp_growth = (
            (min(65536.0, amp_options.get("max_loss_scale", 2.0**24)), 2000)
            if amp_loss_scale == "dynamic"
            else (float(amp_loss_scale), 10**9)
        )
        use_amp = bool(amp_options.get("enabled", True)) and amp_options.get("opt_level", "O1") != "O0"
        self.scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
        self.scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)

    def forward_context(self):
        return torch.autocast(
            "cuda",
        ) if self.precision == Precision.NATIVE else torch.enable_grad()

    def train_step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            with self.forward_context():
                loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.run_optimizer(loss)
        return loss.item()

    def run_optimizer(self, loss):
        self.optimizer.zero_grad()
        if self.precision == Precision.APEX:
            self.scaler.scale(loss).backward()
        elif self.precision == Precision.NATIVE:
            self.native_scaler.scale(loss).backward()
        else:
            loss.backward()
        if self.precision == Precision.NATIVE:
            self.native_scaler.step(self.optimizer)
            self.native_scaler.update()
        else:
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def state_dict(self):
        state = {"model": self.model.state_dict()}
        if self.precision == Precision.APEX:
            state["amp"] = self.scaler.state_dict()
        elif self.native_scaler is not None:
            state["amp"] = self.native_scaler.state_dict()
        return state

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        if "amp" in state:
            if self.precision == Precision.APEX:
                load_scaler_state(self.scaler, state["amp"])
            else:
                self.native_scaler.load_state_dict(state["amp"])
''',
        codes=(
            'APX101', 'APX201', 'APX202', 'APX204', 'APX209', 'APX256', 'APX261', 'APX301', 'APX311',
            'APX401', 'APX402', 'APX901', 'APX902',
        ),
    ),
    Example(
        # an if that only leaves the loop (or the function) between the loss and its
        # scale_loss stays where it is, outside the autocast region: the forward pass before it
        # is still found
        "exit-guard-between-loss-and-scale-loss",
        before=BETWEEN_LOSS_AND_SCALE_LOSS.format(**EXIT_GUARD),
        after=BETWEEN_LOSS_AND_SCALE_LOSS_MIGRATED.format(**EXIT_GUARD),
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # metrics under torch.no_grad() and a logging loop between the loss and its scale_loss
        # leave the loss alone: they stay outside the autocast region, the forward pass before
        # them is still found
        "metrics-between-loss-and-scale-loss",
        before=BETWEEN_LOSS_AND_SCALE_LOSS.format(**METRICS),
        after=BETWEEN_LOSS_AND_SCALE_LOSS_MIGRATED.format(**METRICS),
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the loss computed in an if/else, the native branch already under autocast: the apex
        # branch's forward pass gets an autocast of its own, the native one's switch is
        # widened (a no-op where the apex scaler is off), the GradScaler takes a free name
        "apex-branch-beside-native-autocast",
        before="""\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda", enabled=args.native_amp)
if args.apex_amp:
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    optimizer.zero_grad()
    if args.apex_amp:
        loss = torch.nn.functional.cross_entropy(model(x), y)
    else:
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.native_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
    if args.apex_amp:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    else:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda", enabled=args.native_amp)
use_amp = bool(args.apex_amp)
grad_scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
for x, y in loader:
    optimizer.zero_grad()
    if args.apex_amp:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
    else:
        with torch.autocast("cuda", dtype=torch.float16, enabled=args.native_amp or use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
    if args.apex_amp:
        grad_scaler.scale(loss).backward()
        grad_scaler.step(optimizer)
        grad_scaler.update()
    else:
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the launcher imports apex.amp inside main() and initializes there; the loss is scaled
        # in step(), which reads a global amp that does not exist: no GradScaler can reach that
        # line, and the reason at the initialize says so (not "scaled elsewhere")
        "initialize-beside-an-unbound-scale-loss-names-it",
        before="""\
import torch


def step(model, optimizer, x, y, fp16):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    if fp16:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()


def main(args, model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        step(model, optimizer, x, y, args.fp16)
""",
        after="""\
import torch


def step(model, optimizer, x, y, fp16):
    loss = torch.nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    if fp16:
        # TODO(apexcompat): amp.scale_loss: the name amp is bound only inside main() (its
        #   apex.amp import), so this line raises NameError when it runs, in the original too;
        #   import apex.amp where it is used (or keep it on self) before migrating
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()


def main(args, model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        from apexcompat import amp
        # TODO(apexcompat): the amp.scale_loss of this file (in step()) reads a name amp that is
        #   not bound there, so it raises NameError, in the original too (APX234): fix that
        #   first; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        step(model, optimizer, x, y, args.fp16)
""",
        codes=("APX102", "APX220", "APX234"),
    ),
    Example(
        # apex.amp imported inside __init__ only: step() reads a name that is not bound there,
        # a NameError in the original as in the output; the finding says so where it fails
        "amp-unbound-where-it-is-used",
        before=UNBOUND_AMP.format(import_block="        if fp16:\n            from apex import amp\n", todo=""),
        after=UNBOUND_AMP.format(
            import_block="",
            todo="            # TODO(apexcompat): amp.scale_loss: the name amp is bound only inside __init__() (its\n"
            "            #   apex.amp import), so this line raises NameError when it runs, in the original too;\n"
            "            #   import apex.amp where it is used (or keep it on self) before migrating\n",
        ),
        codes=("APX101", "APX234"),
    ),
    Example(
        # ZITS: a trainer's train() and its subclass's own train() each initialize, and each
        # one's losses are scaled, clipped and stepped only there, after its initialize: each
        # makes a GradScaler of its own, a local of its method
        "initialize-in-a-method-and-in-a-subclass-override",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, config):
        self.model, self.config = model, config

    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if config.AMP:
            model, optimizer = amp.initialize(model, optimizer, num_losses=1, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            if config.AMP:
                with amp.scale_loss(loss, optimizer, loss_id=0) as scaled:
                    scaled.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


class FinetuneTrainer(Trainer):
    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        if config.AMP:
            model, optimizer = amp.initialize(model, optimizer, num_losses=1, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.l1_loss(model(x), y)
            optimizer.zero_grad()
            if config.AMP:
                with amp.scale_loss(loss, optimizer, loss_id=0) as scaled:
                    scaled.backward()
            else:
                loss.backward()
            optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, config):
        self.model, self.config = model, config

    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        use_amp = bool(config.AMP)
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            if config.AMP:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()


class FinetuneTrainer(Trainer):
    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        use_amp = bool(config.AMP)
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x, y in batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
                loss = torch.nn.functional.l1_loss(model(x), y)
            optimizer.zero_grad()
            if config.AMP:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            scaler.step(optimizer)
            scaler.update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX302", "APX311", "APX321"),
    ),
    Example(
        # ... but where the subclass's losses are scaled in another of its methods, no
        # GradScaler of one train() reaches it: the shim, saying which method
        "initialize-in-a-subclass-override-scaling-in-another-method-keeps-the-shim",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, config):
        self.model, self.config = model, config

    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if config.AMP:
            model, optimizer = amp.initialize(model, optimizer, num_losses=1, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            if config.AMP:
                with amp.scale_loss(loss, optimizer, loss_id=0) as scaled:
                    scaled.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


class FinetuneTrainer(Trainer):
    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        if config.AMP:
            model, optimizer = amp.initialize(model, optimizer, num_losses=1, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.l1_loss(model(x), y)
            optimizer.zero_grad()
            self.backward(loss, optimizer)
            optimizer.step()

    def backward(self, loss, optimizer):
        if self.config.AMP:
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
        else:
            loss.backward()
""",
        after="""\
import torch
from apexcompat import amp


class Trainer:
    def __init__(self, model, config):
        self.model, self.config = model, config

    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        if config.AMP:
            model, optimizer = amp.initialize(model, optimizer, num_losses=1, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            if config.AMP:
                with amp.scale_loss(loss, optimizer, loss_id=0) as scaled:
                    scaled.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()


class FinetuneTrainer(Trainer):
    def train(self, batches):
        model, config = self.model, self.config
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        if config.AMP:
            # TODO(apexcompat): amp.initialize is called for training in Trainer.train() and
            #   FinetuneTrainer.train(), each could create its own GradScaler, but backward() uses
            #   the scaler outside those methods; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            model, optimizer = amp.initialize(model, optimizer, num_losses=1, opt_level="O1")
        for x, y in batches:
            loss = torch.nn.functional.l1_loss(model(x), y)
            optimizer.zero_grad()
            self.backward(loss, optimizer)
            optimizer.step()

    def backward(self, loss, optimizer):
        if self.config.AMP:
            # TODO(apexcompat): optimizer.step() is not in the same function as amp.scale_loss, and
            #   optimizer is a parameter of FinetuneTrainer.backward(), a method: its calls on self
            #   are followed to their steps only where the run sees the whole repository (no
            #   subclass redefining it, no other file calling it), not for a file given alone; this
            #   file keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
        else:
            loss.backward()
""",
        codes=('APX102', 'APX220'),
    ),
    Example(
        # two methods of one class each initialize, and each one's losses are scaled only in
        # it or in a helper only it calls (after its initialize): each re-creates self.scaler,
        # as apex started a fresh loss scaler at every initialize
        "initialize-in-two-methods-of-one-class",
        before=INITIALIZE_PER_METHOD.format(**PER_METHOD_APEX),
        after=INITIALIZE_PER_METHOD.format(
            import_line="",
            init_scaler="        self.scaler = torch.amp.GradScaler(enabled=False)\n",
            range_init=PER_METHOD_SCALER,
            probe_loss="        with torch.autocast(\"cuda\", dtype=torch.float16, enabled=self.scaler.is_enabled()):\n"
            "            loss = torch.nn.functional.mse_loss(self.model(x), y)\n",
            probe_backward="        self.scaler.scale(loss).backward()\n",
            probe_step="        self.scaler.step(optimizer)\n        self.scaler.update()\n",
            fit_init=PER_METHOD_SCALER,
            fit_loss="            with torch.autocast(\"cuda\", dtype=torch.float16, "
            "enabled=self.scaler.is_enabled()):\n"
            "                loss = torch.nn.functional.mse_loss(self.model(x), y)\n",
            fit_backward="            self.scaler.scale(loss).backward()\n",
            fit_step="            self.scaler.step(optimizer)\n            self.scaler.update()\n",
            extra="",
        ),
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # the GradScaler lives on self and train() creates it (BERT-for-RRC-ABSA's trainer): a fresh
        # instance that evaluates first finds the disabled one __init__ creates (after its docstring),
        # so autocast is off there and the evaluation runs in fp32, as apex's did before initialize
        "disabled-scaler-in-init-for-methods-run-before-the-initializing-one",
        before='''\
import torch
from apex import amp


class Trainer:
    """Trains a model, and evaluates it (also a fresh one, before any training)."""

    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def _forward(self, x, y, backprop=True):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        if backprop:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        return loss

    def train(self, batches, fp16):
        if fp16:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
        for x, y in batches:
            self.optimizer.zero_grad()
            self._forward(x, y)
            self.optimizer.step()

    def evaluate(self, batches):
        with torch.no_grad():
            return [self._forward(x, y, backprop=False).item() for x, y in batches]
''',
        after='''\
import torch


class Trainer:
    """Trains a model, and evaluates it (also a fresh one, before any training)."""

    def __init__(self, model, optimizer):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer

    def _forward(self, x, y, backprop=True):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        if backprop:
            self.scaler.scale(loss).backward()
        return loss

    def train(self, batches, fp16):
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x, y in batches:
            self.optimizer.zero_grad()
            self._forward(x, y)
            self.scaler.step(self.optimizer)
            self.scaler.update()

    def evaluate(self, batches):
        with torch.no_grad():
            return [self._forward(x, y, backprop=False).item() for x, y in batches]
''',
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # ... the instance runs the __init__ of a base class of the same file: the disabled one goes
        # there; the always-on autocast follows the scaler, off until fit() has run
        "disabled-scaler-in-the-init-of-a-base-of-the-same-file",
        before='''\
import torch
from apex import amp


class Base:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer


class Trainer(Base):
    def fit(self, batches):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
        for x, y in batches:
            self.step(x, y)

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
''',
        after='''\
import torch


class Base:
    def __init__(self, model, optimizer):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer


class Trainer(Base):
    def fit(self, batches):
        self.scaler = torch.amp.GradScaler("cuda")
        for x, y in batches:
            self.step(x, y)

    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
''',
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # ... after the base's __init__ call (an nn.Module's own attributes come first)
        "disabled-scaler-in-init-after-the-base-init-call",
        before='''\
import torch
from apex import amp


class Trainer(torch.nn.Module):
    def __init__(self, model, optimizer):
        """model and optimizer: trained by fit()."""
        super(Trainer, self).__init__()
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")
        return [self.step(x, y) for x, y in batches]

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
''',
        after='''\
import torch


class Trainer(torch.nn.Module):
    def __init__(self, model, optimizer):
        """model and optimizer: trained by fit()."""
        super(Trainer, self).__init__()
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model = model
        self.optimizer = optimizer

    def fit(self, batches):
        self.scaler = torch.amp.GradScaler("cuda")
        return [self.step(x, y) for x, y in batches]

    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
''',
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # ... but __init__ calls the method that creates it: every instance has the real one, and a
        # disabled one made in __init__ could replace it, so none is
        "no-disabled-scaler-when-init-calls-the-initializing-method",
        before='''\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.setup()

    def setup(self):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
''',
        after='''\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.setup()

    def setup(self):
        self.scaler = torch.amp.GradScaler("cuda")

    def step(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        return loss.item()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # ... but when the helper is also called from a method that never initialized, the
        # scaler it would read is not proven to exist there: the reason names the helper
        "fallback-initialize-in-two-methods-helper-called-elsewhere",
        before=INITIALIZE_PER_METHOD.format(
            **dict(PER_METHOD_APEX, extra=WARM_UP)
        ),
        after=INITIALIZE_PER_METHOD.format(
            **dict(
                PER_METHOD_APEX,
                import_line="from apexcompat import amp\n",
                fit_init="        if self.fp16:\n"
                "            # TODO(apexcompat): amp.initialize is called for training in lr_range_test() and fit()\n"
                "            #   of Learner, each could create its own GradScaler, but _probe() is also called\n"
                "            #   elsewhere than after the amp.initialize of one of them; this file keeps apex.amp\n"
                "            #   semantics through apexcompat.amp, migrate it by hand\n"
                "            self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=\"O1\")\n",
                extra=WARM_UP,
            )
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the restore method initializes again what __init__ initialized, under a test that
        # includes __init__'s: apex raised there ('A given optimizer should only be passed
        # through amp.initialize once'), so no apex run went through it; it goes, and the
        # GradScaler of __init__ serves every method
        "restore-initializes-again-what-init-initialized",
        before=RESTORE_REINITIALIZES,
        after='''\
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


class Fitter:
    """Fits a network; a checkpoint resumes it."""

    def __init__(self, net, opt, half=None):
        self.net = net
        self.opt = opt
        self.half = half
        use_amp = self.half is not None and self.half != "O0"
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def step(self, x, y):
        self.opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        if self.half is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.item()

    def checkpoint(self):
        state = {"net": self.net.state_dict(), "opt": self.opt.state_dict()}
        if self.half is not None:
            state["amp"] = self.scaler.state_dict()
        return state

    def resume(self, state):
        if self.half is not None and "amp" in state:
            load_scaler_state(self.scaler, state["amp"])
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
''',
        codes=("APX101", "APX201", "APX202", "APX209", "APX246", "APX301", "APX311", "APX401", "APX402"),
    ),
    Example(
        # ... but when the restore's test does not include __init__'s, it may initialize what
        # __init__ did not: apex then made a loss scaler there, which is not proven here
        "fallback-restore-initializes-under-its-own-test",
        before=RESTORE_REINITIALIZES.replace('if self.half is not None and "amp" in state:', 'if "amp" in state:'),
        after=RESTORE_REINITIALIZES.replace("from apex import amp", "from apexcompat import amp")
        .replace('if self.half is not None and "amp" in state:', 'if "amp" in state:')
        .replace(
            "            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level=self.half)\n"
            "            amp.load_state_dict",
            '            # TODO(apexcompat): amp.initialize is called for training in __init__() and resume() of\n            #   Fitter, each could create its own GradScaler, but step() is also called elsewhere\n            #   than after the amp.initialize of one of them; this file keeps apex.amp semantics\n            #   through apexcompat.amp, migrate it by hand\n'
            "            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level=self.half)\n"
            "            amp.load_state_dict",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # a run-once flag in the test around the initialize, set by the branch it guards: a
        # GradScaler created after that if, switched by the same test, would always be off
        "fallback-run-once-guard",
        before=RUN_ONCE_GUARD,
        after=RUN_ONCE_GUARD.replace("    from apex import amp\n", "    from apexcompat import amp\n").replace(
            RUN_ONCE_INIT, RUN_ONCE_TODO + RUN_ONCE_INIT
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # AutoTinyBERT's shape (sweep17): the setup of the first epoch that runs, optimizer and
        # initialize, sits in the epoch loop under `if epoch == args.start:`.  The optimizer is
        # created in that branch: a GradScaler created there too (switched by args.fp16, not by
        # the loop's test) lives as long as the optimizer it scales, on every later pass
        "initialize-in-the-setup-pass-of-a-loop",
        before=SETUP_PASS,
        after="""\
import torch


def main(args, model, loaders):
    for epoch in range(args.epochs):
        if epoch < args.start:
            continue
        if epoch == args.start:
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            use_amp = bool(args.fp16)
            scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x in loaders[epoch]:
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = model(x).sum()
            if args.fp16:
                scaler.scale(loss).backward()
            else:
                loss.backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the same loop with the optimizer made before it: on the passes after the setup the
        # optimizer exists while a GradScaler made in the branch would not (or the reverse);
        # one made after the if with its test as the switch would be disabled from the second
        # epoch on (float32 training without a word, while apex stayed set up)
        "fallback-initialize-under-a-test-of-the-loop-variable",
        before=SETUP_PASS_OUTSIDE,
        after=SETUP_PASS_OUTSIDE.replace("from apex import amp", "from apexcompat import amp").replace(
            "                model, optimizer = amp.initialize",
            """\
                # TODO(apexcompat): the test `epoch == args.start` around amp.initialize reads epoch,
                #   which the loop around it (`for epoch in ...`) assigns anew on each pass: a
                #   GradScaler created after that if with this test as its switch would be disabled on
                #   the passes where it fails, while apex stayed initialized; this file keeps apex.amp
                #   semantics through apexcompat.amp, migrate it by hand
                model, optimizer = amp.initialize""",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the setup pass again, with amp's state saved after each epoch: that read of the
        # scaler reads no optimizer, so nothing proves the setup ran before it
        "fallback-setup-pass-with-a-scaler-read-of-no-optimizer",
        before=SETUP_PASS + '        torch.save(amp.state_dict(), "amp.pt")\n',
        after=SETUP_PASS.replace("from apex import amp", "from apexcompat import amp").replace(
            "                model, optimizer = amp.initialize",
            """\
                # TODO(apexcompat): the test `epoch == args.start` around amp.initialize reads epoch,
                #   which the loop around it (`for epoch in ...`) assigns anew on each pass: a
                #   GradScaler created after that if with this test as its switch would be disabled on
                #   the passes where it fails, while apex stayed initialized; one created in that if
                #   beside the optimizer it scales is also read where its optimizer is not (its state,
                #   its scale); this file keeps apex.amp semantics through apexcompat.amp, migrate it by
                #   hand
                model, optimizer = amp.initialize""",
        )
        + '        torch.save(amp.state_dict(), "amp.pt")\n',
        codes=("APX102", "APX220"),
    ),
    Example(
        # ``global amp`` after an import inside a method binds the module's name, which the
        # other methods read: their sites are apex.amp's, and the declaration goes with the import
        "amp-imported-into-a-global",
        before="""\
import torch


class Learner:
    def __init__(self, net, half):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.half = half
        if half:
            try:
                from apex import amp
                global amp
            except ImportError:
                raise ImportError("fp16 needs apex")
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level="O1")

    def learn(self, x, y):
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        if self.half:
            with amp.scale_loss(loss, self.opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.opt.step()
        return loss.item()
""",
        after="""\
import torch


class Learner:
    def __init__(self, net, half):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.half = half
        use_amp = bool(half)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def learn(self, x, y):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        if self.half:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.item()
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a run-once guard whose flag __init__ sets first: the GradScaler is made in the guard's
        # branch (where the initialize was) and a disabled one just before __init__ sets the
        # flag, so every method finds one; autocast reads the scaler, not the flipped flag
        "run-once-guard-scaler-in-its-branch",
        before=RUN_ONCE_GUARD.replace(
            "        self.half = half\n", "        self.half = half\n        self.amp_ready = False\n"
        ).replace('not getattr(self, "amp_ready", False)', "not self.amp_ready"),
        after="""\
import torch


class Fitter:
    def __init__(self, net, half):
        self.net = net
        self.opt = torch.optim.SGD(net.parameters(), lr=0.1)
        self.half = half
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.amp_ready = False

    def prepare(self):
        if self.half and not self.amp_ready:
            self.scaler = torch.amp.GradScaler("cuda")
            self.amp_ready = True

    def fit_batch(self, x, y):
        self.prepare()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.opt.zero_grad()
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
        return loss.item()
""",
        codes=("APX101", "APX103", "APX201", "APX209", "APX238", "APX301", "APX311"),
    ),
    Example(
        # one initialize per model in a loop that only stores the results, under the fp16
        # switch: apex kept the last pass's loss scaler, so one GradScaler made after the if
        # serves every objective and exists (disabled) on the fp32 path the loop never ran on
        "initialize-in-a-setup-loop",
        before=SETUP_LOOP.format(head="from apex import amp\n", setup=SETUP_LOOP_APEX, train=SETUP_LOOP_TRAIN_APEX),
        after=SETUP_LOOP.format(head="", setup=SETUP_LOOP_NATIVE, train=SETUP_LOOP_TRAIN_NATIVE),
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a loop whose passes initialize with different options cannot share one GradScaler
        "fallback-initialize-in-a-loop-with-changing-options",
        before=SETUP_LOOP.format(head="from apex import amp\n", setup=SETUP_LOOP_VARYING, train=SETUP_LOOP_TRAIN_APEX),
        after=SETUP_LOOP.format(
            head="from apexcompat import amp\n", setup=SETUP_LOOP_VARYING_TODO, train=SETUP_LOOP_TRAIN_APEX
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # metrics under torch.no_grad() and an if that filters the outputs (and may skip the
        # batch) between the forward pass and the loss: the autocast region covers them too,
        # as apex's O1 casts did; leaving it with continue closes it
        "filtering-between-forward-and-loss",
        before="""\
import torch
from apex import amp

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y, keep in loader:
    out = model(x)
    with torch.no_grad():
        hits = (out.argmax(1) == y).float().mean().item()
    if keep is not None:
        out, y = out[keep], y[keep]
        if not len(y):
            continue
    loss = torch.nn.functional.cross_entropy(out, y)
    meter.update(loss.item(), hits)
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
""",
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
scaler = torch.amp.GradScaler("cuda")
for x, y, keep in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
        with torch.no_grad():
            hits = (out.argmax(1) == y).float().mean().item()
        if keep is not None:
            out, y = out[keep], y[keep]
            if not len(y):
                continue
        loss = torch.nn.functional.cross_entropy(out, y)
    meter.update(loss.item(), hits)
    optimizer.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # an initialize per fold, in a loop that trains each fold: its GradScaler is made afresh
        # in each pass, where the initialize was, as apex replaced its loss scaler there
        "initialize-per-pass-of-a-training-loop",
        before="""\
import torch
from apex import amp


def cross_validate(folds, half):
    for fold in folds:
        net, opt = fold.build()
        if half:
            net, opt = amp.initialize(net, opt, opt_level="O1")
        for x, y in fold.batches:
            loss = torch.nn.functional.mse_loss(net(x), y)
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
            opt.step()
""",
        after="""\
import torch


def cross_validate(folds, half):
    for fold in folds:
        net, opt = fold.build()
        use_amp = bool(half)
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for x, y in fold.batches:
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = torch.nn.functional.mse_loss(net(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a loop that initializes and does more (wraps each model) under the fp16 switch, the
        # GradScaler used after it: a scaler made in the loop would be missing on the fp32 path
        "fallback-initialize-in-a-working-loop-used-after-it",
        before=WORKING_LOOP.format(head="from apex import amp\n", todo=""),
        after=WORKING_LOOP.format(head="from apexcompat import amp\n", todo=WORKING_LOOP_TODO),
        codes=("APX102", "APX220"),
    ),
    Example(
        # apex.amp or None handed to a same-file training function: the GradScaler fills that
        # slot (disabled where apex was never initialized), the parameter is renamed scaler and its
        # tests read its switch
        "amp-or-none-passed-to-a-training-function",
        before=AMP_OR_NONE_GIVEN,
        after="""\
import torch


def run_epoch(model, optimizer, batches, scaler, clip):
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if scaler.is_enabled():
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        params = model.parameters()
        torch.nn.utils.clip_grad_norm_(params, clip)
        scaler.step(optimizer)
        scaler.update()
    return scaler.state_dict() if scaler.is_enabled() else None


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    use_amp = bool(args.opt_level and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(args.epochs):
        amp_state = run_epoch(model, optimizer, loader, scaler, args.clip)
    torch.save({"model": model.state_dict(), "amp": amp_state}, "last.pt")
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX230", "APX301", "APX311", "APX322", "APX325", "APX401"),
    ),
    Example(
        # apex.amp or None handed to a helper that initializes it through that parameter (and
        # loads its state), the losses scaled by the caller, which main() calls: the parameter is
        # read as an on/off flag (``_amp_flag_param``), but the helper uses the GradScaler itself
        # (the state it loads), so it is not handed back, and outside a repository no
        # module-level GradScaler stands in: the file keeps the shim (the repository examples of
        # ``_flag_param_examples`` migrate it); before, the parameter route, the
        # initialize and the cross-file plan (APX213) each claimed the amp instance and wrote an
        # unused GradScaler in prepare(), a scaler parameter on main() and train()
        "fallback-amp-or-none-initialized-by-the-helper-it-is-given-to",
        before=INITIALIZED_THROUGH_PARAMETER,
        after=_initialized_through_parameter_shim(INITIALIZED_THROUGH_PARAMETER, HELPER_USES_ITS_SCALER_TODOS),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the same, main() run under the ``__main__`` guard: the same reason
        "fallback-amp-or-none-initialized-by-the-helper-in-a-script",
        before=INITIALIZED_THROUGH_PARAMETER_SCRIPT,
        after=_initialized_through_parameter_shim(INITIALIZED_THROUGH_PARAMETER_SCRIPT, HELPER_USES_ITS_SCALER_TODOS),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the same with the parameter and the caller's name ``amp_module``
        "fallback-amp-module-or-none-initialized-by-the-helper-it-is-given-to",
        before=INITIALIZED_THROUGH_PARAMETER_RENAMED,
        after=_initialized_through_parameter_shim(
            INITIALIZED_THROUGH_PARAMETER_RENAMED,
            ((HELPER_USES_ITS_SCALER_TODOS[0][0].replace("amp.", "amp_module."), HELPER_USES_ITS_SCALER_TODOS[0][1]),),
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the caller rebinds ``args`` between the ``if args.fp16:`` that bound apex.amp and the
        # call: ``args.fp16`` at the call may not be what chose the import, so the parameter is
        # not read as a flag and the refusal names the initialize made through it
        "fallback-amp-or-none-initialized-by-the-helper-after-the-test-is-rebound",
        before=INITIALIZED_THROUGH_PARAMETER.replace(
            "    model, optimizer = prepare(", "    args = refresh(args)\n    model, optimizer = prepare("
        ),
        after=_initialized_through_parameter_shim(
            INITIALIZED_THROUGH_PARAMETER.replace(
                "    model, optimizer = prepare(", "    args = refresh(args)\n    model, optimizer = prepare("
            )
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the helper reads a member of its parameter outside ``if amp:`` (apex.amp's state
        # loaded whether or not it was given): the parameter is not only a flag there, so the
        # refusal names the initialize made through it
        "fallback-amp-or-none-initialized-by-the-helper-that-reads-it-untested",
        before=INITIALIZED_THROUGH_PARAMETER.replace(
            "        if state:\n            amp.load_state_dict", "    if state:\n        amp.load_state_dict"
        ),
        after=_initialized_through_parameter_shim(
            INITIALIZED_THROUGH_PARAMETER.replace(
                "        if state:\n            amp.load_state_dict", "    if state:\n        amp.load_state_dict"
            )
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the module-level apex.amp handed to a helper that initializes it through that
        # parameter: before, the module-scaler route set a module-level GradScaler in prepare()
        # while the parameter route handed prepare() that variable, still None at the call, in
        # the parameter's slot, whose load_state_dict became load_scaler_state(amp, ...) on None
        "fallback-module-amp-initialized-by-the-helper-it-is-given-to",
        before=MODULE_AMP_INITIALIZED_THROUGH_PARAMETER,
        after=_initialized_through_parameter_shim(
            MODULE_AMP_INITIALIZED_THROUGH_PARAMETER,
            (
                INITIALIZED_THROUGH_PARAMETER_TODOS[0],
                (
                    "        with amp.scale_loss",
                    "        # TODO(apexcompat): the scaler cannot reach this amp.scale_loss: apex.amp (or None) is\n"
                    "        #   given to prepare() as its parameter amp, on which prepare() calls amp.initialize:\n"
                    "        #   the GradScaler would be created in prepare() from a module handed in as a value,\n"
                    "        #   which no route follows; this file keeps apex.amp semantics through apexcompat.amp,\n"
                    "        #   migrate it by hand\n",
                ),
            ),
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the function hands its apex.amp parameter on: the parameter cannot carry the scaler
        "fallback-amp-parameter-passed-on",
        before=AMP_OR_NONE_PASSED_ON,
        after=AMP_OR_NONE_PASSED_ON.replace("from apex import amp", "from apexcompat import amp").replace(
            "    report(amp)\n",
            "    # TODO(apexcompat): apex.amp (or None) is given to run_epoch() as its parameter amp,\n"
            "    #   which passes it on as a value here, so that parameter cannot carry the GradScaler;\n"
            "    #   this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand\n"
            "    report(amp)\n",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the fp32 branch hands None, which the clipping helper reads as "not apex, choose the
        # parameters yourself": not the optimizer's parameters, so the branches are not merged
        # (the apex path keeps clipping what apex.amp's master_params gave)
        "master-params-beside-a-none-sentinel-stay-in-their-branch",
        before='''\
import torch
from apex import amp


def clip_gradients(model, max_norm, master=None):
    if master is None:  # in fp32 the frozen embedding is left out
        master = [p for name, p in model.named_parameters() if not name.startswith("embed.")]
    return torch.nn.utils.clip_grad_norm_(master, max_norm)


def main(args, model, optimizer, loader):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            master = amp.master_params(optimizer)
        else:
            master = None
        clip_gradients(model, args.clip, master)
        optimizer.step()
''',
        after='''\
import torch


def clip_gradients(model, max_norm, master=None):
    if master is None:  # in fp32 the frozen embedding is left out
        master = [p for name, p in model.named_parameters() if not name.startswith("embed.")]
    return torch.nn.utils.clip_grad_norm_(master, max_norm)


def main(args, model, optimizer, loader):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.unscale_(optimizer)
        if args.fp16:
            master = (p for group in optimizer.param_groups for p in group["params"])
        else:
            master = None
        clip_gradients(model, args.clip, master)
        scaler.step(optimizer)
        scaler.update()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX321", "APX325"),
    ),
    Example(
        # the model runs once per crop in a plain loop whose results the loss is computed from: the
        # autocast region takes the loop in with the pooling and the loss
        "forward-passes-in-a-loop-before-the-loss",
        before="""\
import torch
from apex import amp

net = build_encoder().cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
net, opt = amp.initialize(net, opt, opt_level="O1")
for crops, label in loader:
    scores = []
    for crop in crops:
        feats = embed(net, crop)
        scores.append(feats["logits"])
    scores = torch.stack(scores).mean(0)
    loss = net.head.loss(scores, label)
    opt.zero_grad()
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
""",
        after="""\
import torch

net = build_encoder().cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
for crops, label in loader:
    scores = []
    with torch.autocast("cuda", dtype=torch.float16):
        for crop in crops:
            feats = embed(net, crop)
            scores.append(feats["logits"])
        scores = torch.stack(scores).mean(0)
        loss = net.head.loss(scores, label)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the forward pass runs in a try whose handler only frees memory and skips the batch: the
        # region holds the whole try with the loss after it (a handler that leaves closes it)
        "forward-pass-in-a-try-before-the-loss-rides-in-the-region",
        before=FORWARD_IN_A_TRY,
        after="""\
import torch

net = build_encoder().cuda()
opt = torch.optim.AdamW(net.parameters(), lr=1e-4)
scaler = torch.amp.GradScaler("cuda")
for x, label in loader:
    with torch.autocast("cuda", dtype=torch.float16):
        try:
            out = net(x)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            continue
        loss = net.head.loss(out, label)
    opt.zero_grad()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the same try with a loop in its handler: autocast does not take that block in, and
        # wrapping only the loss after it would leave the model in float32, so the site is left
        # to a person (in a repository run the file falls back to the shim, APX220)
        "forward-pass-in-a-try-before-the-loss-left-by-hand",
        before=FORWARD_IN_A_TRY.replace(_OOM_SKIP, _OOM_SKIP_CLEARING),
        after=FORWARD_IN_A_TRY.replace(_OOM_SKIP, _OOM_SKIP_CLEARING)
        .replace("from apex import amp\n", "")
        .replace('net, opt = amp.initialize(net, opt, opt_level="O1")\n', 'scaler = torch.amp.GradScaler("cuda")\n')
        .replace(
            """\
    opt.zero_grad()
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
""",
            """\
    opt.zero_grad()
    # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss: wrap
    #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
""",
        ),
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # between accumulation boundaries the forward pass runs under DDP's no_sync() in one branch of
        # an if: a plain with inside the if, so the autocast region covers the whole if
        "forward-pass-under-no-sync-in-a-branch",
        before="""\
import torch
from apex import amp


def fit(args, ddp_model, opt, batches):
    if args.half:
        ddp_model, opt = amp.initialize(ddp_model, opt, opt_level=args.level)
    for i, (x, y) in enumerate(batches, 1):
        boundary = i % args.accum == 0
        if boundary:
            pred = ddp_model(x)
        else:
            with ddp_model.no_sync():
                pred = ddp_model(x)
        loss = torch.nn.functional.l1_loss(pred, y) / args.accum
        if args.half:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        if boundary:
            opt.step()
            opt.zero_grad()
""",
        after="""\
import torch


def fit(args, ddp_model, opt, batches):
    use_amp = bool(args.half and args.level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for i, (x, y) in enumerate(batches, 1):
        boundary = i % args.accum == 0
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            if boundary:
                pred = ddp_model(x)
            else:
                with ddp_model.no_sync():
                    pred = ddp_model(x)
            loss = torch.nn.functional.l1_loss(pred, y) / args.accum
        if args.half:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if boundary:
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX314"),
    ),
    Example(
        # a try/except ImportError around `from apex import amp` right before the scale_loss neither
        # computes nor touches the loss: the search for the forward pass goes on before it, and the
        # guard goes away with the import
        "apex-import-guard-before-scale-loss",
        before="""\
import torch


def run_epoch(args, net, opt, batches):
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(net(x), y)
        if args.half:
            try:
                from apex import amp
            except ImportError:
                raise ImportError("apex is needed for --half")
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(opt), args.clip)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.clip)
        opt.step()
        opt.zero_grad()


def main(args, net, opt, batches):
    if args.half:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("apex is needed for --half")
        net, opt = amp.initialize(net, opt, opt_level="O1")
    run_epoch(args, net, opt, batches)
""",
        after="""\
import torch


def run_epoch(args, net, opt, batches, scaler):
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.cross_entropy(net(x), y)
        if args.half:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_((p for group in opt.param_groups for p in group["params"]), args.clip)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), args.clip)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()


def main(args, net, opt, batches):
    use_amp = bool(args.half)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    run_epoch(args, net, opt, batches, scaler)
""",
        codes=("APX101", "APX103", "APX201", "APX207", "APX209", "APX301", "APX311", "APX321"),
    ),
    Example(
        # a helper handed the model returns the outputs the loss is then computed from: it runs the
        # forward pass, so the autocast region starts at it
        "helper-handed-the-model-before-the-loss",
        before="""\
import torch
from apex import amp


def shared_step(net, batch):
    keys = batch.pop("keys")
    return net(batch), keys


def train(cfg, net, opt, loader):
    net, opt = amp.initialize(net, opt, enabled=cfg.half, opt_level="O2")
    for batch in loader:
        out, keys = shared_step(net, batch)
        loss = out["loss"].mean() * cfg.weight
        log_loss(keys, loss.item())
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        opt.zero_grad()
""",
        after="""\
import torch


def shared_step(net, batch):
    keys = batch.pop("keys")
    return net(batch), keys


def train(cfg, net, opt, loader):
    use_amp = bool(cfg.half)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for batch in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            out, keys = shared_step(net, batch)
            loss = out["loss"].mean() * cfg.weight
        log_loss(keys, loss.item())
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the run-time loss_scale is read from a configuration the function also writes to, but
        # at another attribute: the value at the GradScaler is still the initialize's, so the
        # GradScaler reads it (the default 128.0 of such a recipe stays a static scale)
        "run-time-loss-scale-beside-another-attribute-assignment",
        before="""\
import torch
from apex import amp


def train_net(args, config, model, optimizer, loader):
    config.TRAIN.BEGIN_EPOCH = 0
    if config.TRAIN.FP16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O2",
                                          loss_scale=config.TRAIN.FP16_LOSS_SCALE)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        if config.TRAIN.FP16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train_net(args, config, model, optimizer, loader):
    config.TRAIN.BEGIN_EPOCH = 0
    use_amp = bool(config.TRAIN.FP16)
    amp_loss_scale = config.TRAIN.FP16_LOSS_SCALE if config.TRAIN.FP16 else "dynamic"
    amp_scale, amp_growth = (65536.0, 2000) if amp_loss_scale in (None, "dynamic") else (float(amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        if config.TRAIN.FP16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        # loss_scale and the opt level are both read from the configuration at run time (a CTC
        # recipe defaults the scale to a static 1): the GradScaler reads the scale as apex did,
        # None taking the level's default, instead of a dynamic GradScaler and a TODO
        "run-time-loss-scale-with-run-time-opt-level",
        before="""\
import torch
from apex import amp


def train(cfg, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.opt_level, loss_scale=cfg.loss_scale)
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(cfg, model, optimizer, loader):
    use_amp = cfg.opt_level != "O0"
    amp_loss_scale = cfg.loss_scale if cfg.opt_level != "O0" else "dynamic"
    amp_scale, amp_growth = (65536.0, 2000) if amp_loss_scale == "dynamic" or amp_loss_scale is None and cfg.opt_level in ('O1', 'O2') else (float(1.0 if amp_loss_scale is None else amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX204", "APX209", "APX301", "APX311"),
    ),
    Example(
        # one model of a list is called through a subscript before the one named like a model:
        # the forward pass starts at the subscripted call, so the autocast region covers both
        # (it once began at the decoder, leaving the encoder in float32)
        "subscripted-model-call-starts-the-forward-pass",
        before="""\
import torch
from apex import amp


def train(encoders, decoder, opt, loader):
    [encoders, decoder], opt = amp.initialize([encoders, decoder], opt, opt_level="O1")
    for x, y in loader:
        x = x.cuda()
        feats = encoders[0](x)
        out = decoder(feats)
        loss = torch.nn.functional.mse_loss(out, y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        opt.step()
        opt.zero_grad()
""",
        after="""\
import torch


def train(encoders, decoder, opt, loader):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in loader:
        x = x.cuda()
        with torch.autocast("cuda", dtype=torch.float16):
            feats = encoders[0](x)
            out = decoder(feats)
            loss = torch.nn.functional.mse_loss(out, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the setup helper that initializes is called inside a with block that only times it:
        # the block's body always runs and binds in the function, so the helper still returns the
        # GradScaler to its caller, which threads it into the training function
        "setup-helper-called-in-a-timing-block",
        before="""\
import torch
from apex import amp


def make_net_and_opt(cfg):
    net = build_net(cfg).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    if cfg.mixed:
        net, opt = amp.initialize(net, opt, opt_level="O1")
    return net, opt


def fit(cfg, net, opt, batches):
    for x, y in batches:
        loss = torch.nn.functional.smooth_l1_loss(net(x), y)
        opt.zero_grad()
        if cfg.mixed:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        opt.step()


def main(cfg, batches):
    with Stopwatch("setup"):
        net, opt = make_net_and_opt(cfg)
    with Stopwatch("training"):
        fit(cfg, net, opt, batches)
""",
        after="""\
import torch


def make_net_and_opt(cfg):
    net = build_net(cfg).cuda()
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    use_amp = bool(cfg.mixed)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    return net, opt, scaler


def fit(cfg, net, opt, batches, scaler):
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.smooth_l1_loss(net(x), y)
        opt.zero_grad()
        if cfg.mixed:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(opt)
        scaler.update()


def main(cfg, batches):
    with Stopwatch("setup"):
        net, opt, scaler = make_net_and_opt(cfg)
    with Stopwatch("training"):
        fit(cfg, net, opt, batches, scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX217", "APX301", "APX311"),
    ),
    Example(
        # the loss comes from a plain method of the same class whose own body runs the model
        # (DPR's reader: ``loss = self._calc_loss(batch)``): the forward pass is in that call,
        # so the autocast goes around it
        "forward-pass-in-a-method-of-the-same-class",
        before="""\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def compute_loss(self, batch):
        return self.model(batch).mean()

    def train_step(self, batch):
        loss = self.compute_loss(batch)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def compute_loss(self, batch):
        return self.model(batch).mean()

    def train_step(self, batch):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.compute_loss(batch)
        self.scaler.scale(loss).backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the loss handed to the backward helper comes from a method of the same class that
        # runs the model only through another such method (TorchBlocks' trainer:
        # ``outputs = self.train_forward(x)``, which returns ``self.train_common_forward(x)``):
        # the forward pass is in that call all the same, so the autocast goes around it at
        # the helper's caller
        "forward-pass-through-a-chain-of-methods-of-the-same-class",
        before="""\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.model, self.optimizer = model, optimizer
        self.fp16 = fp16

    def setup(self):
        if self.fp16:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def plain_forward(self, batch):
        self.model.train()
        return {"loss": self.model(batch).mean()}

    def train_forward(self, batch, twice):
        if twice:
            first = self.plain_forward(batch)
            return {"loss": first["loss"] + self.plain_forward(batch)["loss"]}
        return self.plain_forward(batch)

    def backward(self, loss):
        if self.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    def train_step(self, batch, twice):
        outputs = self.train_forward(batch, twice)
        self.backward(outputs["loss"])
        self.optimizer.step()
        self.optimizer.zero_grad()
        return outputs
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.model, self.optimizer = model, optimizer
        self.fp16 = fp16

    def setup(self):
        use_amp = bool(self.fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def plain_forward(self, batch):
        self.model.train()
        return {"loss": self.model(batch).mean()}

    def train_forward(self, batch, twice):
        if twice:
            first = self.plain_forward(batch)
            return {"loss": first["loss"] + self.plain_forward(batch)["loss"]}
        return self.plain_forward(batch)

    def backward(self, loss):
        if self.fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()

    def train_step(self, batch, twice):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            outputs = self.train_forward(batch, twice)
        self.backward(outputs["loss"])
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
        return outputs
""",
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # the project's own clipping helper is handed the parameters through a comprehension:
        # it reads their gradients, which GradScaler leaves scaled until the step (clipping
        # the scaled ones at the same threshold would cut every update down by the loss scale)
        "own-clip-helper-given-parameters-through-a-comprehension",
        before="""\
import torch
from apex import amp


def fit(net, opt, batches, max_norm):
    net, opt = amp.initialize(net, opt, opt_level="O1")
    for x, y in batches:
        opt.zero_grad()
        loss = torch.nn.functional.l1_loss(net(x), y)
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        trim_gradients([(name, w) for name, w in net.named_parameters() if w.requires_grad], limit=max_norm)
        opt.step()
""",
        after="""\
import torch


def fit(net, opt, batches, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.l1_loss(net(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        trim_gradients([(name, w) for name, w in net.named_parameters() if w.requires_grad], limit=max_norm)
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX325"),
    ),
    Example(
        # a loop that only logs the loss terms stands between the forward pass and the last
        # change to the loss: it rides in the autocast (apex's O1 cast it too); the warm-up
        # block before the forward pass only tunes the model, so the autocast starts after it
        "logging-loop-between-forward-and-loss",
        before="""\
from apex import amp


def fit(net, opt, batches, meters, weights, warm_steps):
    net, opt = amp.initialize(net, opt, opt_level="O1")
    for step, (x, y) in enumerate(batches):
        if step < warm_steps:
            for k in range(len(weights)):
                net.set_weight(k, weights[k] * step / warm_steps)
        parts = net(x, y)
        total = sum(parts.values())
        for name, part in parts.items():
            meters[name].update(part.item())
        total = total.mean()
        opt.zero_grad()
        with amp.scale_loss(total, opt) as scaled:
            scaled.backward()
        opt.step()
""",
        after="""\
import torch


def fit(net, opt, batches, meters, weights, warm_steps):
    scaler = torch.amp.GradScaler("cuda")
    for step, (x, y) in enumerate(batches):
        if step < warm_steps:
            for k in range(len(weights)):
                net.set_weight(k, weights[k] * step / warm_steps)
        with torch.autocast("cuda", dtype=torch.float16):
            parts = net(x, y)
            total = sum(parts.values())
            for name, part in parts.items():
                meters[name].update(part.item())
            total = total.mean()
        opt.zero_grad()
        scaler.scale(total).backward()
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a branch runs a frozen teacher under no_grad() and hands its output to the student's
        # forward pass: the branch rides in the autocast with it; so does a branch after the
        # forward pass that logs the loss terms in a loop
        "teacher-forward-in-a-branch-before-the-loss",
        before="""\
import torch
from apex import amp


def fit(student_model, teacher_model, opt, batches, args, log):
    if args.fp16:
        student_model, opt = amp.initialize(student_model, opt, opt_level=args.opt_level)
    for x, y in batches:
        feed = {"x": x, "y": y}
        if teacher_model is not None:
            with torch.no_grad():
                feed["soft"] = teacher_model(x)
        loss, terms = student_model(**feed)
        if args.verbose:
            for key in terms:
                log(key, terms[key].item())
        if args.fp16:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        opt.step()
        opt.zero_grad()
""",
        after="""\
import torch


def fit(student_model, teacher_model, opt, batches, args, log):
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in batches:
        feed = {"x": x, "y": y}
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            if teacher_model is not None:
                with torch.no_grad():
                    feed["soft"] = teacher_model(x)
            loss, terms = student_model(**feed)
        if args.verbose:
            for key in terms:
                log(key, terms[key].item())
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the loss is set on every path of an if/else from the outputs of the forward pass
        # before it; one branch adds a distillation term from a teacher run under no_grad()
        # (sweep21, LightningDOT's pretrain.py): the teacher's call is no training forward
        # pass, so the region spans the forward pass and the whole if, the teacher with it
        "teacher-under-no-grad-in-a-loss-branch-after-the-forward",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def pretrain(model, teacher_model, optimizer, loader, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    for name, batch in loader:
        task_loss, logits = model(batch, task=name)
        if name == "itm":
            loss = task_loss.mean()
        else:
            with torch.no_grad():
                soft = teacher_model(batch, task=name)
            loss = task_loss.mean() + args.kd_weight * F.mse_loss(logits, soft)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
import torch.nn.functional as F


def pretrain(model, teacher_model, optimizer, loader, args):
    scaler = torch.amp.GradScaler("cuda")
    for name, batch in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            task_loss, logits = model(batch, task=name)
            if name == "itm":
                loss = task_loss.mean()
            else:
                with torch.no_grad():
                    soft = teacher_model(batch, task=name)
                loss = task_loss.mean() + args.kd_weight * F.mse_loss(logits, soft)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a GAN trainer initializes its generator and its discriminator one after the other with
        # the same options: apex replaced its loss scaler at the second call, so one GradScaler,
        # created where the first one was, scales both losses (APX245)
        "initializes-one-after-another-in-a-gan-trainer",
        before="""\
import torch
from apex import amp


class GanTrainer:
    def __init__(self, gen, dis, use_fp16):
        self.gen, self.dis = gen.cuda(), dis.cuda()
        self.g_opt = torch.optim.Adam(self.gen.parameters(), lr=2e-4)
        self.d_opt = torch.optim.Adam(self.dis.parameters(), lr=2e-4)
        self.use_fp16 = use_fp16
        if use_fp16:
            self.gen, self.g_opt = amp.initialize(self.gen, self.g_opt, opt_level="O1")
            self.dis, self.d_opt = amp.initialize(self.dis, self.d_opt, opt_level="O1")

    def dis_step(self, real, noise):
        self.d_opt.zero_grad()
        fake = self.gen(noise).detach()
        loss = self.dis(fake).mean() - self.dis(real).mean()
        if self.use_fp16:
            with amp.scale_loss(loss, self.d_opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.d_opt.step()

    def gen_step(self, noise):
        self.g_opt.zero_grad()
        loss = -self.dis(self.gen(noise)).mean()
        if self.use_fp16:
            with amp.scale_loss(loss, self.g_opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        self.g_opt.step()
""",
        after="""\
import torch


class GanTrainer:
    def __init__(self, gen, dis, use_fp16):
        self.gen, self.dis = gen.cuda(), dis.cuda()
        self.g_opt = torch.optim.Adam(self.gen.parameters(), lr=2e-4)
        self.d_opt = torch.optim.Adam(self.dis.parameters(), lr=2e-4)
        self.use_fp16 = use_fp16
        use_amp = bool(use_fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)

    def dis_step(self, real, noise):
        self.d_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            fake = self.gen(noise).detach()
            loss = self.dis(fake).mean() - self.dis(real).mean()
        if self.use_fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.d_opt)
        self.scaler.update()

    def gen_step(self, noise):
        self.g_opt.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = -self.dis(self.gen(noise)).mean()
        if self.use_fp16:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.g_opt)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX245", "APX301", "APX311"),
    ),
    Example(
        # a second initialize, for a frozen target network that only runs under no_grad, sits in
        # a branch nested inside the first one's: whenever it runs the first ran before it, so
        # the one GradScaler created for the first serves both, as apex's last loss scaler did
        # (APX245); nothing is scaled between the two
        "second-initialize-in-a-nested-branch-shares-the-scaler",
        before="""\
import torch
from apex import amp


def main(args, online, target, batches):
    optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
    if args.fp16:
        online, optimizer = amp.initialize(online, optimizer, opt_level=args.opt_level)
        if args.with_target:
            frozen = torch.optim.SGD(target.parameters(), lr=0.0)
            target, frozen = amp.initialize(target, frozen, opt_level=args.opt_level)
    for x in batches:
        prediction = online(x)
        with torch.no_grad():
            goal = target(x)
        loss = torch.nn.functional.mse_loss(prediction, goal)
        optimizer.zero_grad()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main(args, online, target, batches):
    optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
    if args.fp16:
        if args.with_target:
            frozen = torch.optim.SGD(target.parameters(), lr=0.0)
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            prediction = online(x)
            with torch.no_grad():
                goal = target(x)
            loss = torch.nn.functional.mse_loss(prediction, goal)
        optimizer.zero_grad()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX245", "APX301", "APX311"),
    ),
    Example(
        # the loss is computed afresh on every branch of an if/else after the forward pass (a
        # weighted sum over the heads in a loop, or one term): it comes from that if on every
        # path, so the autocast region runs from the model call through it
        "loss-set-on-every-branch-of-an-if-after-the-forward-pass",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, head_weights=None):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        optimizer.zero_grad()
        outputs = model(x)
        if head_weights is not None:
            loss = 0
            for out, weight in zip(outputs, head_weights):
                loss += weight * torch.nn.functional.cross_entropy(out, y)
        else:
            loss = torch.nn.functional.cross_entropy(outputs, y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, batches, head_weights=None):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(x)
            if head_weights is not None:
                loss = 0
                for out, weight in zip(outputs, head_weights):
                    loss += weight * torch.nn.functional.cross_entropy(out, y)
            else:
                loss = torch.nn.functional.cross_entropy(outputs, y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # an extra loss term under an ``if`` that draws its batch from a second iterator, started
        # again when it runs dry (``try: next(it)`` / ``except StopIteration:``): a try whose body
        # and handlers are simple statements rides inside the autocast region with the forward
        # passes around it; it catches what it caught before
        "plain-try-in-the-forward-pass-rides-in-the-autocast",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, extra_loader, args):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    extra = iter(extra_loader)
    for x, y in loader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if args.consistency:
            try:
                x2 = next(extra)
            except StopIteration:
                extra = iter(extra_loader)
                x2 = next(extra)
            a, b = model(x2), model(x2.flip(-1))
            loss += args.weight * torch.nn.functional.mse_loss(a, b)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(model, optimizer, loader, extra_loader, args):
    scaler = torch.amp.GradScaler("cuda")
    extra = iter(extra_loader)
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            if args.consistency:
                try:
                    x2 = next(extra)
                except StopIteration:
                    extra = iter(extra_loader)
                    x2 = next(extra)
                a, b = model(x2), model(x2.flip(-1))
                loss += args.weight * torch.nn.functional.mse_loss(a, b)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the other way round, the first initialize nested and a later one on an outer path:
        # the later one runs where the first (and a GradScaler made there) did not, so no one
        # GradScaler is proven to exist wherever it is used; the file keeps apex.amp
        "later-initialize-outside-the-first-ones-branch-keeps-the-shim",
        before="""\
import torch
from apex import amp


def main(args, online, target, batches):
    optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
    if args.fp16:
        if args.with_target:
            frozen = torch.optim.SGD(target.parameters(), lr=0.0)
            target, frozen = amp.initialize(target, frozen, opt_level="O1")
        online, optimizer = amp.initialize(online, optimizer, opt_level="O1")
    for x in batches:
        loss = torch.nn.functional.mse_loss(online(x), target(x).detach())
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch
from apexcompat import amp


def main(args, online, target, batches):
    optimizer = torch.optim.SGD(online.parameters(), lr=0.1)
    if args.fp16:
        if args.with_target:
            frozen = torch.optim.SGD(target.parameters(), lr=0.0)
            target, frozen = amp.initialize(target, frozen, opt_level="O1")
        # TODO(apexcompat): amp.initialize is called for training more than once; one GradScaler
        #   cannot follow both; this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
        online, optimizer = amp.initialize(online, optimizer, opt_level="O1")
    for x in batches:
        loss = torch.nn.functional.mse_loss(online(x), target(x).detach())
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the scaled method is handed what the module's own forward() returns (a training script
        # calls forward() first, then the update): that forward pass is out of this file's
        # sight, so no autocast placed here would cover it; left to a person (in a repository
        # run the file keeps apex.amp through the shim, APX220)
        "update-handed-what-the-modules-forward-returns",
        before="""\
import torch
from apex import amp


class PairTrainer(torch.nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder, self.head_net = encoder, head
        self.opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-4)
        self.encoder, self.opt = amp.initialize(self.encoder, self.opt, opt_level="O1")

    def forward(self, left, right):
        z_left = self.encoder(left)
        z_right = self.encoder(right)
        return z_left, z_right

    def update(self, z_left, z_right, target):
        self.opt.zero_grad()
        loss = torch.nn.functional.cosine_embedding_loss(self.head_net(z_left), self.head_net(z_right), target)
        with amp.scale_loss(loss, self.opt) as scaled:
            scaled.backward()
        self.opt.step()
""",
        after="""\
import torch


class PairTrainer(torch.nn.Module):
    def __init__(self, encoder, head):
        super().__init__()
        self.encoder, self.head_net = encoder, head
        self.opt = torch.optim.Adam(list(encoder.parameters()) + list(head.parameters()), lr=1e-4)
        self.scaler = torch.amp.GradScaler("cuda")

    def forward(self, left, right):
        z_left = self.encoder(left)
        z_right = self.encoder(right)
        return z_left, z_right

    def update(self, z_left, z_right, target):
        self.opt.zero_grad()
        loss = torch.nn.functional.cosine_embedding_loss(self.head_net(z_left), self.head_net(z_right), target)
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss:
        #   update() is handed z_left, z_right, which the class's own forward() computes with
        #   the models, called from elsewhere: wrap that forward pass in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand
        self.scaler.scale(loss).backward()
        self.scaler.step(self.opt)
        self.scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # the script's __main__ guard is no condition around the initialize: the GradScaler
        # goes where the initialize's own if was, inside the guard and before the training
        # (before: the test reading `args`, which the guard's body assigns, was taken for a
        # run-once guard and the file kept the shim)
        "main-guard-is-not-a-condition",
        before=MAIN_GUARD_SCRIPT,
        after=MAIN_GUARD_SCRIPT_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the same with the options parsed outside the guard (before: the GradScaler was
        # created after the guard, once the training had run: a NameError in update())
        "main-guard-scaler-before-the-training",
        before=_args_outside(MAIN_GUARD_SCRIPT),
        after=_args_outside(MAIN_GUARD_SCRIPT_NATIVE),
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the opt level tested in the initialize's own if, in single quotes: the switch says it
        # once (before: `use_amp = level != 'O0' and level != "O0"`, X-CLIP's main.py)
        "opt-level-test-in-the-if-not-repeated",
        before="""\
import torch
from apex import amp


def main(config, model, optimizer, loader):
    if config.OPT_LEVEL != 'O0':
        model, optimizer = amp.initialize(model, optimizer, opt_level=config.OPT_LEVEL)
    for x in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        if config.OPT_LEVEL != 'O0':
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def main(config, model, optimizer, loader):
    use_amp = config.OPT_LEVEL != 'O0'
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).sum()
        optimizer.zero_grad()
        if config.OPT_LEVEL != 'O0':
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # loss_scale chosen at run time in a local set before the initialize's if (negative
        # means dynamic) and not touched in it: the GradScaler after the if reads it as apex
        # did (before: a dynamic GradScaler beside a TODO, second.pytorch's train.py)
        "run-time-loss-scale-local-set-before-the-if",
        before="""\
import torch


def train(cfg, net, optimizer, batches):
    loss_scale = cfg.loss_scale_factor
    if loss_scale < 0:
        loss_scale = "dynamic"
    if cfg.enable_mixed_precision:
        from apex import amp
        net, optimizer = amp.initialize(net, optimizer, opt_level="O1", loss_scale=loss_scale)
    for x in batches:
        loss = net(x).sum()
        if cfg.enable_mixed_precision:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(cfg, net, optimizer, batches):
    loss_scale = cfg.loss_scale_factor
    if loss_scale < 0:
        loss_scale = "dynamic"
    use_amp = bool(cfg.enable_mixed_precision)
    amp_loss_scale = loss_scale if cfg.enable_mixed_precision else "dynamic"
    amp_scale, amp_growth = (65536.0, 2000) if amp_loss_scale in (None, "dynamic") else (float(amp_loss_scale), 10**9)
    scaler = torch.amp.GradScaler("cuda", init_scale=amp_scale, growth_interval=amp_growth, enabled=use_amp)
    scaler.set_backoff_factor(1.0 if amp_growth == 10**9 else 0.5)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = net(x).sum()
        if cfg.enable_mixed_precision:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX204", "APX209", "APX301", "APX311"),
    ),
    # the loss is summed over a dict of outputs in an if before the accumulation if: the if
    # (a plain loop inside, no step) is part of the forward span, not a barrier before it
    Example(
        "loss-summed-over-the-outputs-in-an-if-before-the-accumulation-branches",
        before="""\
import torch
from apex import amp


def train_one_epoch(model, criterion, loader, optimizer, steps):
    for idx, (samples, targets) in enumerate(loader):
        outputs = model(samples)
        if isinstance(outputs, dict):
            loss = 0.0
            for name, pred in outputs.items():
                if "aux" in name:
                    loss += 0.1 * criterion(pred, targets)
                else:
                    loss += criterion(pred, targets)
        else:
            loss = criterion(outputs, targets)
        if steps > 1:
            loss = loss / steps
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (idx + 1) % steps == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()


def main(model, criterion, loader, optimizer):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    train_one_epoch(model, criterion, loader, optimizer, 2)
""",
        after="""\
import torch


def train_one_epoch(model, criterion, loader, optimizer, steps, scaler):
    for idx, (samples, targets) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(samples)
            if isinstance(outputs, dict):
                loss = 0.0
                for name, pred in outputs.items():
                    if "aux" in name:
                        loss += 0.1 * criterion(pred, targets)
                    else:
                        loss += criterion(pred, targets)
            else:
                loss = criterion(outputs, targets)
        if steps > 1:
            loss = loss / steps
            scaler.scale(loss).backward()
            if (idx + 1) % steps == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        else:
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


def main(model, criterion, loader, optimizer):
    scaler = torch.amp.GradScaler("cuda")
    train_one_epoch(model, criterion, loader, optimizer, 2, scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX301", "APX311", "APX314"),
    ),
    # the helper that initializes is called on the training and on the evaluation path, each
    # call unpacking what it returns in a branch of the caller: each unpacks the GradScaler
    # too, and the training function called after the training path's call gets it
    Example(
        "setup-helper-called-on-two-paths-returns-the-scaler-to-each",
        before=SETUP_CALLED_TWICE,
        after=SETUP_CALLED_TWICE_NATIVE,
        codes=("APX101", "APX201", "APX207", "APX209", "APX217", "APX301", "APX311"),
    ),
    # the setup helper runs in a branch, the training function after it on every path: the
    # GradScaler it would return is not bound where the branch is skipped, and the reason says so
    Example(
        "training-function-called-after-the-branch-that-runs-the-setup-keeps-the-shim",
        before=SETUP_CALLED_TWICE.replace(
            """    if do_train:
        model, optimizer = setup(model, 0.1)
        train(model, optimizer, batches)
    else:
        model, _ = setup(model, 0.0)
        return model(batches[0])
""",
            """    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if do_train:
        model, optimizer = setup(model, 0.1)
    train(model, optimizer, batches)
""",
        ),
        after=SETUP_CALLED_TWICE.replace("from apex import amp", "from apexcompat import amp")
        .replace(
            "        with amp.scale_loss(", SETUP_IN_A_BRANCH_TODO + "        with amp.scale_loss("
        )
        .replace(
            """    if do_train:
        model, optimizer = setup(model, 0.1)
        train(model, optimizer, batches)
    else:
        model, _ = setup(model, 0.0)
        return model(batches[0])
""",
            """    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if do_train:
        model, optimizer = setup(model, 0.1)
    train(model, optimizer, batches)
""",
        ),
        codes=("APX102", "APX220"),
    ),
    # a return before the initialize on a path decided by the helper's parameters alone (mixed
    # precision off): it hands back a disabled GradScaler
    Example(
        "setup-helper-returning-before-the-initialize-hands-back-a-disabled-scaler",
        before=SETUP_RETURNS_EARLY_WHEN_OFF,
        after=SETUP_RETURNS_EARLY_WHEN_OFF_NATIVE,
        codes=("APX101", "APX201", "APX209", "APX217", "APX301", "APX311", "APX316"),
    ),
    # the same return decided by a flag the helper sets once it initialized: the shim, and why
    Example(
        "setup-helper-returning-before-the-initialize-on-its-own-flag-keeps-the-shim",
        before=SETUP_RETURNS_EARLY_ON_ITS_OWN_FLAG,
        after=SETUP_RETURNS_EARLY_ON_ITS_OWN_FLAG_SHIM,
        codes=("APX102", "APX220"),
    ),
    # the early return in the else branch of a test on the flag it sets: the test decides that
    # path as much as one around a return in its body
    Example(
        "setup-helper-returning-in-the-else-of-its-own-flag-keeps-the-shim",
        before=SETUP_RETURNS_EARLY_IN_THE_ELSE_OF_ITS_OWN_FLAG,
        after=SETUP_RETURNS_EARLY_IN_THE_ELSE_OF_ITS_OWN_FLAG_SHIM,
        codes=("APX102", "APX220"),
    ),
    # the initializing helper and the epoch function are both called only from other files:
    # the finding says so instead of giving no reason
    Example(
        "initializing-helper-called-from-no-function-of-the-file-keeps-the-shim",
        before=RESTORE_AND_EPOCH_CALLED_ELSEWHERE,
        after=RESTORE_AND_EPOCH_CALLED_ELSEWHERE.replace("from apex import amp", "from apexcompat import amp").replace(
            "            with amp.scale_loss(",
            RESTORE_AND_EPOCH_CALLED_ELSEWHERE_TODO + "            with amp.scale_loss(",
        ),
        codes=("APX102", "APX220"),
    ),
    # the caller scales the loss itself after the branch that runs the setup helper: on the
    # path that skips the branch the name it would unpack is unbound, so the route is refused
    Example(
        "loss-scaled-after-the-branch-that-runs-the-setup-keeps-the-shim",
        before=LOSS_SCALED_AFTER_THE_SETUP_BRANCH,
        after=LOSS_SCALED_AFTER_THE_SETUP_BRANCH.replace("from apex import amp", "from apexcompat import amp").replace(
            "        with amp.scale_loss(", LOSS_SCALED_AFTER_THE_SETUP_BRANCH_TODO + "        with amp.scale_loss("
        ),
        codes=("APX102", "APX220"),
    ),
    # the loss is computed in an if of its own (training and validation) that also holds a
    # no_grad block, from outputs the model returned before it, and scaled under a later if
    # (training only): the forward pass and the loss's statement are each wrapped, where they are
    Example(
        "loss-computed-in-an-if-before-the-one-that-scales-it",
        before="""\
import torch
from apex import amp


def fit(model, optimizer, loader, mode="train"):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    losses = []
    for x, y in loader:
        outputs = model(x)
        if mode in ("train", "valid"):
            loss = torch.nn.functional.mse_loss(outputs, y)
            with torch.no_grad():
                losses.append(loss.item())
        if mode == "train":
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    return losses
""",
        after="""\
import torch


def fit(model, optimizer, loader, mode="train"):
    scaler = torch.amp.GradScaler("cuda")
    losses = []
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            outputs = model(x)
        if mode in ("train", "valid"):
            with torch.autocast("cuda", dtype=torch.float16):
                loss = torch.nn.functional.mse_loss(outputs, y)
            with torch.no_grad():
                losses.append(loss.item())
        if mode == "train":
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return losses
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    # the epoch function is run by the training path, which has the GradScaler, and by the
    # evaluation path, which has none and leaves the optimizer at its default None: there the
    # test around the scale_loss is false, so that call hands over a disabled GradScaler
    # (autocast off, as without apex's initialize) and the training path its own
    Example(
        "epoch-function-also-run-where-no-scaler-exists-gets-a-disabled-one",
        before=EPOCH_ALSO_RUN_BY_EVALUATION,
        after="""\
import torch


def run_epoch(model, batches, optimizer=None, fp16=False, *, scaler):
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).pow(2).mean()
        if optimizer is not None:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()


def train(args, model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    run_epoch(model, batches, optimizer, fp16=args.fp16, scaler=scaler)


def evaluate(model, batches):
    with torch.no_grad():
        run_epoch(model, batches, scaler=torch.amp.GradScaler("cuda", enabled=False))


def main(args, batches):
    if args.mode == "train":
        train(args, torch.nn.Linear(8, 1).cuda(), batches)
    else:
        evaluate(torch.nn.Linear(8, 1).cuda(), batches)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX301", "APX311", "APX316"),
    ),
    # the same epoch function also run by a fine-tuning path without a GradScaler that hands
    # it an optimizer and fp16=True: its scale_loss may run there, so the reason names that
    # caller (not the return route of the function that initializes, which calls it itself)
    Example(
        "epoch-function-also-run-where-no-scaler-exists-names-that-caller",
        before=EPOCH_ALSO_RUN_BY_EVALUATION + FINETUNE_WITHOUT_SCALER,
        after=EPOCH_ALSO_RUN_BY_EVALUATION.replace("from apex import amp", "from apexcompat import amp").replace(
            "                with amp.scale_loss(", EPOCH_ALSO_RUN_BY_EVALUATION_TODO + "                with amp.scale_loss("
        ) + FINETUNE_WITHOUT_SCALER,
        codes=("APX102", "APX220"),
    ),
    # mocona's S.inject returns the function it decorates (it only turns the scoped-variable
    # markers among its defaults into their variables): the epoch function takes the scaler
    Example(
        "epoch-function-under-a-decorator-that-returns-it-takes-the-scaler",
        before="""\
import torch
from apex import amp
from mocona.scopedvar import S, V


@S.inject
def train_one_epoch(model, optimizer, batches, epoch, epoch_num=V.epoch_num):
    S.assign(epoch_num, epoch)
    for x in batches:
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()


def main(batches):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for epoch in range(10):
        train_one_epoch(model, optimizer, batches, epoch)
""",
        after="""\
import torch
from mocona.scopedvar import S, V


@S.inject
def train_one_epoch(model, optimizer, batches, epoch, epoch_num=V.epoch_num, *, scaler):
    S.assign(epoch_num, epoch)
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()


def main(batches):
    model = torch.nn.Linear(8, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for epoch in range(10):
        train_one_epoch(model, optimizer, batches, epoch, scaler=scaler)
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX301", "APX311"),
    ),
    # any other decorator may wrap the function in one that does not take the new parameter
    Example(
        "epoch-function-under-another-decorator-keeps-the-shim",
        before=OTHER_DECORATOR,
        after=OTHER_DECORATOR.replace("from apex import amp", "from apexcompat import amp").replace(
            "        with amp.scale_loss(", OTHER_DECORATOR_TODO + "        with amp.scale_loss("
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the optimizer apex returned is stored on another object (``stepper.optimizer = opt``)
        # that steps it in a method of its own after a learning-rate warm-up (BiSeNet's fp16
        # script): GradScaler.step needs the optimizer itself; the finding says so (it named the
        # module-level caller of train() before)
        "fallback-optimizer-stepped-through-the-object-that-holds-it",
        before="""\
import torch
from apex import amp

from lr import WarmupStepper


def train(net, batches):
    stepper = WarmupStepper(net, lr=0.1)
    net, opt = amp.initialize(net, stepper.optimizer, opt_level="O1")
    stepper.optimizer = opt
    for x, y in batches:
        stepper.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        stepper.step()


if __name__ == "__main__":
    train(torch.nn.Linear(2, 2).cuda(), [])
""",
        after="""\
import torch
from apexcompat import amp

from lr import WarmupStepper


def train(net, batches):
    stepper = WarmupStepper(net, lr=0.1)
    net, opt = amp.initialize(net, stepper.optimizer, opt_level="O1")
    stepper.optimizer = opt
    for x, y in batches:
        stepper.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        # TODO(apexcompat): opt.step() is not in the same function as amp.scale_loss, and opt is
        #   stored as stepper.optimizer and stepped through stepper.step(), a method of that
        #   object, not here: GradScaler.step needs the optimizer itself, so that method would
        #   have to step it through the scaler; this file keeps apex.amp semantics through
        #   apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        stepper.step()


if __name__ == "__main__":
    train(torch.nn.Linear(2, 2).cuda(), [])
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the class that scales the loss is made by a function from the class it is handed
        # (a mixin factory): the step of self.optimizer is in that class's methods, unknown here
        "fallback-loss-scaled-in-a-class-deriving-from-a-parameter-names-the-mixin-factory",
        before=MIXIN_FACTORY,
        after=_shim_after(
            MIXIN_FACTORY, "            with amp.scale_loss(loss, self.optimizer)", MIXIN_FACTORY_TODO
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # a loss object carries the optimizer it scales for and is handed to whoever calls its
        # backward(): the step is taken by the code that holds the optimizer, in its own order
        "fallback-loss-object-carrying-its-optimizer-says-the-step-is-elsewhere",
        before=LOSS_CARRYING_ITS_OPTIMIZER,
        after=_shim_after(
            LOSS_CARRYING_ITS_OPTIMIZER,
            "        with amp.scale_loss(self.value, self.optimizer)",
            LOSS_CARRYING_ITS_OPTIMIZER_TODO,
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # a training context whose backward() scales for all its optimizers and whose
        # step_optimizer(optimizer) steps the one it is handed: the order is its callers'
        "fallback-context-stepping-the-optimizer-it-is-handed-names-that-method",
        before=CONTEXT_STEPPING_WHAT_IT_IS_HANDED,
        after=_shim_after(
            CONTEXT_STEPPING_WHAT_IT_IS_HANDED,
            "        with amp.scale_loss(loss, self.optimizers)",
            CONTEXT_STEPPING_WHAT_IT_IS_HANDED_TODO,
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the function that scales the loss is also called from an evaluation function without
        # the GradScaler (rsna-ich-appian42's run_nn, called by valid() and test()) with another
        # mode: `mode == "train"` is false there, so that call hands over a disabled GradScaler
        # (autocast off, as in the original run without amp.initialize)
        "epoch-function-also-called-from-an-evaluation-function-in-another-mode-gets-a-disabled-scaler",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, fp16):
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for epoch in range(3):
        run_epoch("train", model, loader, optimizer, fp16=fp16)


def evaluate(model, loader):
    with torch.no_grad():
        return run_epoch("valid", model, loader)


def run_epoch(mode, model, loader, optimizer=None, fp16=None):
    total = 0.0
    for x, y in loader:
        loss = torch.nn.functional.mse_loss(model(x), y)
        total += loss.item()
        if mode == "train":
            if fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    return total
""",
        after="""\
import torch


def train(model, optimizer, loader, fp16):
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for epoch in range(3):
        run_epoch("train", model, loader, optimizer, fp16=fp16, scaler=scaler)


def evaluate(model, loader):
    with torch.no_grad():
        return run_epoch("valid", model, loader, scaler=torch.amp.GradScaler("cuda", enabled=False))


def run_epoch(mode, model, loader, optimizer=None, fp16=None, *, scaler):
    total = 0.0
    for x, y in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x), y)
        total += loss.item()
        if mode == "train":
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
    return total
""",
        codes=("APX101", "APX201", "APX207", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # a helper handed apex.amp or None tests it before its amp.initialize (an apex workaround:
        # ``if amp: optimizer.state = {}``), creates the GradScaler and uses it (the amp state
        # loaded), while its caller scales the losses (unilm's s2s-ft): the parameter is read as
        # an on/off flag (``_amp_flag_param``), but the helper uses the GradScaler itself, so it
        # is not handed back, and outside a repository (no plan) no module-level GradScaler
        # stands in; the repository example ``amp-or-none-initialized-under-its-test-...``
        # migrates it (the finding said, in session 30, that no route follows the initialize
        # made through the parameter)
        "fallback-helper-tests-amp-before-initialize-and-uses-the-scaler-its-caller-needs",
        before="""\
import torch


def prepare(args, model, state, amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if state:
        optimizer.load_state_dict(state["optimizer"])
        if amp:
            optimizer.state = {}
    if amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.level)
        if state:
            amp.load_state_dict(state["amp"])
    return model, optimizer


def train(args, model, batches, state):
    if args.fp16:
        from apex import amp
    else:
        amp = None
    model, optimizer = prepare(args, model, state, amp=amp)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if args.fp16:
        torch.save({"amp": amp.state_dict()}, "ckpt.pt")
""",
        after="""\
import torch


def prepare(args, model, state, amp):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if state:
        optimizer.load_state_dict(state["optimizer"])
        if amp:
            optimizer.state = {}
    if amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.level)
        if state:
            amp.load_state_dict(state["amp"])
    return model, optimizer


def train(args, model, batches, state):
    if args.fp16:
        from apexcompat import amp
    else:
        amp = None
    model, optimizer = prepare(args, model, state, amp=amp)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            # TODO(apexcompat): the scaler created at amp.initialize cannot be passed to train:
            #   train() gets the model and optimizer from prepare(), where amp.initialize is, which
            #   uses the GradScaler itself after creating it, so it is not handed back as one more
            #   returned value; this file keeps apex.amp semantics through apexcompat.amp, migrate
            #   it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if args.fp16:
        torch.save({"amp": amp.state_dict()}, "ckpt.pt")
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # the loss is summed over views in a loop whose body computes each view's target under
        # ``torch.no_grad()`` from the model's outputs (swav's per-crop assignments): the loop is
        # part of the loss computation autocast covers (apex's O1 casts ran it too); before, the
        # ``with`` in the loop stopped the search and the shim stayed
        "loss-summed-in-a-loop-with-a-no-grad-target-per-view",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, optimizer, loader, views, fp16):
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for inputs in loader:
        scores = model(inputs)
        loss = 0
        for k in range(views):
            with torch.no_grad():
                target = torch.softmax(scores[k].detach() / 0.05, dim=1)
            loss -= torch.mean(torch.sum(target * F.log_softmax(scores[1 - k], dim=1), dim=1))
        loss /= views
        optimizer.zero_grad()
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
""",
        after="""\
import torch
import torch.nn.functional as F


def train(model, optimizer, loader, views, fp16):
    use_amp = bool(fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for inputs in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            scores = model(inputs)
            loss = 0
            for k in range(views):
                with torch.no_grad():
                    target = torch.softmax(scores[k].detach() / 0.05, dim=1)
                loss -= torch.mean(torch.sum(target * F.log_softmax(scores[1 - k], dim=1), dim=1))
            loss /= views
        optimizer.zero_grad()
        if fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the loss comes from a loss function the method is handed (a loop over ``loss_funcs``)
        # from a batch its caller fills with forward passes (DeepPrivacy's LossOptimizer): the
        # TODO says so, not only that the forward pass is not next to the scale_loss
        "loss-from-a-handed-loss-function-says-so",
        before="""\
import torch
from apex import amp


class GanStep:
    def __init__(self, gen, disc, opt_d, criteria):
        self.criteria = criteria
        [self.gen, self.disc], self.opt_d = amp.initialize([gen, disc], opt_d, opt_level="O1")

    def backward(self, batch, loss_funcs, optimizer):
        for fn in loss_funcs:
            loss, parts = fn(batch)
            loss = loss.mean()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        optimizer.step()

    def step_d(self, batch):
        with torch.no_grad():
            batch["fake"] = self.gen(batch["z"])
        batch["real_scores"] = self.disc(batch["img"])
        self.backward(batch, self.criteria, self.opt_d)
""",
        after="""\
import torch


class GanStep:
    def __init__(self, gen, disc, opt_d, criteria):
        self.criteria = criteria
        [self.gen, self.disc], self.opt_d = [gen, disc], opt_d
        self.scaler = torch.amp.GradScaler("cuda")

    def backward(self, batch, loss_funcs, optimizer):
        for fn in loss_funcs:
            loss, parts = fn(batch)
            loss = loss.mean()
            # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss (the
            #   loss comes from fn(), a function backward() is handed: its forward passes, and those
            #   of the callers that fill its arguments, are not followed): wrap them in `with
            #   torch.autocast("cuda", dtype=torch.float16):` by hand
            self.scaler.scale(loss).backward()
        self.scaler.step(optimizer)
        self.scaler.update()

    def step_d(self, batch):
        with torch.no_grad():
            batch["fake"] = self.gen(batch["z"])
        batch["real_scores"] = self.disc(batch["img"])
        self.backward(batch, self.criteria, self.opt_d)
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311"),
    ),
    Example(
        # the scales of all apex loss scalers are read for logging (DeepPrivacy's StatsLogger),
        # as many as the criteria the class is given (num_losses=len(criteria)): how many
        # GradScalers stand for them is not told, so the file keeps the shim and says so
        "fallback-amp-state-scales-of-every-loss-scaler-logged",
        before=GAN_STEP_LOGGING_SCALES,
        after=GAN_STEP_LOGGING_SCALES.replace("from apex", "from apexcompat").replace(
            "        return {i: s._loss_scale", GAN_STEP_SCALES_TODO + "        return {i: s._loss_scale"
        ),
        codes=("APX102", "APX220"),
    ),
    # a penalty term scaled and unscaled by hand with apex's second loss scaler, kept in a
    # local first: the local goes, and each read of the scale through it becomes the
    # get_scale() of loss id 1's GradScaler, which the penalty takes as a parameter
    Example(
        "loss-scaler-kept-in-a-local-is-read-off-its-gradscaler",
        before=PENALTY_WITH_SECOND_SCALER,
        after=PENALTY_WITH_SECOND_SCALER_NATIVE,
        codes=("APX101", "APX201", "APX203", "APX207", "APX209", "APX301", "APX311", "APX506"),
    ),
    # a GAN's two loss ids, each with its GradScaler: a loop and a comprehension over apex's
    # loss scalers go over the GradScalers, each read of the scale is get_scale()
    Example(
        "loss-scalers-looped-over-are-the-gradscalers",
        before=GAN_LOGS_EVERY_SCALE,
        after=GAN_LOGS_EVERY_SCALE_NATIVE,
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX311", "APX506"),
    ),
    # apex kept one loss scaler (no num_losses): a comprehension over the list of them goes
    # over a list holding the one GradScaler
    Example(
        "loss-scalers-looped-over-with-one-gradscaler",
        before="import torch\nfrom apex import amp\n\n\n"
        + O1_TRAIN
        + "    return [s.loss_scale() for s in amp._amp_state.loss_scalers]\n",
        after="""\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
    return [s.get_scale() for s in [scaler]]
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX506"),
    ),
    # the loss scaler kept in a local also runs apex's own overflow check and scale update
    # after a hand-written all-reduce (tape's distributed fp16 step): the reason names what
    # a GradScaler has no public counterpart of (it said only the scale was read)
    Example(
        "loss-scaler-kept-in-a-local-for-its-internals-keeps-the-shim",
        before=HAND_UPDATED_SCALER,
        after=HAND_UPDATED_SCALER.replace("from apex", "from apexcompat").replace(
            "        scaler = amp._amp_state", HAND_UPDATED_SCALER_TODO + "        scaler = amp._amp_state"
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # O2's master-weight switch read off apex's private state (tape's resume path, catalyst's
        # engine): the reason names the property read, which has no native counterpart
        "fallback-opt-level-property-read-off-amp-state",
        before="""\
import torch
from apex import amp


def train(model, optimizer):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    if amp._amp_state.opt_properties.master_weights:
        print("fp32 master weights kept")
    for x in torch.randn(4, 3, 2):
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch
from apexcompat import amp


def train(model, optimizer):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
    # TODO(apexcompat): private amp._amp_state use: it reads the opt_level's master_weights
    #   (opt_properties.master_weights), which neither a GradScaler nor torch.autocast has
    #   (natively no fp32 master weights are kept beside the model's); this file keeps
    #   apex.amp semantics through apexcompat.amp, migrate it by hand
    if amp._amp_state.opt_properties.master_weights:
        print("fp32 master weights kept")
    for x in torch.randn(4, 3, 2):
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # a factory hands apex.amp (or None) back to its callers, which initialize and scale
        # through what they get: the reason says it is returned (nlp-recipes' get_amp)
        "fallback-amp-module-returned-by-a-factory",
        before="""\
import torch


def mixed_precision_module(fp16):
    if fp16:
        from apex import amp

        amp.register_half_function(torch, "einsum")
    else:
        amp = None
    return amp
""",
        after="""\
import torch


def mixed_precision_module(fp16):
    if fp16:
        from apexcompat import amp

        # amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16
        pass
    else:
        amp = None
    # TODO(apexcompat): apex.amp is returned by mixed_precision_module() here: what its
    #   callers do with the module they get (amp.initialize, amp.scale_loss on it) is not
    #   followed, and no GradScaler can stand for a module handed back as a value; this file
    #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
    return amp
""",
        codes=("APX102", "APX220", "APX502"),
    ),
    Example(
        # a clipper class written with apex's kernels, called on amp.master_params after the
        # scaled backward: the fused-kernels rule makes it torch's clip_grad_norm_ (APX811),
        # the clipping rule puts scaler.unscale_ before its call, as apex had unscaled
        "kernel-norm-clip-after-scale-loss",
        "import torch\nfrom apex import amp\nfrom apex.multi_tensor_apply import multi_tensor_applier\n\n\n"
        + KERNEL_CLIP_CLASS
        + "\n\ndef train(model, optimizer, batches):\n"
        "    model, optimizer = amp.initialize(model, optimizer, opt_level=\"O2\")\n"
        "    clipper = NormClipper(1.0)\n    for x, y in batches:\n"
        "        loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "        with amp.scale_loss(loss, optimizer) as scaled:\n            scaled.backward()\n"
        "        clipper.clip(amp.master_params(optimizer))\n        optimizer.step()\n"
        "        optimizer.zero_grad()\n\n\nif __name__ == \"__main__\":\n    train(*build())\n",
        "import torch\n\n\n"
        "class NormClipper:\n    def __init__(self, limit):\n        self.limit = limit\n\n"
        "    def clip(self, params):\n        torch.nn.utils.clip_grad_norm_(params, self.limit)\n\n\n"
        "def train(model, optimizer, batches):\n    scaler = torch.amp.GradScaler(\"cuda\")\n"
        "    clipper = NormClipper(1.0)\n    for x, y in batches:\n"
        "        with torch.autocast(\"cuda\", dtype=torch.float16):\n"
        "            loss = torch.nn.functional.mse_loss(model(x), y)\n"
        "        scaler.scale(loss).backward()\n        scaler.unscale_(optimizer)\n"
        "        clipper.clip((p for group in optimizer.param_groups for p in group[\"params\"]))\n"
        "        scaler.step(optimizer)\n        scaler.update()\n        optimizer.zero_grad()\n\n\n"
        "if __name__ == \"__main__\":\n    train(*build())\n",
        ("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX321", "APX811"),
    ),
    Example(
        # a meter handed plain numbers and a log line between the backward and the step reach
        # no gradient: no unscale_ is added for them
        "logging-between-the-backward-and-the-step-needs-no-unscale",
        before='''\
import logging

import torch
from apex import amp

logger = logging.getLogger(__name__)


def fit(model, optimizer, batches, meter):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for step, x in enumerate(batches):
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        meter.update(loss.item(), len(x))
        logger.info("step %d loss %.4f", step, loss.item())
        optimizer.step()
''',
        after='''\
import logging

import torch

logger = logging.getLogger(__name__)


def fit(model, optimizer, batches, meter):
    scaler = torch.amp.GradScaler("cuda")
    for step, x in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        meter.update(loss.item(), len(x))
        logger.info("step %d loss %.4f", step, loss.item())
        scaler.step(optimizer)
        scaler.update()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a method that backs another scaled loss runs between the first backward and the
        # step: an unscale_ before it would leave that loss's gradients scaled (GradScaler
        # unscales once per step), so none is added for the call
        "backward-helper-between-the-backward-and-the-step-gets-no-unscale",
        before='''\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def auxiliary_backward(self, x):
        loss = self.model(x).pow(2).mean()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def train_step(self, x, extra):
        loss = self.model(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.auxiliary_backward(extra)
        self.optimizer.step()
        self.optimizer.zero_grad()
''',
        after='''\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def auxiliary_backward(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).pow(2).mean()
        self.scaler.scale(loss).backward()

    def train_step(self, x, extra):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).sum()
        self.scaler.scale(loss).backward()
        self.auxiliary_backward(extra)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
''',
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # cascade-stereo (sweep15): apex is initialized on every --using_apex run but the loss
        # is scaled only on the distributed ones, with a plain backward on the others and one
        # step after that if-chain: the step goes under the scaling test, so a single-GPU apex
        # run steps its plain gradients plainly (a GradScaler that scaled nothing asserts at
        # its step), as apex's patched optimizer did
        "loss-scaled-under-a-narrower-test-than-the-initialize-step-goes-under-that-test",
        before="""\
import torch
from apex import amp

parser = build_parser()
args = parser.parse_args()
is_distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1


def train_sample(model, optimizer, batch):
    optimizer.zero_grad()
    loss = model(batch).mean()
    if is_distributed and args.using_apex:
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    return loss


if __name__ == "__main__":
    model = build_model().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    if args.using_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for batch in loader:
        train_sample(model, optimizer, batch)
""",
        after="""\
import torch

parser = build_parser()
args = parser.parse_args()
is_distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1


def train_sample(model, optimizer, batch):
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
        loss = model(batch).mean()
    if is_distributed and args.using_apex:
        scaler.scale(loss).backward()
    else:
        loss.backward()
    if is_distributed and args.using_apex:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    return loss


if __name__ == "__main__":
    model = build_model().cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    use_amp = bool(args.using_apex)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for batch in loader:
        train_sample(model, optimizer, batch)
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the same narrower test with the step at an accumulation boundary: the step does not
        # follow every backward and the test is not fixed across calls, so nothing proves
        # which backward the step's gradients come from: refused with that reason
        "loss-scaled-under-a-narrower-test-step-at-an-accumulation-boundary-is-refused",
        before="""\
import torch
from apex import amp


def train(model, optimizer, loader, args, is_distributed):
    if args.using_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, batch in enumerate(loader):
        loss = model(batch).mean()
        if is_distributed and args.using_apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if (i + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch
from apexcompat import amp


def train(model, optimizer, loader, args, is_distributed):
    if args.using_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, batch in enumerate(loader):
        loss = model(batch).mean()
        if is_distributed and args.using_apex:
            # TODO(apexcompat): train() scales the loss only if is_distributed and args.using_apex,
            #   fewer runs than the GradScaler is switched on for, and runs a plain backward
            #   otherwise, which a GradScaler cannot step (optimizer.step(): the step may not follow
            #   every backward, and its test is_distributed and args.using_apex is not read from
            #   attributes of self); this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if (i + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # a GAN's generator step (found through cSNGAN-AC, sweep15): the generator runs before
        # the ``if`` of its update, whose branch computes the loss through the discriminator;
        # the branch's span started at that discriminator call and the generator's forward
        # pass was left in float32, silently.  It gets a span of its own, as when the branch
        # calls no model
        "generator-forward-before-the-if-whose-branch-calls-the-discriminator-gets-its-own-autocast",
        before="""\
import torch
from apex import amp

netG = build_g().cuda()
netD = build_d().cuda()
opt_g = torch.optim.Adam(netG.parameters())
opt_d = torch.optim.Adam(netD.parameters())
[netG, netD], [opt_g, opt_d] = amp.initialize([netG, netD], [opt_g, opt_d], opt_level="O1", num_losses=2)
for step, (z, real) in enumerate(loader):
    opt_g.zero_grad()
    fake = netG(z)
    if step % 2 == 0:
        g_loss = -netD(fake).mean()
        with amp.scale_loss(g_loss, opt_g, loss_id=0) as scaled:
            scaled.backward()
        opt_g.step()
    opt_d.zero_grad()
    d_loss = netD(fake.detach()).mean() - netD(real).mean()
    with amp.scale_loss(d_loss, opt_d, loss_id=1) as scaled:
        scaled.backward()
    opt_d.step()
""",
        after="""\
import torch

netG = build_g().cuda()
netD = build_d().cuda()
opt_g = torch.optim.Adam(netG.parameters())
opt_d = torch.optim.Adam(netD.parameters())
scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
for step, (z, real) in enumerate(loader):
    opt_g.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        fake = netG(z)
    if step % 2 == 0:
        with torch.autocast("cuda", dtype=torch.float16):
            g_loss = -netD(fake).mean()
        scalers[0].scale(g_loss).backward()
        scalers[0].step(opt_g)
        scalers[0].update()
    opt_d.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        d_loss = netD(fake.detach()).mean() - netD(real).mean()
    scalers[1].scale(d_loss).backward()
    scalers[1].step(opt_d)
    scalers[1].update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX311"),
    ),
    Example(
        # cSNGAN-AC (sweep15): an ``else: raise`` among the branches that compute the loss
        # ended the region, and the file stayed on apexcompat.amp ("the forward pass and loss
        # are not next to"); a last look lets a raise ride in the region (autocast's exit runs
        # on the way out), for sites the other looks refused only
        "raise-in-a-branch-computing-the-loss-rides-in-the-autocast-region",
        before="""\
import torch
from apex import amp

model = build_model().cuda()
opt = torch.optim.Adam(model.parameters())
model, opt = amp.initialize(model, opt, opt_level="O1")
for x, y in loader:
    opt.zero_grad()
    out = model(x)
    if args.loss == "l1":
        loss = torch.nn.functional.l1_loss(out, y)
    elif args.loss == "l2":
        loss = torch.nn.functional.mse_loss(out, y)
    else:
        raise ValueError(f"unknown loss {args.loss}")
    with amp.scale_loss(loss, opt) as scaled:
        scaled.backward()
    opt.step()
""",
        after="""\
import torch

model = build_model().cuda()
opt = torch.optim.Adam(model.parameters())
scaler = torch.amp.GradScaler("cuda")
for x, y in loader:
    opt.zero_grad()
    with torch.autocast("cuda", dtype=torch.float16):
        out = model(x)
        if args.loss == "l1":
            loss = torch.nn.functional.l1_loss(out, y)
        elif args.loss == "l2":
            loss = torch.nn.functional.mse_loss(out, y)
        else:
            raise ValueError(f"unknown loss {args.loss}")
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
]

NOOP_EXAMPLES: List[Example] = [
    Example(
        "local-variable-named-amp",
        before="""\
from audio import Amplifier


def boost(signal, model):
    amp = Amplifier(gain=2.0)
    model = amp.initialize(model)
    with amp.scale_loss(signal) as louder:
        louder.play()
""",
        codes=(),
    ),
    Example(
        "self-amp-attribute",
        before="""\
class Mixer:
    def __init__(self, amp):
        self.amp = amp

    def run(self, loss, optimizer):
        with self.amp.scale_loss(loss, optimizer) as scaled:
            scaled.backward()
        optimizer.step()
""",
        codes=(),
    ),
    Example(
        "comments-and-strings-mention-apex",
        before="""\
# Mixed precision used to come from apex.amp (https://github.com/NVIDIA/apex);
# `from apex import amp` is no longer needed.
NOTE = "call amp.initialize(model, optimizer) before training"


def describe():
    return "apex.amp.scale_loss was used here"
""",
        codes=(),
    ),
    Example(
        "amp-from-another-package",
        before="""\
from mylib import amp


def setup(model, optimizer):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    return model, optimizer
""",
        codes=(),
    ),
]


#: ``--dtype bfloat16``: bfloat16 autocast and no loss scaling (Bfloat16ScalerRule carries these)
BF16_EXAMPLES: List[Example] = [
    Example(
        # the typical loop: bfloat16 autocast, plain backward() and step()
        "bfloat16-loop",
        before=LINEAR_LOOP,
        after="""\
import torch

model = torch.nn.Linear(10, 2).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
""",
        codes=("APX101", "APX201", "APX209", "APX231", "APX301", "APX311"),
        settings=Settings(dtype="bfloat16"),
    ),
    Example(
        # the loss scale is dropped; amp.state_dict() saves {} under the same key, and loading
        # skips the amp entry, so an apex checkpoint still loads
        "bfloat16-checkpoint-clipping-and-static-scale",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, resume=None):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
    if resume is not None:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
    for x, y in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        optimizer.step()
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": amp.state_dict()},
        "checkpoint.pt",
    )
""",
        after="""\
import torch


def train(model, optimizer, batches, resume=None):
    if resume is not None:
        checkpoint = torch.load(resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
    for x, y in batches:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), 1.0)
        optimizer.step()
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "amp": {}},
        "checkpoint.pt",
    )
""",
        codes=("APX101", "APX201", "APX202", "APX203", "APX209", "APX231", "APX301", "APX311", "APX321", "APX401",
               "APX402"),
        settings=Settings(dtype="bfloat16"),
    ),
    Example(
        # the on/off switch the scaler carried becomes self.use_amp
        "bfloat16-switch-kept-on-self",
        before=TRAINER_CLASS,
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = model, optimizer
        use_amp = opt_level != "O0"
        self.use_amp = use_amp

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.use_amp):
            loss = torch.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX231", "APX301", "APX311"),
        settings=Settings(dtype="bfloat16"),
    ),
    Example(
        # the scaler threaded into a same-file function as its on/off switch: the function gets
        # the switch itself
        "bfloat16-switch-passed-to-a-function",
        before=SCALER_PASSED_TO_A_FUNCTION,
        after="""\
import torch


def train_epoch(model, optimizer, loader, use_amp):
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()


def main(args):
    model = build_model().cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    use_amp = bool(args.fp16 and args.opt_level != "O0")
    for epoch in range(args.epochs):
        train_epoch(model, optimizer, loader, use_amp)
""",
        codes=("APX101", "APX201", "APX202", "APX207", "APX209", "APX231", "APX301", "APX311"),
        settings=Settings(dtype="bfloat16"),
    ),
    Example(
        # a scaler handed to a class is kept (APX232): it trains correctly, with a scale
        # bfloat16 does not need
        "bfloat16-scaler-passed-to-a-class-kept",
        before=TRAINER_BUILT_AFTER_INITIALIZE,
        after=TRAINER_BUILT_AFTER_INITIALIZE_MIGRATED.replace("dtype=torch.float16", "dtype=torch.bfloat16"),
        codes=("APX101", "APX201", "APX202", "APX207", "APX209", "APX232", "APX301", "APX311", "APX321"),
        settings=Settings(dtype="bfloat16"),
    ),
]


#: mmgeneration's optimizers: a dict of them, each picked by its literal key where apex scales
#: its loss and where it is stepped
KEYED_OPTIMIZERS = """\
import torch
from apex import amp


def train_gan(model, optimizers, batches, loss_scaler=None):
    model, [optimizers["generator"], optimizers["discriminator"]] = amp.initialize(
        model, [optimizers["generator"], optimizers["discriminator"]], opt_level="O1", num_losses=2
    )
    for real, noise in batches:
        optimizers["discriminator"].zero_grad()
        loss_disc = model.disc_loss(real, noise)
        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        else:
            with amp.scale_loss(loss_disc, optimizers["discriminator"], loss_id=0) as scaled_loss:
                scaled_loss.backward()
        if loss_scaler:
            loss_scaler.step(optimizers["discriminator"])
            loss_scaler.update()
        else:
            optimizers["discriminator"].step()

        optimizers["generator"].zero_grad()
        loss_gen = model.gen_loss(noise)
        with amp.scale_loss(loss_gen, optimizers["generator"], loss_id=1) as scaled_loss:
            scaled_loss.backward()
        optimizers["generator"].step()
"""

EXAMPLES += [
    Example(
        # ``optimizers["discriminator"]``, a dict's optimizer picked by a literal key, is found
        # by its text at its step as a name is: stepped through loss id 0's GradScaler beside
        # the loop's own loss_scaler branch, the generator's through loss id 1's
        "optimizers-picked-from-a-dict-by-a-literal-key-step-through-their-grad-scalers",
        before=KEYED_OPTIMIZERS,
        after="""\
import torch


def train_gan(model, optimizers, batches, loss_scaler=None):
    scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
    for real, noise in batches:
        optimizers["discriminator"].zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_disc = model.disc_loss(real, noise)
        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        else:
            scalers[0].scale(loss_disc).backward()
        if loss_scaler:
            loss_scaler.step(optimizers["discriminator"])
            loss_scaler.update()
        else:
            scalers[0].step(optimizers["discriminator"])
            scalers[0].update()

        optimizers["generator"].zero_grad()
        with torch.autocast("cuda", dtype=torch.float16):
            loss_gen = model.gen_loss(noise)
        scalers[1].scale(loss_gen).backward()
        scalers[1].step(optimizers["generator"])
        scalers[1].update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the function puts another optimizer under the key between the initialize and a
        # step: the text no longer tells which optimizer steps, so the file keeps apex.amp
        "optimizer-dict-item-reassigned-keeps-the-shim",
        before=KEYED_OPTIMIZERS.replace(
            '''        optimizers["generator"].zero_grad()
''',
            '''        optimizers["generator"] = model.next_generator_optimizer(optimizers)
        optimizers["generator"].zero_grad()
''',
        ),
        after="""\
import torch
from apexcompat import amp


def train_gan(model, optimizers, batches, loss_scaler=None):
    model, [optimizers["generator"], optimizers["discriminator"]] = amp.initialize(
        model, [optimizers["generator"], optimizers["discriminator"]], opt_level="O1", num_losses=2
    )
    for real, noise in batches:
        optimizers["discriminator"].zero_grad()
        loss_disc = model.disc_loss(real, noise)
        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        else:
            # TODO(apexcompat): optimizers given as optimizers["discriminator"]: optimizers or an
            #   item of it is assigned in train_gan(), so at a step the same text may name another
            #   optimizer; this file keeps apex.amp semantics through apexcompat.amp, migrate it by
            #   hand
            with amp.scale_loss(loss_disc, optimizers["discriminator"], loss_id=0) as scaled_loss:
                scaled_loss.backward()
        if loss_scaler:
            loss_scaler.step(optimizers["discriminator"])
            loss_scaler.update()
        else:
            optimizers["discriminator"].step()

        optimizers["generator"] = model.next_generator_optimizer(optimizers)
        optimizers["generator"].zero_grad()
        loss_gen = model.gen_loss(noise)
        # TODO(apexcompat): optimizers given as optimizers["generator"]: optimizers or an item
        #   of it is assigned in train_gan(), so at a step the same text may name another
        #   optimizer; this file keeps apex.amp semantics through apexcompat.amp, migrate it by
        #   hand
        with amp.scale_loss(loss_gen, optimizers["generator"], loss_id=1) as scaled_loss:
            scaled_loss.backward()
        optimizers["generator"].step()
""",
        codes=("APX102", "APX220"),
    ),
    Example(
        # SemanticPalette's segmentor trainer (sweep13): the forward pass calls the wrapper the
        # engine builds around the initialized model, not the model's own name; the second look
        # for a forward pass counts such wrappers as models (``_amp_models.wrapped_models``)
        "forward-pass-through-a-wrapper-built-around-the-initialized-model",
        before="""\
import torch
from apex import amp


class SegmentorTrainer:
    def __init__(self, opt, engine):
        self.opt = opt
        self.engine = engine

    def step(self, data):
        self.opt_s.zero_grad()
        if self.opt.advent:
            loss = self.segmentor(data, mode="advent")
        else:
            loss = self.segmentor(data, mode="plain")
        loss = self.engine.all_reduce_tensor(loss)
        if self.opt.use_amp:
            with amp.scale_loss(loss, self.opt_s) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.opt_s.step()

    def run(self, batches):
        self.segmentor_on_one_gpu = build_segmentor(self.opt)
        self.opt_s = self.segmentor_on_one_gpu.opt_s
        if self.opt.use_amp:
            self.segmentor_on_one_gpu, self.opt_s = amp.initialize(
                self.segmentor_on_one_gpu, self.opt_s, opt_level="O1"
            )
        self.segmentor = self.engine.data_parallel(self.segmentor_on_one_gpu)
        for data in batches:
            self.step(data)
""",
        after="""\
import torch


class SegmentorTrainer:
    def __init__(self, opt, engine):
        self.scaler = torch.amp.GradScaler(enabled=False)
        self.opt = opt
        self.engine = engine

    def step(self, data):
        self.opt_s.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            if self.opt.advent:
                loss = self.segmentor(data, mode="advent")
            else:
                loss = self.segmentor(data, mode="plain")
            loss = self.engine.all_reduce_tensor(loss)
        if self.opt.use_amp:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()
        self.scaler.step(self.opt_s)
        self.scaler.update()

    def run(self, batches):
        self.segmentor_on_one_gpu = build_segmentor(self.opt)
        self.opt_s = self.segmentor_on_one_gpu.opt_s
        use_amp = bool(self.opt.use_amp)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.segmentor = self.engine.data_parallel(self.segmentor_on_one_gpu)
        for data in batches:
            self.step(data)
""",
        codes=("APX101", "APX201", "APX209", "APX261", "APX301", "APX311"),
    ),
    Example(
        # HR-VITON (sweep13): alternative initializes with num_losses=2, all under ``if
        # opt.fp16:``; the fp32 path gets disabled GradScalers, one per loss id as the
        # initializes make them (a lone one was indexed, ``scalers[0]``: a TypeError); each
        # plain else stays plain with a warning (APX256): the other loss's step keeps it from
        # being scaled, and alternative initializes give no proof the GradScaler is off there.
        # The two initializing branches read the same once their ``from apex import amp`` is
        # gone: written once
        "alternative-initializes-with-loss-ids-leave-a-disabled-scaler-per-loss-id",
        before="""\
import torch


def train(opt, gen, dis, tocg, opt_g, opt_d, batches):
    if opt.fp16:
        if not opt.GT:
            from apex import amp
            [tocg, gen, dis], [opt_g, opt_d] = amp.initialize([tocg, gen, dis], [opt_g, opt_d], opt_level="O1", num_losses=2)
        else:
            from apex import amp
            [gen, dis], [opt_g, opt_d] = amp.initialize([gen, dis], [opt_g, opt_d], opt_level="O1", num_losses=2)
    for x in batches:
        loss_g = gen(x).mean()
        opt_g.zero_grad()
        if opt.fp16:
            with amp.scale_loss(loss_g, opt_g, loss_id=0) as s:
                s.backward()
        else:
            loss_g.backward()
        opt_g.step()
        loss_d = dis(x).mean()
        opt_d.zero_grad()
        if opt.fp16:
            with amp.scale_loss(loss_d, opt_d, loss_id=1) as s:
                s.backward()
        else:
            loss_d.backward()
        opt_d.step()
""",
        after="""\
import torch


def train(opt, gen, dis, tocg, opt_g, opt_d, batches):
    scalers = [torch.amp.GradScaler("cuda", enabled=False) for _ in range(2)]
    if opt.fp16:
        scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scalers[0].is_enabled()):
            loss_g = gen(x).mean()
        opt_g.zero_grad()
        if opt.fp16:
            scalers[0].scale(loss_g).backward()
        else:
            loss_g.backward()
        scalers[0].step(opt_g)
        scalers[0].update()
        with torch.autocast("cuda", dtype=torch.float16, enabled=scalers[0].is_enabled()):
            loss_d = dis(x).mean()
        opt_d.zero_grad()
        if opt.fp16:
            scalers[1].scale(loss_d).backward()
        else:
            loss_d.backward()
        scalers[1].step(opt_d)
        scalers[1].update()
""",
        codes=("APX101", "APX201", "APX203", "APX209", "APX256", "APX301", "APX311"),
    ),
    Example(
        # HR-VITON (sweep13): the warping network's forward pass runs in a gradient-off block
        # that also holds plain loops (the parse map built label by label); apex's O1 ran it
        # with its casts, so the second look for a forward pass lets autocast span that block
        "gradient-off-block-holding-plain-loops-before-the-forward-pass-rides-in-the-autocast",
        before="""\
import torch
from apex import amp


def train(tocg, generator, optimizer, batches):
    [tocg, generator], optimizer = amp.initialize([tocg, generator], optimizer, opt_level="O1")
    for cloth, person, labels in batches:
        with torch.no_grad():
            warped, segmap = tocg(cloth, person)
            parse = torch.zeros_like(segmap[:, :7])
            for i, group in enumerate(labels):
                for label in group:
                    parse[:, i] += segmap[:, label]
        output = generator(warped, parse)
        loss = torch.nn.functional.l1_loss(output, person)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(tocg, generator, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda")
    for cloth, person, labels in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            with torch.no_grad():
                warped, segmap = tocg(cloth, person)
                parse = torch.zeros_like(segmap[:, :7])
                for i, group in enumerate(labels):
                    for label in group:
                        parse[:, i] += segmap[:, label]
            output = generator(warped, parse)
            loss = torch.nn.functional.l1_loss(output, person)
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # STEP (sweep13): the loss is summed in a per-step loop (an ``if`` holding a plain loop
        # in it) of the training loop's body and only rescaled in the fp16 branch next to its
        # scale_loss; the second look lets that loop be plain, stops the climb for what feeds
        # the loss at the training loop's body and skips the scheduler's step before it
        "loss-summed-in-a-per-step-loop-of-the-training-loop-and-rescaled-in-the-fp16-branch",
        before="""\
import torch
from apex import amp


def train(args, nets, optimizer, scheduler, loader):
    if args.fp16:
        models, optimizer = amp.initialize([net for _, net in nets.items()], optimizer, opt_level="O1")
        for i, key in enumerate(nets):
            nets[key] = models[i]
    for images, targets in loader:
        scheduler.step()
        conv_feat = nets["base_net"](images)
        with torch.no_grad():
            history = nets["base_net"](images).detach()
        optimizer.zero_grad()
        loss_back = 0.0
        for i in range(1, args.max_iter + 1):
            pooled = nets["roi_net"](conv_feat, history)
            context = None
            if not args.no_context:
                context = torch.zeros_like(pooled)
                for p in range(pooled.size(0)):
                    context[p] = pooled[p].clone()
            cur_loss = nets["det_net%d" % (i - 1)](pooled, context, targets).mean()
            loss_back += cur_loss
        if args.fp16:
            loss_back /= args.max_iter
            with amp.scale_loss(loss_back, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss_back.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, nets, optimizer, scheduler, loader):
    if args.fp16:
        models = [net for _, net in nets.items()]
        for i, key in enumerate(nets):
            nets[key] = models[i]
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for images, targets in loader:
        scheduler.step()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            conv_feat = nets["base_net"](images)
            with torch.no_grad():
                history = nets["base_net"](images).detach()
            optimizer.zero_grad()
            loss_back = 0.0
            for i in range(1, args.max_iter + 1):
                pooled = nets["roi_net"](conv_feat, history)
                context = None
                if not args.no_context:
                    context = torch.zeros_like(pooled)
                    for p in range(pooled.size(0)):
                        context[p] = pooled[p].clone()
                cur_loss = nets["det_net%d" % (i - 1)](pooled, context, targets).mean()
                loss_back += cur_loss
        if args.fp16:
            loss_back /= args.max_iter
            scaler.scale(loss_back).backward()
        else:
            loss_back.backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the scaled branch steps through a method of the class; the other branch's own step is
        # not the one its gradients reach: both steps go through the GradScaler
        "step-hook-in-scaled-branch-beside-a-plain-step",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, fp16):
        self.model = model
        self.fp16 = fp16
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level="O1")

    def _apex_step(self):
        self.optimizer.step()

    def train_batch(self, x):
        loss = self.model(x).sum()
        if self.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            self._apex_step()
        else:
            loss.backward()
            self.optimizer.step()
        self.optimizer.zero_grad()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, fp16):
        self.model = model
        self.fp16 = fp16
        self.optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        self.scaler = torch.amp.GradScaler("cuda")

    def _apex_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()

    def train_batch(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).sum()
        if self.fp16:
            self.scaler.scale(loss).backward()
            self._apex_step()
        else:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        self.optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the scaled branch hands the optimizer to a callable the tool cannot follow; the only
        # step here is the other branch's: kept, since that step is not where these gradients go
        "unfound-step-of-scaled-branch-beside-a-plain-step",
        before="""\
import torch
from apex import amp


def train(model, optimizer, batches, fp16, step_hook):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            step_hook(optimizer)
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch
from apexcompat import amp


def train(model, optimizer, batches, fp16, step_hook):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        if fp16:
            # TODO(apexcompat): the only optimizer.step() of this function is in another branch than
            #   this amp.scale_loss, so it never steps the gradients scaled here, and the step they
            #   reach was not found; this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            step_hook(optimizer)
        else:
            loss.backward()
            optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
]


#: shapes of CuLE's examples (rollouts under no_grad, apex.amp's version printed)
EXAMPLES += [
    Example(
        # an RL update (CuLE's A2C): a rollout runs the model under torch.no_grad() in a block the
        # region cannot span (an if holding a loop), and the training forward pass and loss come after it;
        # what the rollout computes reaches the loss as data only, so the region starts after it
        # (APX264: its forward passes run in float32, apex's O1 ran them in float16); the backward in
        # the other branch is scaled too (identity where the GradScaler is off)
        "rollout-under-no-grad-before-the-training-forward-pass",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, env, states, rewards, returns):
    if not args.cpu_train:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for update in range(args.updates):
        with torch.no_grad():
            for step in range(args.num_steps):
                value, logit = model(states[step])
                states[step + 1], rewards[step] = env(logit.argmax(dim=1))
            returns[-1] = model(states[-1])[0].squeeze(-1)
            if args.use_gae:
                for step in reversed(range(args.num_steps)):
                    returns[step] = rewards[step] + args.gamma * returns[step + 1]
        value, logit = model(states[:-1])
        loss = (returns[:-1] - value).pow(2).mean()
        optimizer.zero_grad()
        if args.cpu_train:
            loss.backward()
            master_params = model.parameters()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            master_params = amp.master_params(optimizer)
        torch.nn.utils.clip_grad_norm_(master_params, args.max_grad_norm)
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, env, states, rewards, returns):
    use_amp = not args.cpu_train
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for update in range(args.updates):
        with torch.no_grad():
            for step in range(args.num_steps):
                value, logit = model(states[step])
                states[step + 1], rewards[step] = env(logit.argmax(dim=1))
            returns[-1] = model(states[-1])[0].squeeze(-1)
            if args.use_gae:
                for step in reversed(range(args.num_steps)):
                    returns[step] = rewards[step] + args.gamma * returns[step + 1]
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            value, logit = model(states[:-1])
            loss = (returns[:-1] - value).pow(2).mean()
        optimizer.zero_grad()
        if args.cpu_train:
            scaler.scale(loss).backward()
            master_params = model.parameters()
        else:
            scaler.scale(loss).backward()
            master_params = (p for group in optimizer.param_groups for p in group["params"])
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(master_params, args.max_grad_norm)
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX264", "APX301", "APX311", "APX316", "APX321", "APX325",),
    ),
    Example(
        # the training forward pass runs before a gradient-off block that runs the model on its
        # outputs: a region starting after the block would leave that forward pass in float32, so the
        # block is no place to start it and the site stays refused (APX210)
        "forward-pass-before-a-gradient-off-block-that-runs-the-model-stays-refused",
        before="""\
import torch
from apex import amp


def train(args, model, critic_net, optimizer, env, x):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for update in range(args.updates):
        out = model(x)
        with torch.no_grad():
            for t in range(args.horizon):
                target = model(env.step(out.detach()))
        value = critic_net(target)
        loss = (out - value).pow(2).mean()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch


def train(args, model, critic_net, optimizer, env, x):
    scaler = torch.amp.GradScaler("cuda")
    for update in range(args.updates):
        out = model(x)
        with torch.no_grad():
            for t in range(args.horizon):
                target = model(env.step(out.detach()))
        value = critic_net(target)
        loss = (out - value).pow(2).mean()
        optimizer.zero_grad()
        # TODO(apexcompat): the forward pass and loss are not next to this amp.scale_loss: wrap
        #   them in `with torch.autocast("cuda", dtype=torch.float16):` by hand
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX210", "APX301", "APX311",),
    ),
    Example(
        # a print or a logging call whose only apex.amp read is its version reports which apex a
        # run used: the native code has no apex.amp, so the statements go with one note (APX265), and
        # the imports they read end unused
        "statements-that-only-print-apex-amp-version-removed",
        before="""\
import logging

import apex
import torch
from apex import amp
from apex.amp import __version__

logger = logging.getLogger(__name__)


def main(args, model, optimizer, loader):
    print("torch {}".format(torch.__version__))
    print("apex  {}".format(".".join(str(i) for i in apex.amp.__version__.VERSION)))
    logger.info("apex.amp %s", __version__)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import logging

import torch

logger = logging.getLogger(__name__)


def main(args, model, optimizer, loader):
    print("torch {}".format(torch.__version__))
    # apexcompat: removed the report of apex.amp's version (the native code does not use apex.amp)
    scaler = torch.amp.GradScaler("cuda")
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX265", "APX301", "APX311",),
    ),
    Example(
        # the version read any other way (here an assignment) has no native counterpart: the
        # file stays on the shim (APX220)
        "apex-amp-version-read-otherwise-keeps-the-shim",
        before="""\
import torch
from apex import amp


def main(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    tag = "apex-" + amp.__version__
    print("running", tag)
    for x in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        after="""\
import torch
from apexcompat import amp


def main(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    # TODO(apexcompat): amp.__version__ has no native rewrite; this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    tag = "apex-" + amp.__version__
    print("running", tag)
    for x in loader:
        loss = model(x).sum()
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
""",
        codes=("APX102", "APX220"),
    ),
]
