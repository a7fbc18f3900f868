"""Examples of ``ApexFallbackRule``: a file that tries apex.amp first and holds its own
GradScaler path for where apex is missing (cryodrgn's ``abinit_*_old.py`` and ``abinit.py``)."""

from __future__ import annotations

from typing import List

from .base import Example

#: ``main()`` tries apex, its handler makes the GradScaler ``train()`` is given; ``train()``
#: scales through it where it was made and through apex elsewhere
TRIED_IN_MAIN = """\
import contextlib

import torch

try:
    import apex.amp as amp
except ImportError:
    pass


def train(model, optim, batch, use_amp=False, scaler=None):
    if scaler is not None:
        amp_mode = torch.cuda.amp.autocast()
    else:
        amp_mode = contextlib.nullcontext()
    with amp_mode:
        loss = model(batch).sum()
    if use_amp:
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optim)
            scaler.update()
        else:  # apex.amp mixed precision
            with amp.scale_loss(loss, optim) as scaled_loss:
                scaled_loss.backward()
            optim.step()
    else:
        loss.backward()
        optim.step()
    return loss.item()


def main(args, model, batches):
    optim = torch.optim.Adam(model.parameters())
    scaler = None
    if args.amp:
        # mixed precision with apex.amp
        try:
            model, optim = amp.initialize(model, optim, opt_level="O1")
        # mixed precision with pytorch (v1.6+)
        except:  # noqa: E722
            scaler = torch.cuda.amp.GradScaler()
    for batch in batches:
        train(model, optim, batch, use_amp=args.amp, scaler=scaler)
"""
TRIED_IN_MAIN_NATIVE = """\
import contextlib

import torch


def train(model, optim, batch, use_amp=False, scaler=None):
    if scaler is not None:
        amp_mode = torch.autocast("cuda")
    else:
        amp_mode = contextlib.nullcontext()
    with amp_mode:
        loss = model(batch).sum()
    if use_amp:
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()
    else:
        loss.backward()
        optim.step()
    return loss.item()


def main(args, model, batches):
    optim = torch.optim.Adam(model.parameters())
    scaler = None
    if args.amp:
        # mixed precision with pytorch (v1.6+)
        scaler = torch.amp.GradScaler("cuda")
    for batch in batches:
        train(model, optim, batch, use_amp=args.amp, scaler=scaler)
"""
#: ``amp.initialize(self.scaler)`` is given no model: with apex too, it raises and the handler runs
TRIED_ON_NONE = """\
import contextlib

import torch

try:
    import apex.amp as amp
except ImportError:
    pass


class Trainer:
    def __init__(self, model, optimizer, use_amp, logger):
        self.model, self.optimizer, self.logger = model, optimizer, logger
        self.scaler = None
        if use_amp:
            try:
                self.scaler = amp.initialize(self.scaler, opt_level="O1")
            except Exception:
                self.scaler = torch.cuda.amp.GradScaler()
                self.logger.info("mixed precision via torch.amp")
            else:
                self.logger.info("mixed precision via apex.amp")

    def step(self, batch):
        amp_mode = torch.cuda.amp.autocast() if self.scaler is not None else contextlib.nullcontext()
        with amp_mode:
            loss = self.model(batch).sum()
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
"""
TRIED_ON_NONE_NATIVE = """\
import contextlib

import torch


class Trainer:
    def __init__(self, model, optimizer, use_amp, logger):
        self.model, self.optimizer, self.logger = model, optimizer, logger
        self.scaler = None
        if use_amp:
            self.scaler = torch.amp.GradScaler("cuda")
            self.logger.info("mixed precision via torch.amp")

    def step(self, batch):
        amp_mode = torch.autocast("cuda") if self.scaler is not None else contextlib.nullcontext()
        with amp_mode:
            loss = self.model(batch).sum()
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
        else:
            loss.backward()
            self.optimizer.step()
"""
#: the forward pass under its own ``with autocast()`` where the scaler was made (cryodrgn's
#: ``train_vae.py``, ``train_nn.py``, ``train_dec.py``): a second GradScaler was made beside theirs
AUTOCAST_IN_THE_SCALERS_BRANCH = """\
import torch

try:
    import apex.amp as amp
except ImportError:
    pass


def train_step(model, optim, y, use_amp=False, scaler=None):
    optim.zero_grad()
    if scaler is not None:
        with torch.cuda.amp.autocast():
            loss = model(y).sum()
    else:
        loss = model(y).sum()
    if use_amp:
        if scaler is not None:
            scaler.scale(loss).backward()
            scaler.step(optim)
            scaler.update()
        else:
            with amp.scale_loss(loss, optim) as scaled_loss:
                scaled_loss.backward()
            optim.step()
    else:
        loss.backward()
        optim.step()


def main(args, model, optim, loader):
    scaler = None
    if args.amp:
        try:
            model, optim = amp.initialize(model, optim, opt_level="O1")
        except:  # noqa: E722
            scaler = torch.cuda.amp.GradScaler()
    for y in loader:
        train_step(model, optim, y, use_amp=args.amp, scaler=scaler)
"""
AUTOCAST_IN_THE_SCALERS_BRANCH_NATIVE = """\
import torch


def train_step(model, optim, y, use_amp=False, scaler=None):
    optim.zero_grad()
    if scaler is not None:
        with torch.autocast("cuda"):
            loss = model(y).sum()
    else:
        loss = model(y).sum()
    if use_amp:
        scaler.scale(loss).backward()
        scaler.step(optim)
        scaler.update()
    else:
        loss.backward()
        optim.step()


def main(args, model, optim, loader):
    scaler = None
    if args.amp:
        scaler = torch.amp.GradScaler("cuda")
    for y in loader:
        train_step(model, optim, y, use_amp=args.amp, scaler=scaler)
"""

FALLBACK_EXAMPLES: List[Example] = [
    Example(
        "apex-tried-first-gives-way-to-the-files-own-grad-scaler-path",
        TRIED_IN_MAIN,
        TRIED_IN_MAIN_NATIVE,
        ("APX101", "APX103", "APX284", "APX285", "APX901", "APX902"),
    ),
    Example(
        "initialize-given-no-model-in-a-try-gives-way-to-its-handler",
        TRIED_ON_NONE,
        TRIED_ON_NONE_NATIVE,
        ("APX101", "APX103", "APX284", "APX901", "APX902"),
    ),
    Example(
        "forward-autocast-under-the-scalers-own-test-kept-with-one-grad-scaler",
        AUTOCAST_IN_THE_SCALERS_BRANCH,
        AUTOCAST_IN_THE_SCALERS_BRANCH_NATIVE,
        ("APX101", "APX103", "APX284", "APX285", "APX901", "APX902"),
    ),
]
