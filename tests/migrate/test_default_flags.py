"""The accumulation count under the default flags (migrate/rules/_default_flags.py): 1 only
where the file's own add_argument says so and nothing else in the file can change it; and the
unscale_ that follows clips kept inside the scale_loss block on that proof (_exit_unscale)."""

from __future__ import annotations

from typing import Optional

import libcst as cst
import pytest

from migrate.rules._default_flags import every_time_by_default

SCRIPT = """\
import argparse


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grad-accum", type=int, default={default})
    args = {parsed}
    {extra}
    steps = args.grad_accum
    for i in range(10):
        if {test}:
            pass
"""


def count(default="1", parsed="parser.parse_args()", extra="pass", test="(i + 1) % args.grad_accum == 0") -> Optional[str]:
    module = cst.parse_module(SCRIPT.format(default=default, parsed=parsed, extra=extra, test=test))
    main = module.body[1]
    loop = main.body.body[-1]
    guard = loop.body.body[0]
    return every_time_by_default(module, main, guard.test)


def test_a_count_that_defaults_to_one_makes_every_pass_a_step():
    assert count() == "args.grad_accum"
    assert count(test="i % steps == 0") == "steps"  # a local bound once from the flag


def test_flags_parsed_by_a_function_of_the_file():
    source = SCRIPT.format(default="1", parsed="parse()", extra="pass", test="(i + 1) % args.grad_accum == 0")
    source = source.replace("def main():", "def parse():\n    return argparse.ArgumentParser().parse_args()\n\n\ndef main():")
    module = cst.parse_module(source)
    main = module.body[2]
    guard = main.body.body[-1].body.body[0]
    assert every_time_by_default(module, main, guard.test) == "args.grad_accum"


@pytest.mark.parametrize(
    "changes",
    [
        {"default": "4"},
        {"default": "'1'"},
        {"extra": "args.grad_accum = 2"},
        {"extra": "args.grad_accum *= 2"},
        {"extra": "parser.set_defaults(grad_accum=2)"},
        {"extra": "setattr(args, name, value)"},
        {"extra": "args.__dict__.update(config)"},
        {"parsed": "load_config(parser)"},
        {"extra": "args = merge(args)"},
        {"test": "(i + 1) % args.grad_accum == 1"},
        {"test": "(i + 1) % args.grad_accum == 0 or last"},
        {"test": "(i + 1) % args.other == 0"},
    ],
)
def test_anything_else_is_not_proven(changes):
    assert count(**changes) is None


TWO_CLIPS_INSIDE = """\
import argparse

import torch
from apex import amp


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--accumulate", type=int, default=1)
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for step in range(8):
        loss = model(torch.randn(2, 4).cuda()).mean() / args.accumulate
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
            torch.nn.utils.clip_grad_value_(amp.master_params(optimizer), 5.0)
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        if (step + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""


def test_two_clips_inside_one_block_get_one_unscale_after_it():
    """A second unscale_ before the update would raise even with a count of 1."""
    from migrate.engine import migrate_source
    from migrate.settings import Settings

    new = migrate_source(TWO_CLIPS_INSIDE.encode(), "train.py", Settings()).new.decode()
    assert "from apex" not in new and new.count("scaler.unscale_(optimizer)") == 1, new
    assert new.index("clip_grad_norm_") < new.index("scaler.unscale_(optimizer)") < new.index("scaler.step"), new
