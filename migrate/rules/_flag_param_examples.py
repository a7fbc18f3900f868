"""Repository examples of the flag route (``_amp_flag_param``): apex.amp (or None) handed to
a same-file helper that initializes it under ``if amp:`` and otherwise only tests it
(unilm's s2s-ft ``prepare_for_training``).  Appended to ``REPOSITORY_EXAMPLES``."""

from __future__ import annotations

from typing import List

from .base import Example

#: the script: ``train()`` binds apex.amp or None and hands it to ``prepare()``, which tests
#: it, initializes it, loads its state and runs one scaled step (apex issue 480's workaround)
PREPARE_SCRIPT = """\
# file: run.py
import argparse

import torch

from utils import load_checkpoint


def prepare(args, model, state, amp):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if state:
        optimizer.load_state_dict(state["optimizer"])
        if amp:
            optimizer.state = {}
    if amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)
        if state:
            amp.load_state_dict(state["amp"])
            loss = model(torch.ones(2, 4, device="cuda")).mean()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
            model.zero_grad()
            optimizer.load_state_dict(state["optimizer"])
    return model, optimizer


def train(args, model, batches, state):
    if args.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex to use fp16 training.")
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
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        model.zero_grad()
    if args.fp16:
        torch.save({"optimizer": optimizer.state_dict(), "amp": amp.state_dict()}, "ckpt.pt")


def main(args):
    train(args, torch.nn.Linear(4, 4).cuda(), [], load_checkpoint("ckpt.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--fp16_opt_level", default="O1")
    parser.add_argument("--lr", type=float, default=1e-3)
    main(parser.parse_args())
"""

#: the checkpoint reader the script imports (unilm's ``s2s_ft/utils.py``)
UTILS = """\
# file: utils.py
import os

import torch


def load_checkpoint(path):
    return torch.load(path, map_location="cpu") if os.path.exists(path) else None
"""

#: another file that also calls ``prepare()``, without apex.amp
RESUME = """\
# file: resume.py
from run import prepare


def resume(args, model, state):
    return prepare(args, model, state, None)
"""

#: the script migrated: ``prepare()`` sets a module-level GradScaler where amp.initialize was,
#: switched by its test, and ``train()``, which calls it before any amp site, reads it
PREPARE_SCRIPT_MIGRATED = '''\
# file: run.py
import argparse

import torch

from utils import load_checkpoint


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


# one GradScaler per process, set where amp.initialize was: it replaced apex.amp's per-process loss scaler
scaler = None


def prepare(args, model, state, amp):
    global scaler
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if state:
        optimizer.load_state_dict(state["optimizer"])
        if amp:
            optimizer.state = {}
    use_amp = bool(amp and args.fp16_opt_level != "O0")
    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    if amp:
        if state:
            load_scaler_state(scaler, state["amp"])
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = model(torch.ones(2, 4, device="cuda")).mean()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            model.zero_grad()
            optimizer.load_state_dict(state["optimizer"])
    return model, optimizer


def train(args, model, batches, state):
    if args.fp16:
        pass
    else:
        amp = None
    model, optimizer = prepare(args, model, state, amp=args.fp16)
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16, enabled=scaler.is_enabled()):
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        model.zero_grad()
    if args.fp16:
        torch.save({"optimizer": optimizer.state_dict(), "amp": scaler.state_dict()}, "ckpt.pt")


def main(args):
    train(args, torch.nn.Linear(4, 4).cuda(), [], load_checkpoint("ckpt.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--fp16_opt_level", default="O1")
    parser.add_argument("--lr", type=float, default=1e-3)
    main(parser.parse_args())
'''

#: the script kept on the shim where resume.py also calls ``prepare()``
PREPARE_SCRIPT_KEPT = '''\
# file: run.py
import argparse

import torch

from utils import load_checkpoint


def prepare(args, model, state, amp):
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    if state:
        optimizer.load_state_dict(state["optimizer"])
        if amp:
            optimizer.state = {}
    if amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.fp16_opt_level)
        if state:
            amp.load_state_dict(state["amp"])
            loss = model(torch.ones(2, 4, device="cuda")).mean()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
            model.zero_grad()
            optimizer.load_state_dict(state["optimizer"])
    return model, optimizer


def train(args, model, batches, state):
    if args.fp16:
        try:
            from apexcompat import amp
        except ImportError:
            raise ImportError("Please install apex to use fp16 training.")
    else:
        amp = None
    # TODO(apexcompat): apex.amp (or None) is given to prepare() as its parameter amp, on
    #   which prepare() calls amp.initialize: the GradScaler would be created in prepare()
    #   from a module handed in as a value, which no route follows; this file keeps apex.amp
    #   semantics through apexcompat.amp, migrate it by hand
    model, optimizer = prepare(args, model, state, amp=amp)
    for x, y in batches:
        loss = torch.nn.functional.mse_loss(model(x), y)
        if args.fp16:
            # TODO(apexcompat): the scaler cannot reach this amp.scale_loss: apex.amp (or None) is
            #   given to prepare() as its parameter amp, on which prepare() calls amp.initialize:
            #   the GradScaler would be created in prepare() from a module handed in as a value,
            #   which no route follows; this file keeps apex.amp semantics through apexcompat.amp,
            #   migrate it by hand
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        model.zero_grad()
    if args.fp16:
        torch.save({"optimizer": optimizer.state_dict(), "amp": amp.state_dict()}, "ckpt.pt")


def main(args):
    train(args, torch.nn.Linear(4, 4).cuda(), [], load_checkpoint("ckpt.pt"))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--fp16_opt_level", default="O1")
    parser.add_argument("--lr", type=float, default=1e-3)
    main(parser.parse_args())
'''

FLAG_PARAM_EXAMPLES: List[Example] = [
    Example(
        # unilm's s2s-ft: train() binds apex.amp or None and hands it to prepare(), which tests
        # it (before its initialize too), initializes it, loads its state and runs a scaled step:
        # the parameter is read as an on/off flag, the call hands args.fp16 (the test that bound
        # apex.amp), prepare() sets a module-level GradScaler where amp.initialize was, and
        # train(), which calls prepare() before any of its amp sites, reads it even though the
        # __main__ guard runs it through main(); before, the file kept the shim ("from a module
        # handed in as a value, which no route follows")
        "amp-or-none-initialized-under-its-test-by-the-helper-it-is-given-to",
        before=PREPARE_SCRIPT + UTILS,
        after=PREPARE_SCRIPT_MIGRATED + UTILS,
        codes=(
            "APX101", "APX103", "APX201", "APX202", "APX209", "APX250", "APX286", "APX301", "APX311",
            "APX316", "APX322", "APX401", "APX402",
        ),
    ),
    Example(
        # the same helper also called from another file (with None): that call would still hand
        # it a module or None, so the parameter is not read as a flag and the file keeps the shim
        "amp-or-none-initialized-under-its-test-by-a-helper-another-file-calls-keeps-the-shim",
        before=RESUME + PREPARE_SCRIPT + UTILS,
        after=RESUME + PREPARE_SCRIPT_KEPT + UTILS,
        codes=("APX102", "APX220"),
    ),
]
