"""Printing without LibCST's position hook (``rules._printing``): the text LibCST prints."""

from __future__ import annotations

import pathlib

import libcst as cst
import pytest

from migrate.rules._printing import printed

PACKAGE = pathlib.Path(printed.__code__.co_filename).parents[1]


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py"))[3::11], ids=lambda p: p.name)
def test_a_module_and_each_statement_print_as_libcst_prints_them(path: pathlib.Path) -> None:
    module = cst.parse_module(path.read_bytes())
    assert printed(module, module) == module.code
    for statement in module.body:
        assert printed(module, statement) == module.code_for_node(statement)


@pytest.mark.parametrize(
    "source",
    ["x = (1)  # c\r\n", "if x:\n\ty = [\n  1,\n]\n", "def f():\n    return (yield)", "", "\n\n# only a comment"],
)
def test_indents_newlines_and_the_file_s_ends_are_libcst_s(source: str) -> None:
    module = cst.parse_module(source)
    assert printed(module, module) == module.code == source


PARENTHESIZED = "x = ((a + (b)) * (yield))\nf((lambda: (1)), *(c), **(d))\nwith (open(p)) as (fh):\n    y = (z)[(0)]\n"


@pytest.fixture
def direct_parentheses(monkeypatch):
    """``print_parentheses_directly`` for one test (LibCST's own hook put back after it)."""
    from libcst._nodes.expression import _BaseParenthesizedNode

    from migrate.rules._printing import print_parentheses_directly

    monkeypatch.setattr(_BaseParenthesizedNode, "_parenthesize", _BaseParenthesizedNode.__dict__["_parenthesize"])
    assert print_parentheses_directly() and print_parentheses_directly()  # (a second call changes nothing)


@pytest.mark.parametrize(
    "source", [PARENTHESIZED, *(p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))[5::17])]
)
def test_parentheses_printed_directly_give_libcst_s_text_and_positions(source: str, request) -> None:
    from libcst.metadata import MetadataWrapper, PositionProvider

    from migrate.rules._node_ranges import PositionProvider as OurPositions

    module = cst.parse_module(source)
    before = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider))
    ours_before = dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(OurPositions))
    request.getfixturevalue("direct_parentheses")
    assert module.code == source and printed(module, module) == source
    assert dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)) == before
    assert dict(MetadataWrapper(module, unsafe_skip_copy=True).resolve(OurPositions)) == ours_before == before
