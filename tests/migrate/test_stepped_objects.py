"""Which other ``.step()`` calls of a function keep the plain backward of the branch that does
not scale plain (APX256, ``rules._stepped_objects``): one of an object that provably updates no
other optimizer's parameters does not; anything the tool cannot see through does.

Each case is a training function whose ``else`` holds ``loss.backward()`` and which also calls
``<receiver>.step(...)``; the case says whether the warning stays (the backward stays plain)."""

from __future__ import annotations

import pytest

from migrate.engine import migrate_source
from migrate.settings import Settings

TEMPLATE = """\
import torch
from apex import amp
{imports}

{classes}

{module}
def train(args, model, optimizer, loader{params}):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    {setup}
    for x in loader:
        loss = model(x).mean()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        {step}
"""

CLIPPER = """\
class Clipper:
    def __init__(self, norm):
        self.norm = norm

    def step(self, parameters):
        torch.nn.utils.clip_grad_norm_(parameters, self.norm)
"""

PARAMS = '(p for group in optimizer.param_groups for p in group["params"])'

# (id, fields of TEMPLATE, whether APX256 stays)
CASES = [
    ("clipper-built-from-a-constant", dict(setup="c = Clipper(1.0)", step=f"c.step({PARAMS})"), False),
    ("clipper-handed-nothing", dict(setup="c = Clipper(norm=-1)", step="c.step()"), False),
    (
        "torch-scheduler-bound-once",
        dict(setup="s = torch.optim.lr_scheduler.StepLR(optimizer, 10)", step="s.step()"),
        False,
    ),
    (
        "imported-torch-scheduler",
        dict(
            imports="from torch.optim.lr_scheduler import StepLR as Every",
            setup="s = Every(optimizer, 10)",
            step="s.step()",
        ),
        False,
    ),
    (
        "factory-named-a-schedule",
        dict(setup="w = get_linear_schedule_with_warmup(optimizer, 10, 100)", step="w.step()"),
        False,
    ),
    # what the tool cannot see through: the warning stays
    (
        "clipper-handed-the-model-parameters",
        dict(setup="c = Clipper(1.0)", step="c.step(model.parameters())"),
        True,
    ),
    ("clipper-built-from-the-model", dict(setup="c = Clipper(model)", step="c.step()"), True),
    ("receiver-bound-twice", dict(setup="c = Clipper(1.0)", step="c = Clipper(2.0); c.step()"), True),
    ("receiver-is-a-parameter", dict(params=", c=None", setup="c = Clipper(1.0)", step="c.step()"), True),
    ("attribute-receiver", dict(setup="args.c = Clipper(1.0)", step="args.c.step()"), True),
    (
        "imported-class",
        dict(imports="from .optim import Clipper as Other", setup="c = Other(1.0)", step="c.step()"),
        True,
    ),
    (
        "class-with-a-base",
        dict(
            classes=CLIPPER.replace("class Clipper:", "class Clipper(Base):"),
            setup="c = Clipper(1.0)",
            step="c.step()",
        ),
        True,
    ),
    (
        "class-reading-a-module-variable",
        dict(
            classes=CLIPPER.replace("self.norm = norm", "self.norm = norm\n        self.net = NET"),
            module="NET = None\n",
            setup="c = Clipper(1.0)",
            step="c.step()",
        ),
        True,
    ),
    (
        "decorated-class",
        dict(classes="@register\n" + CLIPPER, setup="c = Clipper(1.0)", step="c.step()"),
        True,
    ),
]


@pytest.mark.parametrize("fields,warned", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_other_step_keeps_the_plain_backward_plain_only_where_it_may_update_parameters(fields, warned):
    values = dict(imports="", classes=CLIPPER, module="", params="", setup="", step="")
    values.update(fields)
    source = TEMPLATE.format(**values)
    result = migrate_source(source.encode(), "example.py", Settings())
    assert result.parse_error is None and result.internal_error is None, result.all_findings()
    codes = {f.code for f in result.findings}
    assert ("APX256" in codes) is warned, sorted(codes)
    # not warned: the else is scaled too, and the if is written once
    assert ("loss.backward()" in result.new.decode()) is warned
