"""Differential check of training-loop shapes: generated apex scripts, migrated, both trained.

Each seed picks one combination of the choices real apex loops make (the opt level; an fp16
switch around the initialize and the backward; gradients accumulated over micro-batches, with or
without ``delay_unscale``; a plain backward in the other branch; the parameters named in each
branch; a clip of ``amp.master_params``, of ``model.parameters()`` or of a name bound in the
branches, after every backward or at the step; a read of the gradients' norm; an lr scheduler; a
loss that overflows once; the loop in ``main``, in a function ``main`` calls or in a method of a
trainer class whose ``__init__`` initializes; ``zero_grad`` before the forward pass; a clip
inside the ``amp.scale_loss`` block; two scaled backwards per step; the scaled backward in a
helper the loop calls; amp's state saved at the end; and, added later and drawn after those: O3,
compared with its O1 twin (``reference``); a resume, in the run or by a second run loading
apex's checkpoint, whose final loss scale is compared too; two optimizers or two models in one
``amp.initialize``; ``num_losses=2`` with loss ids; ``amp.master_params`` handed to helpers; a
BatchNorm layer) and writes the script (``choose(seed, extended=False)``, ``--legacy``: the
earlier choices only). The whole set is migrated ``--to native`` in one run of the CLI, then the
originals run through the test-only ``fake_apex`` (``apexcompat.amp``) and the native outputs
with apex and apexcompat blocked and CUDA autocast/GradScaler simulated on the CPU
(``runner.py``). A shape passes when its output is native, runs, logs the same gradient norms
(where the original reads them) and ends with the same parameters as the original within ``REL``
(fp16 rounding), and a second migration changes nothing; or when the tool keeps it on
apexcompat.amp (the shim trains as apex did).

``python tests/migrate/e2e/shapes.py --seeds 200`` checks seeds 0..199 and prints each failing
seed with its script, its migration and the difference; tests/migrate/test_e2e_shapes.py runs
a fixed set in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

HERE = Path(__file__).resolve().parent
RUNNER = HERE / "runner.py"
FAKE_APEX = HERE / "fake_apex"
#: ||a - b|| / ||b|| allowed between the final parameters (fp16 autocast rounding on 8 steps)
REL = 2e-3
#: relative difference allowed between two logged gradient norms
NORM_REL = 1e-2
_SHIM_IMPORT = re.compile(r"^\s*(?:from apexcompat\b|import apexcompat\b)", re.MULTILINE)

HEAD = '''\
"""Generated shape {seed}: {summary}"""
import argparse

import torch
import torch.nn.functional as F
from apex import amp


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential({layers})


def make_data(steps):
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(16, 8, generator=generator), torch.randn(16, 4, generator=generator)) for _ in range(steps)]


def save_params(optimizers, path):
    if not isinstance(optimizers, (list, tuple)):
        optimizers = [optimizers]
    params = [p.detach().float().clone() for o in optimizers for group in o.param_groups for p in group["params"]]
    torch.save(params, path)
'''


@dataclass
class Shape:
    """One combination of the choices (see the module docstring)."""

    seed: int
    level: str = "O1"
    switch: bool = False
    accum: int = 1
    delay_unscale: bool = False
    backward: str = "scaled"  # scaled | branches | branches-params
    clip: str = "none"  # none | master | model | params | switched
    clip_at: str = "step"  # step | backward | block (inside the amp.scale_loss block)
    read_norm: str = "none"  # none | model | optimizer: whose gradients' norm is logged
    scheduler: bool = False
    overflow: bool = False
    in_function: bool = False
    save_amp: bool = False
    #: the loop body a method of a trainer class whose __init__ initializes (with in_function)
    in_class: bool = False
    zero_grad_first: bool = False  # optimizer.zero_grad() before the forward pass, not after the step
    two_backwards: bool = False  # two losses, each scaled and backed on its own, one step
    backward_helper: bool = False  # the scaled backward in a module-level helper the loop calls
    #: a GAN instead of the loop above: two models and optimizers, a discriminator step and a
    #: generator step, each with its own scale_loss (with loss ids when 2)
    gan_losses: int = 0
    #: none | again (train half the steps, save model, optimizer and amp state, build and
    #: initialize afresh, load the three and train on) | restart (``--half 1`` trains the first
    #: half and saves, ``--half 2`` is a second run that loads and trains the rest: the native
    #: second run loads the checkpoint apex's first run wrote).  The first half overflows once:
    #: the saved loss scale is not the initial one, and amp's state is saved at the end
    resume: str = "none"
    #: none | optimizers (``model, [optimizer, optimizer2] = amp.initialize(model, [...])``, the
    #: parameters split between them, one scale_loss for both) | models (``[body, head], optimizer``)
    several: str = "none"
    #: with two_backwards: ``num_losses=2`` and ``loss_id=0``/``1`` on the two scale_loss blocks
    loss_ids: bool = False
    #: ``amp.master_params(optimizer)`` handed to module-level helpers that clip / sum the norm
    master_helper: bool = False
    #: with master_helper, what the helpers are given: params (``amp.master_params(opt)``) or
    #: optimizer (the helper calls ``amp.master_params`` on it)
    helper_takes: str = "params"
    #: a BatchNorm1d layer in the model (O2 keeps it in float32)
    batchnorm: bool = False

    def summary(self) -> str:
        parts = [self.level, f"accum={self.accum}", f"backward={self.backward}", f"clip={self.clip}@{self.clip_at}"]
        if self.read_norm != "none":
            parts.append(f"norm of {self.read_norm}")
        flags = ("switch", "delay_unscale", "scheduler", "overflow", "in_function", "save_amp", "in_class",
                 "zero_grad_first", "two_backwards", "backward_helper", "loss_ids", "master_helper",
                 "batchnorm")
        if self.gan_losses:
            return f"GAN {self.level}, losses={self.gan_losses}, clip={self.clip}" + (", switch" if self.switch else "") + (
                ", in_function" if self.in_function else "") + (", save_amp" if self.save_amp else "")
        for flag in flags:
            if getattr(self, flag):
                parts.append(flag)
        if self.several != "none":
            parts.append(f"several {self.several}")
        if self.resume != "none":
            parts.append(f"resume {self.resume}")
        if self.master_helper and self.helper_takes != "params":
            parts.append(f"helpers take the {self.helper_takes}")
        return ", ".join(parts)


def choose(seed: int, extended: bool = True) -> Shape:
    """The shape of ``seed``; ``extended=False``: with the choices of session 26 only (the
    shapes the regression seeds of that time were)."""
    rng = random.Random(seed)
    shape = Shape(seed)
    shape.level = rng.choice(["O1", "O1", "O2"])
    shape.switch = rng.random() < 0.4
    shape.accum = rng.choice([1, 1, 2])
    shape.delay_unscale = shape.accum > 1 and rng.random() < 0.4
    shape.backward = rng.choice(["scaled", "scaled", "branches", "branches-params"])
    clips = ["none", "master", "model", "switched"] + (["params", "params"] if shape.backward == "branches-params" else [])
    shape.clip = rng.choice(clips)
    shape.clip_at = rng.choice(["step", "backward"]) if shape.accum > 1 else "step"
    # apex's O2 model is a float16 copy whose gradients stay scaled (the step reads the fp32
    # masters): a norm of the model's gradients there logs the scaled ones, which no native
    # rewrite reproduces (nor should)
    shape.read_norm = rng.choice(["none", "none", "optimizer"] + (["model"] if shape.level == "O1" else []))
    shape.scheduler = rng.random() < 0.3
    shape.overflow = rng.random() < 0.3
    shape.in_function = rng.random() < 0.5
    shape.save_amp = rng.random() < 0.3
    shape.in_class = shape.in_function and rng.random() < 0.5
    shape.zero_grad_first = shape.accum == 1 and rng.random() < 0.3
    shape.two_backwards = shape.backward == "scaled" and not shape.delay_unscale and rng.random() < 0.25
    if shape.clip in ("master", "model") and shape.backward == "scaled" and rng.random() < 0.25:
        shape.clip_at = "block"  # inside the amp.scale_loss block, after the backward
    plain = shape.backward == "scaled" and not (shape.delay_unscale or shape.two_backwards or shape.clip_at == "block")
    shape.backward_helper = plain and rng.random() < 0.3
    if rng.random() < 0.15:
        shape.gan_losses = rng.choice([1, 2])
        shape.clip = rng.choice(["none", "master"])
        shape.in_class = False
    # the choices below were added later: drawn after the others, so that a seed keeps its
    # earlier choices
    if not extended:
        return shape
    if rng.random() < 0.1:
        shape.level = "O3"
    reads_masters = shape.clip in ("master", "switched") or shape.read_norm == "optimizer"
    shape.master_helper = reads_masters and rng.random() < 0.5
    if shape.gan_losses:
        if shape.master_helper and rng.random() < 0.5:
            shape.helper_takes = "optimizer"
        return shape
    shape.batchnorm = rng.random() < 0.3
    shape.loss_ids = shape.two_backwards and rng.random() < 0.5
    shape.several = "none" if shape.in_class else rng.choice(["none", "none", "none", "optimizers", "models"])
    if shape.several == "none" and not shape.in_class and rng.random() < 0.3:
        shape.resume = rng.choice(["again", "restart"])
        shape.overflow = shape.save_amp = True
    if shape.master_helper and shape.several != "optimizers" and rng.random() < 0.5:
        shape.helper_takes = "optimizer"
    return shape


def _indent(lines: List[str], depth: int) -> List[str]:
    return [("    " * depth + line) if line else "" for line in lines]


BACKWARD_HELPER = """\
def backward(loss, optimizer):
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
"""


def _backward(shape: Shape) -> List[str]:
    if shape.backward_helper:
        return ["backward(loss, optimizer)"]
    delay = ", delay_unscale=(i + 1) % args.accum != 0" if shape.delay_unscale else ""
    scaled = [f"with amp.scale_loss(loss, optimizer{delay}) as scaled_loss:", "    scaled_loss.backward()"]
    if shape.clip_at == "block":
        scaled += _indent(_clip(shape), 1)
    if shape.two_backwards:
        first = [line.replace("(loss,", "(loss_a,").replace(".backward()", ".backward(retain_graph=True)") for line in scaled]
        scaled = first + [line.replace("(loss,", "(loss_b,") for line in scaled]
        if shape.loss_ids:
            scaled = [line.replace(") as scaled_loss", f", loss_id={0 if '(loss_a,' in line else 1}) as scaled_loss")
                      for line in scaled]
    if shape.backward == "scaled":
        return scaled
    test = "args.amp" if shape.switch else "not args.cpu_train"
    scaled_branch = scaled + (["params = amp.master_params(optimizer)"] if shape.backward == "branches-params" else [])
    plain_branch = ["loss.backward()"] + (["params = model.parameters()"] if shape.backward == "branches-params" else [])
    return [f"if {test}:", *_indent(scaled_branch, 1), "else:", *_indent(plain_branch, 1)]


def _clip(shape: Shape) -> List[str]:
    clip = "torch.nn.utils.clip_grad_norm_({}, 0.5)"
    if shape.clip == "master":
        return [clip.format("amp.master_params(optimizer)")]
    if shape.clip == "model":
        return [clip.format("model.parameters()")]
    if shape.clip == "params":
        return [clip.format("params")]
    if shape.clip == "switched":
        test = "args.amp" if shape.switch else "not args.cpu_train"
        return [f"if {test}:", "    " + clip.format("amp.master_params(optimizer)"), "else:",
                "    " + clip.format("model.parameters()")]
    return []


def _loop_body(shape: Shape) -> List[str]:
    body = ["optimizer.zero_grad()"] if shape.zero_grad_first else []
    if shape.two_backwards:
        body += ["out = model(x)", "loss_a = F.mse_loss(out[:, :2], y[:, :2])", "loss_b = F.mse_loss(out[:, 2:], y[:, 2:])"]
        loss = "loss_a"
    else:
        body += ["loss = F.mse_loss(model(x), y)"]
        loss = "loss"
    if shape.overflow:
        body += ["if i == 2:", f"    {loss} = {loss} * 1e30  # overflows in the float16 backward"]
    if shape.accum > 1:
        body += [f"{name} = {name} / args.accum" for name in (("loss_a", "loss_b") if shape.two_backwards else ("loss",))]
    body += _backward(shape)
    if shape.clip_at == "backward":
        body += _clip(shape)
    step = (_clip(shape) if shape.clip_at == "step" else []) + ["optimizer.step()"]
    if shape.read_norm != "none":
        params = "model.parameters()" if shape.read_norm == "model" else "amp.master_params(optimizer)"
        step = step[:-1] + [
            f"norm = sum(float(p.grad.norm()) for p in {params} if p.grad is not None)",
            'print("norm", i, norm)',
        ] + step[-1:]
    if shape.scheduler:
        step.append("scheduler.step()")
    if not shape.zero_grad_first:
        step.append("optimizer.zero_grad()")
    if shape.accum > 1:
        body += ["if (i + 1) % args.accum == 0:", *_indent(step, 1)]
    else:
        body += step
    return body


def _loop(shape: Shape) -> List[str]:
    return ["for i, (x, y) in enumerate(data):", *_indent(_loop_body(shape), 1)]


def _on_self(lines: List[str]) -> List[str]:
    """The lines with the loop's names read off ``self`` (a trainer's method)."""
    names = re.compile(r"(?<![.\w])(model|optimizer|args|scheduler)\b(?!\s*=[^=])")
    return [names.sub(r"self.\1", line) for line in lines]


def _trainer(shape: Shape, init: List[str]) -> List[str]:
    """A trainer class: __init__ initializes and keeps what the step uses, ``train_step`` is
    the loop's body."""
    extra = ", scheduler" if shape.scheduler else ""
    setup = [f"def __init__(self, args, model, optimizer{extra}):", *_indent(init, 1),
             "    self.args, self.model, self.optimizer = args, model, optimizer"]
    if shape.scheduler:
        setup.append("    self.scheduler = scheduler")
    step = ["def train_step(self, i, x, y):", *_indent(_on_self(_loop_body(shape)), 1)]
    return ["class Trainer:", *_indent(setup, 1), "", *_indent(step, 1)]


GAN_SETUP = """\
G = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
D = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
opt_g = torch.optim.SGD(G.parameters(), lr=0.05, momentum=0.9)
opt_d = torch.optim.SGD(D.parameters(), lr=0.05, momentum=0.9)"""


def _gan_step(shape: Shape, opt: str, loss: str, loss_id: int) -> List[str]:
    ids = f", loss_id={loss_id}" if shape.gan_losses == 2 else ""
    lines = [f"with amp.scale_loss({loss}, {opt}{ids}) as scaled_loss:", "    scaled_loss.backward()"]
    if shape.clip == "master":
        lines.append(f"torch.nn.utils.clip_grad_norm_(amp.master_params({opt}), 0.5)")
    return lines + [f"{opt}.step()"]


def _gan_script(shape: Shape) -> str:
    losses = f", num_losses={shape.gan_losses}" if shape.gan_losses == 2 else ""
    init_line = f'[G, D], [opt_g, opt_d] = amp.initialize([G, D], [opt_g, opt_d], opt_level="{shape.level}"{losses})'
    init = ["if args.amp:", "    " + init_line] if shape.switch else [init_line]
    body = [
        "real, y = x[:, :8], y",
        "opt_d.zero_grad()",
        "fake = G(torch.randn_like(real)).detach()",
        "loss_d = F.mse_loss(D(real), torch.ones(real.shape[0], 1)) + F.mse_loss(D(fake), torch.zeros(real.shape[0], 1))",
        *_gan_step(shape, "opt_d", "loss_d", 0),
        "opt_g.zero_grad()",
        "loss_g = F.mse_loss(D(G(torch.randn_like(real))), torch.ones(real.shape[0], 1))",
        *_gan_step(shape, "opt_g", "loss_g", 1),
    ]
    loop = ["for i, (x, y) in enumerate(data):", *_indent(body, 1)]
    lines = [_head(shape)] + (["", MASTER_HELPERS] if shape.master_helper else [])
    if shape.in_function:
        lines += ["", "def train(args, G, D, opt_g, opt_d, data):", *_indent(loop, 1), "", ""]
        loop = ["train(args, G, D, opt_g, opt_d, data)"]
    return _with_main(shape, lines, ["torch.manual_seed(0)", *GAN_SETUP.splitlines(), *init,
                                     "data = make_data(args.steps)", *loop], "[opt_g, opt_d]")


LAYERS = "torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)"
BN_LAYERS = "torch.nn.Linear(8, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU(), torch.nn.Linear(32, 4)"

MASTER_HELPERS = """\
def clip_gradients(params, max_norm):
    return torch.nn.utils.clip_grad_norm_(params, max_norm)


def grad_norm(params):
    return sum(float(p.grad.norm()) for p in params if p.grad is not None)
"""


OPTIMIZER_HELPERS = """\
def clip_gradients(optimizer, max_norm):
    return torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), max_norm)


def grad_norm(optimizer):
    return sum(float(p.grad.norm()) for p in amp.master_params(optimizer) if p.grad is not None)
"""


def _head(shape: Shape) -> str:
    return HEAD.format(seed=shape.seed, summary=shape.summary(), layers=BN_LAYERS if shape.batchnorm else LAYERS)


def _master_helpers(shape: Shape, text: str) -> str:
    """The clips and norm reads of ``amp.master_params(...)`` through the module's helpers."""
    if not shape.master_helper:
        return text
    given = r"\1" if shape.helper_takes == "params" else r"\2"
    clip = r"torch\.nn\.utils\.clip_grad_norm_\((amp\.master_params\((\w+)\)), 0\.5\)"
    text = re.sub(clip, f"clip_gradients({given}, 0.5)", text)
    text = re.sub(r"sum\(float\(p\.grad\.norm\(\)\) for p in (amp\.master_params\((\w+)\)) if p\.grad is not None\)",
                  f"grad_norm({given})", text)
    return text.replace(MASTER_HELPERS, OPTIMIZER_HELPERS) if shape.helper_takes == "optimizer" else text


def _several(shape: Shape, text: str) -> str:
    """The loop's text for two optimizers (both scaled, stepped and zeroed) or two models (the
    backward helper stays as it is: it scales for what it is given)."""
    if BACKWARD_HELPER in text:
        return BACKWARD_HELPER.join(_several(shape, part) for part in text.split(BACKWARD_HELPER))
    if shape.several == "optimizers":
        text = re.sub(r"amp\.scale_loss\((\w+), optimizer\b", r"amp.scale_loss(\1, [optimizer, optimizer2]", text)
        both = r"\1optimizer.\2()\n\1optimizer2.\2()"
        text = re.sub(r"^( *)optimizer\.(step|zero_grad)\(\)$", both, text, flags=re.MULTILINE)
        spread = "[*amp.master_params(optimizer), *amp.master_params(optimizer2)]"
        text = text.replace("amp.master_params(optimizer)", spread)
        return re.sub(r"(?<!def )backward\(loss, optimizer\)", "backward(loss, [optimizer, optimizer2])", text)
    if shape.several == "models":
        text = re.sub(r"(?<![\w.])model\(x\)", "head(body(x))", text)
        return re.sub(r"(?<![\w.])model\.parameters\(\)", "[*body.parameters(), *head.parameters()]", text)
    return text


def _init(shape: Shape) -> List[str]:
    """The ``amp.initialize`` line (under ``if args.amp:`` with the switch)."""
    models = "[body, head]" if shape.several == "models" else "model"
    optimizers = "[optimizer, optimizer2]" if shape.several == "optimizers" else "optimizer"
    losses = ", num_losses=2" if shape.loss_ids else ""
    init = [f'{models}, {optimizers} = amp.initialize({models}, {optimizers}, opt_level="{shape.level}"{losses})']
    if shape.level == "O2" and shape.batchnorm and shape.delay_unscale:
        # apex's O2 sets up its master weights at the first zero_grad or non-delayed backward and
        # drops the gradients the float32 parameters (the batchnorm's) hold then: a first
        # accumulation step of delayed backwards would not train them, where GradScaler does
        init.append("optimizer.zero_grad()")
    return ["if args.amp:", *_indent(init, 1)] if shape.switch else init


def _setup(shape: Shape) -> List[str]:
    """Build the model(s) and optimizer(s), and initialize them unless a trainer does."""
    if shape.several == "optimizers":
        setup = ["model = make_model()",
                 "optimizer = torch.optim.SGD(list(model.parameters())[:2], lr=0.05, momentum=0.9)",
                 "optimizer2 = torch.optim.SGD(list(model.parameters())[2:], lr=0.02, momentum=0.9)"]
    elif shape.several == "models":
        setup = ["layers = list(make_model())", "body, head = torch.nn.Sequential(*layers[:-1]), layers[-1]",
                 "optimizer = torch.optim.SGD([*body.parameters(), *head.parameters()], lr=0.05, momentum=0.9)"]
    else:
        setup = ["model = make_model()", "optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)"]
    setup += [] if shape.in_class else _init(shape)
    if shape.scheduler:
        setup.append("scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=3, gamma=0.5)")
    return setup


def _resume(shape: Shape, setup: List[str], loop: List[str]) -> List[str]:
    """Train on the first half of the data, save, build afresh, load and train on the rest (in
    this run, or in a second one: ``--half``)."""
    saved = ['"model": model.state_dict()', '"optimizer": optimizer.state_dict()', '"amp": amp.state_dict()']
    saved += ['"scheduler": scheduler.state_dict()'] if shape.scheduler else []
    path = "args.resume_ckpt" if shape.resume == "restart" else 'args.params_out + ".resume"'
    load = [f'checkpoint = torch.load({path})',
            'model.load_state_dict(checkpoint["model"])',
            'optimizer.load_state_dict(checkpoint["optimizer"])']
    amp_load = 'amp.load_state_dict(checkpoint["amp"])'
    load += ["if args.amp:", "    " + amp_load] if shape.switch else [amp_load]
    load += ['scheduler.load_state_dict(checkpoint["scheduler"])'] if shape.scheduler else []
    save = "torch.save({" + ", ".join(saved) + f"}}, {path})"
    if shape.resume == "restart":
        return [*setup, "data = make_data(args.steps)", "if args.half == 1:", "    data = data[:args.steps // 2]",
                "elif args.half == 2:", *_indent(load, 1), "    data = data[args.steps // 2:]", *loop,
                "if args.half == 1:", "    " + save]
    return [*setup, "data = make_data(args.steps)", "later = data[args.steps // 2:]", "data = data[:args.steps // 2]",
            *loop, save, *setup, *load, "data = later", *loop]


def script(shape: Shape) -> str:
    if shape.gan_losses:
        return _master_helpers(shape, _gan_script(shape))
    setup = _setup(shape)
    loop = _loop(shape)
    lines = [_head(shape)]
    if shape.master_helper:
        lines += ["", MASTER_HELPERS]
    if shape.backward_helper:
        lines += ["", BACKWARD_HELPER]
    if shape.in_class:
        lines += ["", *_trainer(shape, _init(shape)), "", ""]
        extra = ", scheduler" if shape.scheduler else ""
        loop = [f"trainer = Trainer(args, model, optimizer{extra})", "for i, (x, y) in enumerate(data):",
                "    trainer.train_step(i, x, y)", "model, optimizer = trainer.model, trainer.optimizer"]
    elif shape.in_function:
        names = {"optimizers": "model, optimizer, optimizer2", "models": "body, head, optimizer"}.get(
            shape.several, "model, optimizer")
        params = f"args, {names}, data" + (", scheduler" if shape.scheduler else "")
        lines += ["", f"def train({params}):", *_indent(loop, 1), "", ""]
        loop = [f"train({params})"]
    body = _resume(shape, setup, loop) if shape.resume != "none" else [*setup, "data = make_data(args.steps)", *loop]
    optimizers = "[optimizer, optimizer2]" if shape.several == "optimizers" else "optimizer"
    return _several(shape, _master_helpers(shape, _with_main(shape, lines, body, optimizers)))


def _with_main(shape: Shape, lines: List[str], body: List[str], optimizers: str) -> str:
    """The script: ``lines``, then ``main()`` parsing the flags, running ``body`` and saving the
    parameters of ``optimizers`` (and amp's state where the shape does), then its call."""
    main = [
        "parser = argparse.ArgumentParser()",
        'parser.add_argument("--steps", type=int, default=8)',
        'parser.add_argument("--params-out", default="")',
        'parser.add_argument("--accum", type=int, default=2)',
        'parser.add_argument("--amp", type=int, default=1)',
        'parser.add_argument("--cpu-train", action="store_true")',
        'parser.add_argument("--ckpt-out", default="")',
        *(['parser.add_argument("--half", type=int, default=0)', 'parser.add_argument("--resume-ckpt", default="")']
          if shape.resume == "restart" else []),
        "args = parser.parse_args()",
        *body,
        "if args.params_out:",
        f"    save_params({optimizers}, args.params_out)",
    ]
    if shape.save_amp:
        main += ["if args.ckpt_out:", '    torch.save({"amp": amp.state_dict()}, args.ckpt_out)']
    lines += ["", "def main():", *_indent(main, 1), "", "", 'if __name__ == "__main__":', "    main()", ""]
    return "\n".join(lines).replace("\n\n\n\n", "\n\n\n")


def _migrate(root: Path) -> None:
    command = [sys.executable, "-m", "migrate", "--allow-no-vcs", "-q", str(root)]
    subprocess.run(command, capture_output=True, text=True, check=False)


def _files(root: Path) -> Dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


def _run(runs: List[dict], work: Path, label: str) -> dict:
    plan, results = work / f"{label}.plan.json", work / f"{label}.results.json"
    plan.write_text(json.dumps({"runs": runs}))
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", PYTHONWARNINGS="ignore", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, str(RUNNER), str(plan), str(results)], cwd=work, env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"runner failed:\n{proc.stdout}\n{proc.stderr}")
    return json.loads(results.read_text())


def _norms(stdout: str) -> Dict[str, float]:
    return {f"{m.group(1)}": float(m.group(2)) for m in re.finditer(r"^norm (\d+) (\S+)$", stdout, re.MULTILINE)}


def _rel_diff(a: list, b: list) -> float:
    num = sum(float((x - y).pow(2).sum()) for x, y in zip(a, b)) ** 0.5
    den = sum(float(y.pow(2).sum()) for y in b) ** 0.5
    return num / den if den else num


def _same(a: float, b: float) -> bool:
    if a != a or b != b or a in (float("inf"), float("-inf")) or b in (float("inf"), float("-inf")):
        return str(a) == str(b)
    return abs(a - b) <= NORM_REL * max(abs(a), abs(b), 1e-12)


def reference(shape: Shape) -> Shape:
    """The shape whose apex run the native output must match: O3 (float16 weights, no masters,
    a static loss scale of 1) becomes float16 autocast with fp32 weights and a dynamic
    GradScaler (APX202, on purpose), which is what apex's O1 did, so an O3 shape is compared
    with its O1 twin (O2's model gradients are its float16 copies': not this)."""
    return replace(shape, level="O1") if shape.level == "O3" else shape


def check(seeds: List[int], work: Path, extended: bool = True) -> Tuple[Dict[int, Optional[str]], Set[int]]:
    """Each seed -> None when its shape passes, else why not; and the seeds whose output is
    native (``extended``: see ``choose``)."""
    import torch

    originals, outputs = work / "original", work / "migrated"
    shapes = {seed: choose(seed, extended) for seed in seeds}
    for seed, shape in shapes.items():
        for root in (originals, outputs):
            (root / f"s{seed}").mkdir(parents=True, exist_ok=True)
            (root / f"s{seed}" / "train.py").write_text(script(reference(shape) if root is originals else shape))
    _migrate(outputs)
    first = _files(outputs)
    _migrate(outputs)
    second = _files(outputs)
    runs = []
    for seed in seeds:
        # a restart: apex's first half saves the checkpoint both second halves load
        restart = shapes[seed].resume == "restart"
        halves = [(["--half", "1"], ":first"), (["--half", "2"], "")] if restart else [([], "")]
        for group, root in (("orig", originals), ("migrated", outputs)):
            blocked = [] if group == "orig" else ["apex", "apexcompat"]
            for half, suffix in halves:
                if group == "migrated" and suffix:
                    continue
                resume = ["--resume-ckpt", str(work / f"orig-{seed}.resume")] if half else []
                runs.append({
                    "id": f"{group}:{seed}{suffix}", "script": str(root / f"s{seed}" / "train.py"), "cwd": str(work),
                    "argv": [*half, *resume, "--params-out", str(work / f"{group}-{seed}.pt"),
                             "--ckpt-out", str(work / f"{group}-{seed}.ckpt")],
                    "env": {}, "blocked": blocked, "cuda_amp_on_cpu": group == "migrated",
                    "sys_path": [str(FAKE_APEX)] if group == "orig" else [],
                })
    native = {seed for seed in seeds if not _SHIM_IMPORT.search(first[f"s{seed}/train.py"])}
    results = _run([r for r in runs if r["id"].startswith("orig:") or int(r["id"].split(":")[1]) in native], work, "shapes")
    for seed in seeds:
        first_half = results.get(f"orig:{seed}:first")
        if first_half is not None and not first_half["ok"]:
            results[f"orig:{seed}"] = first_half
    verdicts: Dict[int, Optional[str]] = {}
    for seed in seeds:
        name = f"s{seed}/train.py"
        orig = results[f"orig:{seed}"]
        if not orig["ok"]:
            verdicts[seed] = f"the original does not run:\n{orig['error']}"
        elif first[name] != second[name]:
            verdicts[seed] = "a second migration changed the output"
        elif seed not in native:
            verdicts[seed] = None  # kept on apexcompat.amp: the shim trains as apex did
        elif not results[f"migrated:{seed}"]["ok"]:
            verdicts[seed] = f"the native output does not run:\n{results[f'migrated:{seed}']['error']}"
        else:
            verdicts[seed] = _compare(seed, work, orig, results[f"migrated:{seed}"], torch) or (
                _compare_scales(seed, work, torch) if shapes[seed].resume != "none" else None)
    return verdicts, native


def _compare(seed: int, work: Path, orig: dict, migrated: dict, torch) -> Optional[str]:
    a = torch.load(work / f"orig-{seed}.pt")
    b = torch.load(work / f"migrated-{seed}.pt")
    diff = _rel_diff(b, a)
    if not diff <= REL:
        return f"final parameters differ: ||native - original|| / ||original|| = {diff:.3g} > {REL}"
    a_norms, b_norms = _norms(orig["stdout"]), _norms(migrated["stdout"])
    if a_norms.keys() != b_norms.keys():
        return f"logged gradient norms at different steps: {sorted(a_norms)} vs {sorted(b_norms)}"
    for step in a_norms:
        if not _same(a_norms[step], b_norms[step]):
            return f"gradient norm at step {step}: original {a_norms[step]:.6g}, native {b_norms[step]:.6g}"
    return None


def _loss_scale(state: dict) -> Optional[float]:
    """The loss scale in amp's saved state (apex's first loss scaler) or a GradScaler's."""
    if "loss_scaler0" in state:
        return float(state["loss_scaler0"]["loss_scale"])
    return float(state["scale"]) if "scale" in state else None


def _compare_scales(seed: int, work: Path, torch) -> Optional[str]:
    """A resumed run ends with the loss scale the original ends with: the one it saved, loaded
    and halved again on the second overflow (a GradScaler that did not load the saved scale
    starts from 65536 again and skips the same steps, so the parameters cannot tell)."""
    a = _loss_scale(torch.load(work / f"orig-{seed}.ckpt")["amp"])
    b = _loss_scale(torch.load(work / f"migrated-{seed}.ckpt")["amp"])
    return None if a == b else f"final loss scale: original {a}, native {b}"


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100, help="check seeds 0..N-1")
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--keep", default="", help="folder to keep the scripts and outputs in")
    parser.add_argument("--legacy", action="store_true", help="the choices of session 26 only")
    args = parser.parse_args(argv)
    seeds = list(range(args.start, args.start + args.seeds))
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(args.keep or scratch)
        work.mkdir(parents=True, exist_ok=True)
        verdicts, native = check(seeds, work, extended=not args.legacy)
        failed = {s: v for s, v in verdicts.items() if v}
        for seed, why in failed.items():
            print(f"--- seed {seed}: {choose(seed, not args.legacy).summary()}\n{why}\n")
        print(f"{len(seeds) - len(failed)}/{len(seeds)} shapes pass ({len(native)} migrated to native)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
