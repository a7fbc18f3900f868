"""migrate.rules._tree lists exactly LibCST's children, in the same order, on real code."""

from __future__ import annotations

import glob
import os

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider

import migrate
from migrate.rules import _tree
from migrate.rules._tree import ParentProvider, children, walk

HERE = os.path.dirname(__file__)
#: the tool's own source, its test fixtures and e2e scripts, and a file with every f-string
#: shape (format_spec is visited only when present)
CORPUS = sorted(glob.glob(os.path.join(os.path.dirname(migrate.__file__), "**", "*.py"), recursive=True)) + sorted(
    glob.glob(os.path.join(HERE, "**", "*.py"), recursive=True)
)

FSTRINGS = '''
x = f"{a}"
y = f"{a:>10}" f"{b!r:{width}.{prec}}" f"{c=}" f"{d!s}"
z = f"{a}" + f"{b:x}"
'''


def _libcst_walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.children))


def test_a_field_visited_only_when_set_is_learnt_from_the_first_node_that_sets_it(monkeypatch) -> None:
    monkeypatch.setattr(_tree, "_FIELDS", {})  # learn from this file's order: no spec first
    module = cst.parse_module(FSTRINGS)
    for node in _libcst_walk(module):
        assert children(node) == list(node.children)
    assert "format_spec" in _tree._FIELDS[cst.FormattedStringExpression].order


def test_same_children_and_parents_as_libcst_on_the_corpus() -> None:
    assert len(CORPUS) > 50
    checked = 0
    for path in CORPUS:
        with open(path, "rb") as fh:
            module = cst.parse_module(fh.read())
        expected = list(_libcst_walk(module))
        assert list(walk(module)) == expected, path
        for node in expected:
            assert children(node) == list(node.children), (path, type(node).__name__)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        assert dict(wrapper.resolve(ParentProvider)) == dict(wrapper.resolve(ParentNodeProvider)), path
        checked += len(expected)
    assert checked > 100_000
