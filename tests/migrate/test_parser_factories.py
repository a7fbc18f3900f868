"""Flag defaults read from a parser factory of another file (migrate/parser_factories.py):
only a function that builds an argparse parser, adds flags to it unconditionally and returns
it; the plan hands its flags to the files that call it, and the default-flags reader follows
``parser = factory()`` there (migrate/rules/_default_flags.py)."""

from __future__ import annotations

import ast
from typing import Optional

import libcst as cst
import pytest

from migrate.parser_factories import parser_factories
from migrate.repo_index import summarise
from migrate.repo_plan import build_plan
from migrate.rules._default_flags import every_time_by_default

FACTORY = """\
import argparse


def get_parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--grad-accum", type=int, default=1)
    parser.add_argument("--name", default="run")
    parser.add_argument("-k", type=int, default=True)
    return parser
"""


def flags(source: str) -> Optional[dict]:
    found = parser_factories(ast.parse(source))
    return dict(found["get_parser"]) if "get_parser" in found else None


def test_a_factory_gives_its_literal_defaults():
    assert flags(FACTORY) == {"grad_accum": 1, "name": "run", "k": None}  # a bool is no count
    imported = FACTORY.replace("import argparse", "from argparse import ArgumentParser as AP")
    assert flags(imported.replace("argparse.ArgumentParser()", "AP()")) == flags(FACTORY)


@pytest.mark.parametrize(
    "before, after",
    [
        # added under a condition, through another helper, to a group, with set_defaults
        ('    parser.add_argument("--name"', '    if True:\n        parser.add_argument("--name"'),
        ("parser = argparse.ArgumentParser()", "parser = base_parser()"),
        ('    parser.add_argument("--name", default="run")\n', '    group = parser.add_argument_group("x")\n'),
        ('    return parser', '    parser.set_defaults(grad_accum=4)\n    return parser'),
        ('    return parser', '    return parser.parse_args()'),
        ('parser.add_argument("-k"', 'parser.add_argument(*names'),  # any dest may be it
        ("def get_parser", "@cache\ndef get_parser"),
        ("import argparse", "import argparse as ap\nimport other as argparse"),
    ],
)
def test_anything_else_is_no_factory(before, after):
    assert before in FACTORY
    assert flags(FACTORY.replace(before, after)) is None


SCRIPT = """\
from flags import get_parser


def main():
    {bind}
    for i in range(10):
        if (i + 1) % args.grad_accum == 0:
            pass
"""


def count(bind: str, factories=None) -> Optional[str]:
    module = cst.parse_module(SCRIPT.format(bind=bind))
    main = module.body[1]
    guard = main.body.body[-1].body.body[0]
    given = {"get_parser": (("grad_accum", 1),)} if factories is None else factories
    return every_time_by_default(module, main, guard.test, given)


def test_the_parser_a_factory_made_gives_its_defaults():
    assert count("parser = get_parser()\n    args = parser.parse_args()") == "args.grad_accum"
    assert count("args = get_parser().parse_args()") == "args.grad_accum"


@pytest.mark.parametrize(
    "bind, factories",
    [
        ("parser = get_parser()\n    args = parser.parse_args()", {}),  # not in the plan
        ("parser = get_parser()\n    args = parser.parse_args()", {"get_parser": (("grad_accum", 4),)}),
        ("parser = get_parser()\n    args = parser.parse_args()", {"get_parser": (("grad_accum", None),)}),
        ("parser = get_parser()\n    p = parser\n    args = p.parse_args()", None),  # handed on
        ("parser = get_parser()\n    parser.set_defaults(grad_accum=2)\n    args = parser.parse_args()", None),
        ("parser = get_parser()\n    args = parser.parse_args()\n    args.grad_accum = 2", None),
        ("parser = get_parser()\n    args = parser.parse_args([])", None),
    ],
)
def test_a_factory_parser_otherwise_is_unknown(bind, factories):
    assert count(bind, factories) is None


def test_the_plan_hands_the_factory_flags_to_its_caller():
    script = b"from apex import amp\nfrom flags import get_parser\n\n\ndef main(model, opt, loss):\n"
    script += b"    args = get_parser().parse_args()\n    with amp.scale_loss(loss, opt) as s:\n        s.backward()\n"
    train = summarise("/r/train.py", "train.py", script)
    plan = build_plan([train], ["/r"], [("/r/flags.py", "flags.py", FACTORY.encode())])
    assert dict(plan.files["/r/train.py"].parser_factories)["get_parser"][0] == ("grad_accum", 1)
    # a file of the same name elsewhere is not what the import finds
    plan = build_plan([train], ["/r"], [("/r/sub/flags.py", "sub/flags.py", FACTORY.encode())])
    assert "/r/train.py" not in plan.files or not plan.files["/r/train.py"].parser_factories
