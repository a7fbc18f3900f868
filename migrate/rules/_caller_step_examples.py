"""Repository examples of the caller-step route (``caller_step_plan``,
``rules/_amp_caller_steps``): a backward helper of one file whose launchers in other files step
after each call.  Appended to ``REPOSITORY_EXAMPLES``."""

from __future__ import annotations

from typing import List

from .base import Example

CALLER_STEP_EXAMPLES: List[Example] = [
    # a backward helper of another file scales the loss its launcher hands it, and the launcher steps right
    # after the call (understanding-fast-adv's utils.backward): the helper takes the GradScaler, its plain
    # branch scales through it too (a disabled one is the identity), the launcher's forward pass gets
    # autocast and its step goes through the scaler (before: the shim, 'opt.step() is not in the same
    # function as amp.scale_loss'), session 29
    Example(
        "backward-helper-of-another-file-stepped-by-its-launcher",
        before="""\
# file: train.py
import torch
import apex.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        opt.step()
# file: utils.py
import apex.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
""",
        after="""\
# file: train.py
import torch

import utils


def main(model, opt, batches, half_prec):
    use_amp = bool(half_prec)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec, scaler=scaler)
        scaler.step(opt)
        scaler.update()
# file: utils.py
def backward(loss, opt, half_prec, scaler):
    scaler.scale(loss).backward()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX301', 'APX311', 'APX316'),
    ),
    # ... and with the step at an accumulation boundary right after the call, after a gradient clip:
    # scaler.unscale_ before the clip (APX272), the growth pace of the scale warned (APX314)
    Example(
        "backward-helper-of-another-file-stepped-at-an-accumulation-boundary-after-a-clip",
        before="""\
# file: train.py
import torch
from apex import amp

from helpers import backward


def train(model, optimizer, loader, accumulate, max_norm):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = model(x, y) / accumulate
        backward(loss, optimizer)
        if (i + 1) % accumulate == 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            optimizer.step()
            optimizer.zero_grad()
# file: helpers.py
from apex import amp


def backward(loss, optimizer):
    '''Back the loss through the loss scaler.'''
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
""",
        after="""\
# file: train.py
import torch

from helpers import backward


def train(model, optimizer, loader, accumulate, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x, y) / accumulate
        backward(loss, optimizer, scaler=scaler)
        if (i + 1) % accumulate == 0:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
# file: helpers.py
def backward(loss, optimizer, scaler):
    '''Back the loss through the loss scaler.'''
    scaler.scale(loss).backward()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX272', 'APX301', 'APX311', 'APX314'),
    ),
    # ... beside the launcher's own amp.scale_loss for an input gradient (FGSM) before it, in the same
    # loop: the helper call is no plain backward of a tensor (it was rewritten as scaler.scale(utils)),
    # and the unscale_ the clipping rule puts before the clip is kept once
    Example(
        "backward-helper-of-another-file-beside-the-launchers-own-input-gradient-backward",
        before="""\
# file: train.py
import torch
import apex.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        delta = torch.zeros_like(x, requires_grad=True)
        loss = torch.nn.functional.cross_entropy(model(x + delta), y)
        if half_prec:
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        x = x + 0.1 * torch.sign(delta.grad.detach())
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
# file: utils.py
import apex.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
""",
        after="""\
# file: train.py
import torch

import utils


def main(model, opt, batches, half_prec):
    use_amp = bool(half_prec)
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    for x, y in batches:
        delta = torch.zeros_like(x, requires_grad=True)
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x + delta), y)
        if half_prec:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        x = x + 0.1 * torch.sign(delta.grad.detach())
        with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec, scaler=scaler)
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
# file: utils.py
def backward(loss, opt, half_prec, scaler):
    scaler.scale(loss).backward()
""",
        codes=('APX101', 'APX201', 'APX209', 'APX213', 'APX214', 'APX268', 'APX301', 'APX311', 'APX316', 'APX325'),
    ),
    # ... and not for a helper that steps itself (its own route: the loss handed in is computed by the
    # launcher, whose forward pass no autocast placed in the helper would cover)
    Example(
        "backward-helper-of-another-file-that-steps-itself-is-no-caller-step-helper",
        before="""\
# file: train.py
import torch
import apex.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
# file: utils.py
import apex.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    opt.step()
""",
        after="""\
# file: train.py
import torch
import apexcompat.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        # TODO(apexcompat): the GradScaler plan across files was dropped: in utils.py, the
        #   forward pass and loss are not next to this amp.scale_loss: wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand; this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
# file: utils.py
import apexcompat.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in utils.py, the
        #   forward pass and loss are not next to this amp.scale_loss: wrap them in `with
        #   torch.autocast("cuda", dtype=torch.float16):` by hand); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    opt.step()
""",
        codes=('APX102', 'APX220'),
    ),
    # ... refused where the launcher reads the gradients between the call and the step (a GradScaler
    # keeps them scaled there; apex had unscaled them)
    Example(
        "backward-helper-of-another-file-refused-where-the-gradients-are-read-before-the-step",
        before="""\
# file: train.py
import torch
import apex.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        print(float(model.weight.grad.norm()))
        opt.step()
# file: utils.py
import apex.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
""",
        after="""\
# file: train.py
import torch
import apexcompat.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        # TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, the
        #   GradScaler could reach backward() of another file, which scales the loss this call
        #   hands it, but utils.backward(loss, opt, half_prec) is followed by
        #   `print(float(model.weight.grad.norm()))` before opt.step(): it may read the
        #   gradients or back another loss, which apex had unscaled and a GradScaler keeps
        #   scaled until the step (the tool proves the step right after the call, or after
        #   gradient clips only); this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        print(float(model.weight.grad.norm()))
        opt.step()
# file: utils.py
import apexcompat.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in train.py, the
        #   GradScaler could reach backward() of another file, which scales the loss this call
        #   hands it, but utils.backward(loss, opt, half_prec) is followed by
        #   `print(float(model.weight.grad.norm()))` before opt.step(): it may read the
        #   gradients or back another loss, which apex had unscaled and a GradScaler keeps
        #   scaled until the step (the tool proves the step right after the call, or after
        #   gradient clips only)); this file keeps apex.amp semantics through apexcompat.amp,
        #   migrate it by hand
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
""",
        codes=('APX102', 'APX220'),
    ),
    # ... and where a read of the gradients follows the accumulation boundary's `if` (on the iterations
    # that do not step, a GradScaler keeps them scaled, where apex had unscaled them at every backward)
    Example(
        "backward-helper-of-another-file-refused-where-the-gradients-are-read-after-the-boundary",
        before="""\
# file: train.py
import torch
from apex import amp

from helpers import backward


def train(model, optimizer, loader, accumulate):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = model(x, y) / accumulate
        backward(loss, optimizer)
        if (i + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
        print(float(model.weight.grad.norm()))
# file: helpers.py
from apex import amp


def backward(loss, optimizer):
    '''Back the loss through the loss scaler.'''
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
""",
        after="""\
# file: train.py
import torch
from apexcompat import amp

from helpers import backward


def train(model, optimizer, loader, accumulate):
    # TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, the
    #   GradScaler could reach backward() of another file, which scales the loss this call
    #   hands it, but backward(loss, optimizer) is followed by its step only inside the `if`
    #   after it, and `print(float(model.weight.grad.norm()))` after that `if` may use the
    #   gradients, which on the iterations that do not step a GradScaler keeps scaled (apex
    #   had unscaled them at every backward); this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = model(x, y) / accumulate
        backward(loss, optimizer)
        if (i + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
        print(float(model.weight.grad.norm()))
# file: helpers.py
from apexcompat import amp


def backward(loss, optimizer):
    '''Back the loss through the loss scaler.'''
    # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
    #   amp.scale_loss (the GradScaler plan across files was dropped: in train.py, the
    #   GradScaler could reach backward() of another file, which scales the loss this call
    #   hands it, but backward(loss, optimizer) is followed by its step only inside the `if`
    #   after it, and `print(float(model.weight.grad.norm()))` after that `if` may use the
    #   gradients, which on the iterations that do not step a GradScaler keeps scaled (apex
    #   had unscaled them at every backward)); this file keeps apex.amp semantics through
    #   apexcompat.amp, migrate it by hand
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
""",
        codes=('APX102', 'APX220'),
    ),
    # ... and where the helper reads the gradients after its backward, before its callers step
    Example(
        "backward-helper-of-another-file-refused-where-it-does-more-than-the-backward",
        before="""\
# file: train.py
import torch
import apex.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        opt.step()
# file: utils.py
import apex.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    print(sum(float(p.grad.norm()) for group in opt.param_groups for p in group["params"]))
""",
        after="""\
# file: train.py
import torch
import apexcompat.amp as amp

import utils


def main(model, opt, batches, half_prec):
    if half_prec:
        # TODO(apexcompat): the GradScaler plan across files was dropped: in utils.py, the
        #   GradScaler could reach backward() of this file, which scales the loss each call in
        #   train.py hands it, but backward() does more than that backward (the tool follows its
        #   callers' steps only for a helper whose body is `with amp.scale_loss(...)` alone or
        #   under `if <switch>:` with `else: <loss>.backward()`); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        model, opt = amp.initialize(model, opt, opt_level="O1")
    for x, y in batches:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        utils.backward(loss, opt, half_prec)
        opt.step()
# file: utils.py
import apexcompat.amp as amp


def backward(loss, opt, half_prec):
    if half_prec:
        # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
        #   amp.scale_loss (the GradScaler plan across files was dropped: in utils.py, the
        #   GradScaler could reach backward() of this file, which scales the loss each call in
        #   train.py hands it, but backward() does more than that backward (the tool follows its
        #   callers' steps only for a helper whose body is `with amp.scale_loss(...)` alone or
        #   under `if <switch>:` with `else: <loss>.backward()`)); this file keeps apex.amp
        #   semantics through apexcompat.amp, migrate it by hand
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    print(sum(float(p.grad.norm()) for group in opt.param_groups for p in group["params"]))
""",
        codes=('APX102', 'APX220'),
    ),
]
