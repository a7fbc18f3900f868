"""Repository examples of the returning route received at a script's top level: a setup
helper of a package initializes apex and returns model and optimizer to a script that trains at
its module level, with no function and no ``__main__`` guard (LightningDOT's ``train_itm.py``
calling ``setup_for_distributed_mode``).  Appended to ``REPOSITORY_EXAMPLES``."""

from __future__ import annotations

from typing import List

from .base import Example

#: the setup helper: an inference initialize under ``if optimizer is None:``, a training one else
SETUP_HELPER = """\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def setup(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apex import amp

        if optimizer is None:
            model = amp.initialize(model, optimizer, opt_level=level)
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    return model, optimizer
"""

#: the script: one top-level statement unpacks what the helper returns, then the loop scales
SCRIPT_TRAINING = """\
# file: train.py
import argparse

import torch

from kit.setup import setup

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = setup(model, optimizer, "cuda", args.fp16)

for step in range(10):
    x, y = torch.randn(8, 16).cuda(), torch.randint(0, 2, (8,)).cuda()
    loss = torch.nn.functional.cross_entropy(model(x), y)
    if args.fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""

MODULE_RECEIVER_EXAMPLES: List[Example] = [
    Example(
        # the helper returns the GradScaler as one more value and the script's own top-level
        # statement unpacks it into a module-level name, which the loop after it scales and
        # steps through; under `if optimizer is None:` apex returned the model alone (an
        # inference initialize: no tuple is built there, APX206), session 30
        "model-factory-returns-the-scaler-to-a-script-at-its-top-level",
        before=SETUP_HELPER + SCRIPT_TRAINING,
        after="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def setup(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        if optimizer is None:
            # TODO(apexcompat): inference without optimizers: wrap the forward pass in `with
            #   torch.autocast("cuda", dtype=torch.float16):` for mixed precision
            pass
    use_amp = bool(fp16 and optimizer is not None and level != "O0")
    scaler = torch.amp.GradScaler(torch.device(device).type, enabled=use_amp)
    return model, optimizer, scaler
# file: train.py
import argparse

import torch

from kit.setup import setup

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
args = parser.parse_args()

model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer, scaler = setup(model, optimizer, "cuda", args.fp16)

for step in range(10):
    x, y = torch.randn(8, 16).cuda(), torch.randint(0, 2, (8,)).cuda()
    with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
        loss = torch.nn.functional.cross_entropy(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX202", "APX206", "APX209", "APX244", "APX301", "APX311", "APX316"),
    ),
    Example(
        # ... but the script calls the helper inside an `if` of its top level: the unpacking is
        # not one of the module's own statements, so the helper and the script keep apex.amp
        "model-factory-called-under-an-if-of-a-script-keeps-the-shim",
        before="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def setup(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apex import amp

        if optimizer is None:
            model = amp.initialize(model, optimizer, opt_level=level)
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    return model, optimizer
# file: train.py
import argparse

import torch

from kit.setup import setup

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--train", action="store_true")
args = parser.parse_args()

model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.train:
    model, optimizer = setup(model, optimizer, "cuda", args.fp16)

    for step in range(10):
        x, y = torch.randn(8, 16).cuda(), torch.randint(0, 2, (8,)).cuda()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if args.fp16:
            from apex import amp

            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        after="""\
# file: kit/__init__.py
# file: kit/setup.py
import torch


def setup(model, optimizer, device, fp16=False, level="O1"):
    model.to(device)
    if fp16:
        from apexcompat import amp

        if optimizer is None:
            model = amp.initialize(model, optimizer, opt_level=level)
        else:
            # TODO(apexcompat): the GradScaler plan across files was dropped: in train.py, what
            #   setup() returns is not unpacked into names by one statement of the module's top
            #   level, so the GradScaler it would return cannot be unpacked with it; this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            model, optimizer = amp.initialize(model, optimizer, opt_level=level)
    return model, optimizer
# file: train.py
import argparse

import torch

from kit.setup import setup

parser = argparse.ArgumentParser()
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--train", action="store_true")
args = parser.parse_args()

model = torch.nn.Linear(16, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
if args.train:
    model, optimizer = setup(model, optimizer, "cuda", args.fp16)

    for step in range(10):
        x, y = torch.randn(8, 16).cuda(), torch.randint(0, 2, (8,)).cuda()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        if args.fp16:
            from apexcompat import amp

            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (the GradScaler plan across files was dropped: in train.py, what
            #   setup() returns is not unpacked into names by one statement of the module's top
            #   level, so the GradScaler it would return cannot be unpacked with it); this file
            #   keeps apex.amp semantics through apexcompat.amp, migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
""",
        codes=("APX102", "APX220"),
    ),
]
