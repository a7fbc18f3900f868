"""Realistic apex.amp training scripts in the layouts real projects use, for the end-to-end
migration tests.  Each defines ``main(argv)`` that trains a small model on a fixed random
problem and returns ``{"params": [...], "losses": [...]}``; they pick CUDA when present."""

from __future__ import annotations

# initialize in main(), scale_loss in train(), opt level and switch from the command line
MAIN_AND_TRAIN = """\
import argparse

import torch
import torch.nn.functional as F
from apex import amp


def get_args(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=30)
    return parser.parse_args(argv)


def train(model, optimizer, batches, device):
    losses = []
    for x, y in batches:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        output = model(x)
        loss = F.mse_loss(output, y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main(argv):
    args = get_args(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    w = torch.randn(8, 4)
    batches = []
    for _ in range(args.steps):
        x = torch.randn(16, 8)
        batches.append((x, x @ w))
    losses = train(model, optimizer, batches, device)
    return {"params": [p.detach().float().cpu() for p in model.parameters()], "losses": losses}
"""

# a class-based trainer: initialize in __init__, the step in another method
CLASS_TRAINER = """\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level="O1"):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level, verbosity=0)

    def training_step(self, x, y):
        self.optimizer.zero_grad()
        logits = self.model(x)
        loss = torch.nn.functional.cross_entropy(logits, y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()


def main(argv):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(1)
    model = torch.nn.Linear(10, 3).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    trainer = Trainer(model, optimizer, opt_level=argv[0] if argv else "O1")
    x = torch.randn(64, 10, device=device)
    y = (x[:, 0] > 0).long() + (x[:, 1] > 0).long()
    losses = [trainer.training_step(x, y) for _ in range(25)]
    return {"params": [p.detach().float().cpu() for p in trainer.model.parameters()], "losses": losses}
"""

# a GAN: two models, two optimizers, two losses with loss_id
GAN = """\
import torch
import torch.nn as nn
from apex import amp


def main(argv):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(2)
    netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2)).to(device)
    netD = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    optG = torch.optim.Adam(netG.parameters(), lr=1e-3, betas=(0.5, 0.999))
    optD = torch.optim.Adam(netD.parameters(), lr=1e-3, betas=(0.5, 0.999))
    opt_level = argv[0] if argv else "O1"
    [netD, netG], [optD, optG] = amp.initialize(
        [netD, netG], [optD, optG], opt_level=opt_level, num_losses=2, verbosity=0
    )
    criterion = nn.BCEWithLogitsLoss()
    losses = []
    for step in range(30):
        real = torch.randn(32, 2, device=device) * 0.5 + 2.0
        noise = torch.randn(32, 4, device=device)
        ones = torch.ones(32, 1, device=device)
        zeros = torch.zeros(32, 1, device=device)
        # (1) discriminator
        optD.zero_grad()
        fake = netG(noise)
        errD = criterion(netD(real), ones) + criterion(netD(fake.detach()), zeros)
        with amp.scale_loss(errD, optD, loss_id=0) as errD_scaled:
            errD_scaled.backward()
        optD.step()
        # (2) generator
        optG.zero_grad()
        errG = criterion(netD(fake), ones)
        with amp.scale_loss(errG, optG, loss_id=1) as errG_scaled:
            errG_scaled.backward()
        optG.step()
        losses.append(errD.item())
    params = [p.detach().float().cpu() for p in list(netD.parameters()) + list(netG.parameters())]
    return {"params": params, "losses": losses}
"""

# gradient accumulation with delay_unscale
ACCUMULATION = """\
import torch
from apex import amp

ACCUMULATION_STEPS = 4


def main(argv):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(3)
    model = torch.nn.Linear(6, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=argv[0] if argv else "O1", verbosity=0)
    target_w = torch.randn(6, 1, device=device)
    losses = []
    for i in range(40):
        x = torch.randn(8, 6, device=device)
        loss = ((model(x) - x @ target_w) ** 2).mean() / ACCUMULATION_STEPS
        with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % ACCUMULATION_STEPS != 0) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % ACCUMULATION_STEPS == 0:
            optimizer.step()
            optimizer.zero_grad()
        losses.append(loss.item() * ACCUMULATION_STEPS)
    return {"params": [p.detach().float().cpu() for p in model.parameters()], "losses": losses}
"""

# clipping on master_params in an fp16/fp32 if-else, apex-format checkpoint save and resume
CLIP_AND_CHECKPOINT = """\
import argparse
import math

import torch

try:
    from apex import amp
except ImportError:
    amp = None


def parse(argv):
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--resume", default="")
    parser.add_argument("--save", default="")
    parser.add_argument("--steps", type=int, default=60)
    return parser.parse_args(argv)


def main(argv):
    args = parse(argv)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(4)
    model = torch.nn.Sequential(torch.nn.Linear(5, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.02)
    if args.fp16:
        if amp is None:
            raise ImportError("--fp16 needs apex")
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if args.fp16:
            amp.load_state_dict(checkpoint["amp"])
    data_gen = torch.Generator().manual_seed(5)
    losses = []
    for step in range(args.steps):
        x = torch.randn(16, 5, generator=data_gen).to(device)
        y = x[:, :2].sum(dim=1, keepdim=True)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        else:
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        if math.isnan(grad_norm):
            continue
        optimizer.step()
        losses.append(loss.item())
    if args.save:
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict()}
        if args.fp16:
            checkpoint["amp"] = amp.state_dict()
        torch.save(checkpoint, args.save)
    return {"params": [p.detach().float().cpu() for p in model.parameters()], "losses": losses}
"""

#: name -> (script, command line with opt level O1, the same with O0)
SCRIPTS = {
    "main_and_train": (MAIN_AND_TRAIN, ["--fp16", "--opt-level", "O1"], ["--fp16", "--opt-level", "O0"]),
    "class_trainer": (CLASS_TRAINER, ["O1"], ["O0"]),
    "gan_two_optimizers": (GAN, ["O1"], ["O0"]),
    "accumulation_delay_unscale": (ACCUMULATION, ["O1"], ["O0"]),
    "clip_and_checkpoint": (CLIP_AND_CHECKPOINT, ["--fp16"], ["--fp16", "--opt-level", "O0"]),
}
