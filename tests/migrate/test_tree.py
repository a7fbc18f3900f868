"""migrate.rules._tree and ._metadata give exactly what LibCST's children, parent links and
qualified names give, on real code."""

from __future__ import annotations

import glob
import os

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import MetadataWrapper, ParentNodeProvider
from libcst.metadata import QualifiedNameProvider as LibcstQualifiedNameProvider

import migrate
from migrate.rules import _tree
from migrate.rules._metadata import ParentProvider, QualifiedNameProvider
from migrate.rules._child_fields import child_fields
from migrate.rules._tree import children, walk

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


def _names(value):
    return set(value() if isinstance(value, LazyValue) else value)


def _libcst_walk(node: cst.CSTNode):
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.children))


def test_a_field_visited_only_when_set_is_read_where_it_is_set(monkeypatch) -> None:
    monkeypatch.setattr(_tree, "_READERS", {})  # read afresh, from this file's order: no spec first
    module = cst.parse_module(FSTRINGS)
    for node in _libcst_walk(module):
        assert children(node) == list(node.children)
    assert "format_spec" in [name for name, _ in child_fields(cst.FormattedStringExpression)]


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
        ours, theirs = wrapper.resolve(QualifiedNameProvider), wrapper.resolve(LibcstQualifiedNameProvider)
        for node in expected:
            assert _names(ours.get(node, set())) == _names(theirs.get(node, set())), (path, type(node).__name__)
        checked += len(expected)
    assert checked > 100_000
