"""The documented examples of backwards run for an input"s gradient (adversarial training,
``_input_gradient``, APX268) and of gradient reads before another backward (APX327).
tests/migrate/test_rule_examples.py runs them; ``ScaleLossRule`` carries them, and
``InitializeRule`` the refusals (``REFUSED``: the file keeps apex.amp, APX220)."""

from __future__ import annotations

from typing import List

from .base import Example


EXAMPLES: List[Example] = [
    # a PGD attack loop backs the loss for delta.grad only (read through torch.sign), then zero_grad and the
    # training step's own backward: both become scaler.scale(loss).backward(), the attack's with APX268
    Example(
        "pgd-attack-backward-before-the-training-step",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, opt, loader, epsilon, alpha, iters):
    model, opt = amp.initialize(model, opt, opt_level="O1")
    for X, y in loader:
        delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
        delta.requires_grad = True
        for _ in range(iters):
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
            grad = delta.grad.detach()
            delta.data = (delta + alpha * torch.sign(grad)).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        delta = delta.detach()
        output = model(X + delta)
        loss = F.cross_entropy(output, y)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
""",
        after="""\
import torch
import torch.nn.functional as F


def train(model, opt, loader, epsilon, alpha, iters):
    scaler = torch.amp.GradScaler("cuda")
    for X, y in loader:
        delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
        delta.requires_grad = True
        for _ in range(iters):
            with torch.autocast("cuda", dtype=torch.float16):
                output = model(X + delta)
                loss = F.cross_entropy(output, y)
            scaler.scale(loss).backward()
            grad = delta.grad.detach()
            delta.data = (delta + alpha * torch.sign(grad)).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        delta = delta.detach()
        with torch.autocast("cuda", dtype=torch.float16):
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX268", "APX301", "APX311"),
    ),
    # an attack helper of another file scales its loss when handed the optimizer and steps nothing: the
    # GradScaler is threaded to it, and the launcher's autocast region starts after the call (the helper's
    # backward is not put under the launcher's autocast)
    Example(
        "attack-helper-handed-the-optimizer",
        before="""\
# file: attacks.py
import torch
import torch.nn.functional as F
from apex import amp


def attack_pgd(model, X, y, epsilon, alpha, iters, opt=None):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(iters):
        output = model(X + delta)
        loss = F.cross_entropy(output, y)
        if opt is not None:
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        grad = delta.grad.detach()
        delta.data = (delta + alpha * torch.sign(grad)).clamp(-epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()
# file: train.py
import torch
import torch.nn.functional as F
from apex import amp

from attacks import attack_pgd


def main(loader, epsilon, alpha):
    model = torch.nn.Linear(8, 4).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = amp.initialize(model, opt, opt_level="O1")
    for X, y in loader:
        delta = attack_pgd(model, X, y, epsilon, alpha, 7, opt)
        loss = F.cross_entropy(model(X + delta), y)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
""",
        after="""\
# file: attacks.py
import torch
import torch.nn.functional as F


def attack_pgd(model, X, y, epsilon, alpha, iters, opt=None, *, scaler):
    delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
    delta.requires_grad = True
    for _ in range(iters):
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
        if opt is not None:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        grad = delta.grad.detach()
        delta.data = (delta + alpha * torch.sign(grad)).clamp(-epsilon, epsilon)
        delta.grad.zero_()
    return delta.detach()
# file: train.py
import torch
import torch.nn.functional as F

from attacks import attack_pgd


def main(loader, epsilon, alpha):
    model = torch.nn.Linear(8, 4).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    for X, y in loader:
        delta = attack_pgd(model, X, y, epsilon, alpha, 7, opt, scaler=scaler)
        with torch.autocast("cuda", dtype=torch.float16):
            loss = F.cross_entropy(model(X + delta), y)
        opt.zero_grad()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX213", "APX214", "APX268", "APX301", "APX311"),
    ),
    # the attack's parameter gradients reach the step without a zero_grad: scaler.step unscales their sum with
    # the scale they were made with; delta.grad.zero_() reads no optimizer's gradient, so no unscale_ goes
    # before the loop
    Example(
        "attack-loop-accumulating-into-the-step",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, opt, loader, epsilon, alpha, iters):
    model, opt = amp.initialize(model, opt, opt_level="O1")
    for X, y in loader:
        delta = torch.zeros_like(X, requires_grad=True)
        for _ in range(iters):
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
            delta.data = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        opt.step()
        opt.zero_grad()
""",
        after="""\
import torch
import torch.nn.functional as F


def train(model, opt, loader, epsilon, alpha, iters):
    scaler = torch.amp.GradScaler("cuda")
    for X, y in loader:
        delta = torch.zeros_like(X, requires_grad=True)
        for _ in range(iters):
            with torch.autocast("cuda", dtype=torch.float16):
                output = model(X + delta)
                loss = F.cross_entropy(output, y)
            scaler.scale(loss).backward()
            delta.data = (delta + alpha * delta.grad.sign()).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX268", "APX301", "APX311"),
    ),
    # refused: the attack reads the size of the scaled delta.grad, which follows the loss scale, and apex's
    # dynamic scale counted this backward while a GradScaler's does not
    Example(
        "attack-gradient-used-by-its-size",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, opt, loader, epsilon, alpha, iters):
    model, opt = amp.initialize(model, opt, opt_level="O1")
    for X, y in loader:
        delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
        delta.requires_grad = True
        for _ in range(iters):
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
            grad = delta.grad.detach()
            delta.data = (delta + alpha * grad / grad.abs().max()).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        delta = delta.detach()
        output = model(X + delta)
        loss = F.cross_entropy(output, y)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
""",
        after="""\
import torch
import torch.nn.functional as F
from apexcompat import amp


def train(model, opt, loader, epsilon, alpha, iters):
    model, opt = amp.initialize(model, opt, opt_level="O1")
    for X, y in loader:
        delta = torch.zeros_like(X).uniform_(-epsilon, epsilon)
        delta.requires_grad = True
        for _ in range(iters):
            output = model(X + delta)
            loss = F.cross_entropy(output, y)
            # TODO(apexcompat): the gradient of delta this amp.scale_loss backs is used beyond its
            #   sign (delta.data = (delta + alpha * grad / grad.abs().max()).clamp(-epsilon,
            #   epsilon)): it stays multiplied by the loss scale, and apex's dynamic scale counted
            #   this backward (no optimizer step follows it), a GradScaler's does not, so the two
            #   scales and the size it reads part ways; this file keeps apex.amp semantics through
            #   apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
            grad = delta.grad.detach()
            delta.data = (delta + alpha * grad / grad.abs().max()).clamp(-epsilon, epsilon)
            delta.grad.zero_()
        delta = delta.detach()
        output = model(X + delta)
        loss = F.cross_entropy(output, y)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
""",
        codes=("APX102", "APX220"),
    ),
    # a parameter gradient read after a backward whose gradients zero_grad drops before the step's own
    # backward: an unscale_ there would leave the later backward's gradients scaled at scaler.step, so a TODO
    # instead
    Example(
        "gradient-read-before-another-backward",
        before="""\
import torch
import torch.nn.functional as F
from apex import amp


def train(model, opt, loader, log):
    model, opt = amp.initialize(model, opt, opt_level="O1")
    for X, y in loader:
        probe = F.cross_entropy(model(X), y)
        with amp.scale_loss(probe, opt) as scaled_loss:
            scaled_loss.backward()
        log(model.weight.grad.norm())
        opt.zero_grad()
        loss = F.cross_entropy(model(X), y)
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
""",
        after="""\
import torch
import torch.nn.functional as F


def train(model, opt, loader, log):
    scaler = torch.amp.GradScaler("cuda")
    for X, y in loader:
        with torch.autocast("cuda", dtype=torch.float16):
            probe = F.cross_entropy(model(X), y)
        scaler.scale(probe).backward()
        with torch.autocast("cuda", dtype=torch.float16):
            # TODO(apexcompat): gradients used after the scaled backward: model.weight.grad read saw
            #   gradients apex had unscaled, but scaler keeps them scaled until scaler.step(opt),
            #   and another backward runs before that step, whose gradients an unscale_ here would
            #   leave scaled (scaler.step unscales once per step): divide what it reads by
            #   scaler.get_scale() by hand
            log(model.weight.grad.norm())
            opt.zero_grad()
            loss = F.cross_entropy(model(X), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX327"),
    ),
]

#: the refusals, documented with the initialize rule, whose APX220 they report
REFUSED: List[Example] = [example for example in EXAMPLES if "APX220" in example.codes]
EXAMPLES = [example for example in EXAMPLES if example not in REFUSED]
