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
        if args.fp16:
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
        if not args.fp16:
            scaler.scale(loss).backward()
        else:
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
        # another optimizer is stepped plainly in the function: the tool cannot tell which gradients
        # the plain backward reaches, and scaled gradients handed to that step would be wrong, so it is
        # kept as it was
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
        codes=("APX101", "APX201", "APX202", "APX209", "APX301", "APX311"),
    ),

]
