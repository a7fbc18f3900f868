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
