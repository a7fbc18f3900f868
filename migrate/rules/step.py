"""APX311-APX312: the optimizer step apex patched -> ``scaler.step(optimizer)``, then one
``scaler.update()`` after the last step of each phase.

Only ``step()`` calls of optimizers passed to an ``amp.scale_loss`` in the same function are
touched, so gradient-accumulation boundaries (``if (i + 1) % accum == 0:``) are kept: the
scaler steps and updates exactly where the original stepped."""

from __future__ import annotations

from typing import Any, Dict, List, Tuple, cast

import libcst as cst

from ._amp_rule import AmpRule
from ._amp_sites import analyse, code_of, find_scalers, find_steps, walk
from ._edits import expression, statement
from .base import Example


class StepRule(AmpRule):
    """optimizer.step() -> scaler.step(optimizer) + scaler.update()."""

    CODES = {
        "APX311": "optimizer.step() goes through the GradScaler, followed by scaler.update()",
    }
    TRIGGERS = (b"scale_loss",)
    LIVE_TRIGGERS = ("scale_loss",)

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if not info.scale_losses or info.inits:
            return
        lookup = find_scalers(self, module)
        chosen: Dict[cst.Call, str] = {}
        backward_lines: List[int] = []
        for site in info.scale_losses:
            scaler = lookup(site.with_stmt)
            if scaler is None:
                continue
            backward_lines.append(self.line_of(site.with_stmt))
            for opt in site.optimizers:
                for call in find_steps(self, site, code_of(opt)):
                    here = lookup(call)
                    if here is not None:
                        chosen[call] = here.expr
        for node in walk(module):
            if (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "backward"
            ):
                backward_lines.append(self.line_of(node))
        # group steps per block: a step followed (in the same block, with no backward in
        # between) by another step shares one update after the last of them
        by_block: Dict[Tuple[cst.CSTNode, str], List[Tuple[int, cst.Call, cst.CSTNode]]] = {}
        for call, scaler in chosen.items():
            holder = self.parents[call]
            line = self.parents[holder]
            anchor = line if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1 else holder
            block = self.parents[line]
            by_block.setdefault((block, scaler), []).append((self.line_of(call), call, anchor))
            opt_text = code_of(cast(Any, call.func).value)
            self.replace_node(call, expression(f"{scaler}.step({opt_text})"))
            self.report(
                call,
                "APX311",
                f"{opt_text}.step() -> {scaler}.step({opt_text}) + {scaler}.update()",
                fixed=True,
                severity="info",
            )
        for (_block, scaler), steps in by_block.items():
            steps.sort(key=lambda s: s[0])
            for index, (line, _call, anchor) in enumerate(steps):
                nxt = steps[index + 1][0] if index + 1 < len(steps) else None
                if nxt is not None and not any(line < b < nxt for b in backward_lines):
                    continue
                self.edits.insert_after(anchor, [statement(f"{scaler}.update()\n")])


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "accumulation-boundary-with-delay-unscale",
        before="""\
from apex import amp


def train(model, optimizer, loader, accumulation_steps=4):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(loader):
        loss = criterion(model(x), y) / accumulation_steps
        with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % accumulation_steps != 0) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
""",
        after="""\
import torch


def train(model, optimizer, loader, accumulation_steps=4):
    scaler = torch.amp.GradScaler("cuda")
    for i, (x, y) in enumerate(loader):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = criterion(model(x), y) / accumulation_steps
        scaler.scale(loss).backward()
        if (i + 1) % accumulation_steps == 0:
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX302", "APX311"),
    ),
    Example(
        "two-optimizers-one-update",
        before="""\
from apex import amp


def train(model, opt_body, opt_head, batches):
    model, [opt_body, opt_head] = amp.initialize(model, [opt_body, opt_head], opt_level="O1")
    for x in batches:
        loss = model(x).sum()
        with amp.scale_loss(loss, [opt_body, opt_head]) as scaled_loss:
            scaled_loss.backward()
        opt_body.step()
        opt_head.step()
""",
        after="""\
import torch


def train(model, opt_body, opt_head, batches):
    scaler = torch.amp.GradScaler("cuda")
    for x in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(opt_body)
        scaler.step(opt_head)
        scaler.update()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX311"),
    ),
    Example(
        "one-line-step-in-an-if",
        before="""\
from apex import amp as apex_amp
import torch


def train(model, optimizer, batches, fp16=True):
    if fp16:
        model, optimizer = apex_amp.initialize(model, optimizer, opt_level="O1")
    for step, (x, y) in enumerate(batches):
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if fp16:
            with apex_amp.scale_loss(loss, optimizer) as scaled_loss: scaled_loss.backward()
        else:
            loss.backward()
        if step % 2 == 0: optimizer.step(); optimizer.zero_grad()
    return {"amp": apex_amp.state_dict() if fp16 else None}
""",
        after="""\
import torch


def train(model, optimizer, batches, fp16=True):
    scaler = torch.amp.GradScaler("cuda", enabled=fp16)
    for step, (x, y) in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16, enabled=fp16):
            out = model(x)
            loss = torch.nn.functional.mse_loss(out, y)
        if fp16:
            scaler.scale(loss).backward()
        else:
            loss.backward()
        if step % 2 == 0: scaler.step(optimizer); scaler.update(); optimizer.zero_grad()
    return {"amp": scaler.state_dict() if fp16 else None}
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311", "APX401"),
    ),
]

NOOP_EXAMPLES: List[Example] = []

StepRule.EXAMPLES = EXAMPLES
StepRule.NOOP_EXAMPLES = NOOP_EXAMPLES
