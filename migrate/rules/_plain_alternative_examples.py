"""Rule examples of a plain backward in the other branch of the ``if`` that scales the loss
(``_plain_alternative``): scaled through the GradScaler unless that branch runs only with it
off, a gradient reader after it unscaled first, kept plain beside an optimizer stepped plainly."""

from __future__ import annotations

from typing import List

from .base import Example

ALTERNATIVE_EXAMPLES: List[Example] = [
    Example(
        # the repro: the GradScaler is switched by the opt level, the loss scaled only if args.fp16; the plain
        # backward of the else would reach scaler.step unscaled where the opt level is on (its gradients
        # divided by the loss scale): it goes through the GradScaler too (disabled, scale is the identity)
        "plain-backward-in-the-other-branch-of-the-scaling-if-is-scaled",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the initialize under `if args.amp:`, the plain backward under `if not args.fp16:` before the
        # scaled one: args.fp16 is not the GradScaler's switch, so the plain branch may run with it on
        "plain-backward-in-the-body-of-an-if-that-scales-in-its-else-is-scaled",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if args.amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).mean()
        if not args.fp16:
            loss.backward()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = bool(args.amp)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # initialize and scaling under the same test: the else runs only with the GradScaler off, no
        # scale is added
        "plain-backward-where-the-scaling-test-is-the-switch-stays-plain",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()

""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
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
        # the same with the plain backward first, under `if not args.fp16:`: the GradScaler is off there
        "plain-backward-under-the-negated-switch-stays-plain",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).mean()
        if not args.fp16:
            loss.backward()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = bool(args.fp16)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if not args.fp16:
            loss.backward()
        else:
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # a clip after the plain backward of the else: that backward is scaled now, so the clip gets
        # scaler.unscale_(optimizer) before it, as the scaled branch's does (the step follows once, after the if)
        "clip-after-the-plain-backward-of-the-other-branch-unscales-first",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.clip)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.fp16:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in group["params"]), args.clip)
        else:
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX255", "APX301", "APX311", "APX316", "APX321"),
    ),
    Example(
        # both branches read the same once the plain one is scaled, and the test only reads values
        # (an attribute, `and`, torch.cuda.is_available()): the body is written once, without the if
        # (the spaces ending the if line aside, DLE's MaskRCNN trainer)
        "identical-branches-under-a-test-that-only-reads-values-are-written-once",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        # backward
        if args.fp16 and torch.cuda.is_available():\x20\x20
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        # backward
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX255", "APX301", "APX311", "APX316", "APX325"),
    ),
    Example(
        # the same branches under a test that calls a method (it may count, log, draw a number): the
        # if stays, and so does one whose else line carries a comment
        "identical-branches-under-a-call-or-with-a-comment-keep-the-if",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        if args.use_fp16():
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:  # full precision
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.use_fp16():
            scaler.scale(loss).backward()
        else:
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.fp16:
            scaler.scale(loss).backward()
        else:  # full precision
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # vid2vid, Cream-CDARTS: the scaling branch imports amp itself; the import is removed last (the
        # imports rule), so when the scale-loss rule compared the branches they still differed by it: the
        # imports rule compares them again without it, and the if is written once. Under a test that calls
        # a method the if stays, as without an import
        "identical-branches-once-the-branch-import-of-amp-is-removed-are-written-once",
        before="""\
import torch
from apex import amp


def train(opt, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt.opt_level)
    for x in loader:
        loss = model(x).mean()
        if opt.fp16:
            from apex import amp
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        loss = model(x).mean()
        if opt.use_fp16():
            from apex import amp
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(opt, model, optimizer, loader):
    use_amp = opt.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if opt.use_fp16():
            scaler.scale(loss).backward()
        else:
            scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # GroupViT's and RepVGG's accumulation branch: a norm of the gradients after the plain backward
        # of the else, the step only at the accumulation boundary: scaler.unscale_ cannot run once per
        # micro-batch, so the backward stays plain, with a warning (APX256): right only where the else
        # runs with the GradScaler off (here a test in another function than the initialize's). The
        # branch without accumulation scales its plain backward, with unscale_ before the norm; the
        # outer accumulation test is no scaling if of either (one warning, none for the second)
        "plain-backward-with-a-gradient-use-before-a-boundary-step-stays-plain-with-a-warning",
        before="""\
import torch
from apex import amp


def train(cfg, model, optimizer, loader):
    if cfg.level != "O0":
        model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.level)
    run_epoch(cfg, model, optimizer, loader)


def run_epoch(config, model, optimizer, loader):
    for i, x in enumerate(loader):
        loss = model(x).mean()
        if config.accumulation > 1:
            loss = loss / config.accumulation
            if config.level != "O0":
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if (i + 1) % config.accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
        else:
            optimizer.zero_grad()
            if config.level != "O0":
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
""",
        after="""\
import torch


def train(cfg, model, optimizer, loader):
    use_amp = cfg.level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    run_epoch(cfg, model, optimizer, loader, scaler)


def run_epoch(config, model, optimizer, loader, scaler):
    for i, x in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = model(x).mean()
        if config.accumulation > 1:
            loss = loss / config.accumulation
            if config.level != "O0":
                scaler.scale(loss).backward()
            else:
                loss.backward()
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            if (i + 1) % config.accumulation == 0:
                scaler.step(optimizer)
                scaler.update()
                optimizer.zero_grad()
        else:
            optimizer.zero_grad()
            if config.level != "O0":
                scaler.scale(loss).backward()
            else:
                scaler.scale(loss).backward()
                scaler.unscale_(optimizer)
                norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(optimizer)
            scaler.update()
""",
        codes=(
            "APX101", "APX201", "APX202", "APX207", "APX209", "APX255", "APX256", "APX301", "APX311", "APX314", "APX316"
        ),
    ),
    Example(
        # each branch steps on its own: the plain branch's step goes through the GradScaler as well, its
        # backward is scaled, so both branches read the same and are written once
        "branches-that-each-step-are-written-once-once-both-scale",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        if args.plain:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        else:
            optimizer.zero_grad()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        optimizer.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX316"),
    ),
    Example(
        # the plain branch steps its optimizers in a loop of its own (TransCoder's trainer): no step
        # through the GradScaler follows it (the scaled branch's is not on its path), so it stays plain,
        # with no warning
        "plain-branch-that-steps-on-its-own-path-stays-plain",
        before="""\
import torch
from apex import amp


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        if args.plain:
            loss.backward()
            for opt in [optimizer]:
                opt.step()
        else:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.plain:
            loss.backward()
            for opt in [optimizer]:
                opt.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),
    Example(
        # another optimizer is stepped plainly in the function: the tool cannot tell which gradients
        # the plain backward reaches, and scaled gradients handed to that step would be wrong, so it is
        # kept as it was, with a warning (APX256): right only where the else runs with the GradScaler off
        "plain-backward-beside-a-plainly-stepped-optimizer-stays-plain",
        before="""\
import torch
from apex import amp


def train(args, model, critic, optimizer, critic_optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        critic_loss = critic(x.detach()).mean()
        critic_loss.backward()
        critic_optimizer.step()
        critic_optimizer.zero_grad()
""",
        after="""\
import torch


def train(args, model, critic, optimizer, critic_optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        critic_loss = critic(x.detach()).mean()
        critic_loss.backward()
        critic_optimizer.step()
        critic_optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX256", "APX301", "APX311"),
    ),
    Example(
        # steps that update no other optimizer's parameters do not keep the plain backward plain
        # (_stepped_objects): DLE-BERT's gradient clipper, a plain class of the file built from a
        # constant and handed only the scaled optimizer's parameters, and BiSeNet's lr scheduler bound
        # under a name that does not say so (its class's does). The else is scaled; both branches then
        # read the same and the if is written once
        "steps-of-a-clipper-and-a-scheduler-do-not-keep-the-plain-backward-plain",
        before="""\
import torch
from apex import amp
from .lr import WarmupPolyLrScheduler


class GradientClipper:
    def __init__(self, max_grad_norm):
        self.max_norm = max_grad_norm

    def step(self, parameters):
        torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    clipper = GradientClipper(max_grad_norm=1.0)
    lr_schdr = WarmupPolyLrScheduler(optimizer, power=0.9, max_iter=len(loader))
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        clipper.step(amp.master_params(optimizer))
        optimizer.step()
        optimizer.zero_grad()
        lr_schdr.step()
""",
        after="""\
import torch
from .lr import WarmupPolyLrScheduler


class GradientClipper:
    def __init__(self, max_grad_norm):
        self.max_norm = max_grad_norm

    def step(self, parameters):
        torch.nn.utils.clip_grad_norm_(parameters, self.max_norm)


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    clipper = GradientClipper(max_grad_norm=1.0)
    lr_schdr = WarmupPolyLrScheduler(optimizer, power=0.9, max_iter=len(loader))
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        clipper.step((p for group in optimizer.param_groups for p in group["params"]))
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        lr_schdr.step()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311", "APX316", "APX321"),
    ),
    Example(
        # a plain class of the file whose object is built from the model: its step may update the
        # model's parameters (here it does), which scaled gradients could reach: the plain backward
        # stays plain, with the warning (APX256)
        "step-of-an-object-built-from-the-model-keeps-the-plain-backward-plain",
        before="""\
import torch
from apex import amp


class Averager:
    def __init__(self, model, decay):
        self.params = list(model.parameters())
        self.decay = decay

    def step(self):
        for p in self.params:
            p.data.mul_(self.decay)


def train(args, model, optimizer, loader):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    averager = Averager(model, 0.99)
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        averager.step()
""",
        after="""\
import torch


class Averager:
    def __init__(self, model, decay):
        self.params = list(model.parameters())
        self.decay = decay

    def step(self):
        for p in self.params:
            p.data.mul_(self.decay)


def train(args, model, optimizer, loader):
    use_amp = args.opt_level != "O0"
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    averager = Averager(model, 0.99)
    for x in loader:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = model(x).mean()
        if args.fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        averager.step()
""",
        codes=("APX101", "APX201", "APX202", "APX209", "APX256", "APX301", "APX311"),
    ),
]
