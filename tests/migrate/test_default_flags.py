"""The accumulation count under the default flags (migrate/rules/_default_flags.py): 1 only
where the file's own add_argument says so and nothing else in the file can change it."""

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
