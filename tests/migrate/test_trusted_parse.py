"""LibCST's parser without its nodes' self-checks (``trusted_parse``): the same trees and
the same errors as ``libcst.parse_module``, and nodes built elsewhere are still checked."""

from __future__ import annotations

import pathlib

import libcst as cst
import pytest

from migrate import trusted_parse

PACKAGE = pathlib.Path(trusted_parse.__file__).parent


def test_the_hook_it_switches_off_is_where_this_libcst_checks_its_nodes() -> None:
    assert trusted_parse._TRUSTED  # else every parse is LibCST's own (still correct, slower)


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py"))[::7], ids=lambda p: p.name)
def test_a_file_parses_to_the_tree_libcst_gives(path: pathlib.Path) -> None:
    source = path.read_bytes()
    trusted = trusted_parse.parse_module(source)
    assert trusted.deep_equals(cst.parse_module(source))
    assert trusted.bytes == source


def test_a_config_is_passed_on(monkeypatch) -> None:
    seen = []
    parse = cst.parse_module
    monkeypatch.setattr(cst, "parse_module", lambda source, config: seen.append(config) or parse(source, config))
    config = cst.PartialParserConfig(default_indent="\t")
    trusted_parse.parse_module("x = 1\n", config)
    trusted_parse.parse_module("x = 1\n")
    assert seen == [config, cst.PartialParserConfig()]


def test_errors_are_libcst_s_and_nodes_built_after_any_parse_are_checked() -> None:
    with pytest.raises(cst.ParserSyntaxError):
        trusted_parse.parse_module("def broken(:\n")
    for source in ("x = 1\n", "def broken(:\n"):
        try:
            trusted_parse.parse_module(source)
        except cst.ParserSyntaxError:
            pass
        with pytest.raises(cst.CSTValidationError):
            cst.Name("not a name")
