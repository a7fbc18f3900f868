"""migrate.rules._tree and ._metadata give exactly what LibCST's children, parent links and
qualified names give, on real code."""

from __future__ import annotations

import ast
import glob
import os
from typing import Dict, FrozenSet, List, Tuple

import libcst as cst
import pytest
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


Shape = Tuple[str, str, str]


def _syntax_shapes(path: str) -> FrozenSet[Shape]:
    """Each (parent class, field, child class) of the file's stdlib syntax tree: which
    constructs it holds, and where (a comprehension inside a class body, a format spec)."""
    with open(path, "rb") as fh:
        tree = ast.parse(fh.read())
    found = set()
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    found.add((type(parent).__name__, field, type(child).__name__))
    return frozenset(found)


def _shape_cover(paths: List[str]) -> List[str]:
    """A few of ``paths`` that together hold every syntax shape any of them holds (greedy:
    the file adding the most new shapes first, the smaller of equals).  LibCST's own
    children and qualified names cost minutes over the whole corpus, which grows with every
    test file; what the comparison needs is every construct, in every place, once."""
    shapes: Dict[str, FrozenSet[Shape]] = {path: _syntax_shapes(path) for path in paths}
    left = set().union(*shapes.values())
    chosen = []
    while left:
        best = max(paths, key=lambda path: (len(shapes[path] & left), -os.path.getsize(path)))
        chosen.append(best)
        left -= shapes[best]
    return sorted(chosen)


COVER = _shape_cover(CORPUS)


def test_the_cover_holds_every_shape_of_the_corpus() -> None:
    everything = set().union(*(_syntax_shapes(path) for path in CORPUS))
    assert set().union(*(_syntax_shapes(path) for path in COVER)) == everything
    assert len(everything) > 500 and len(COVER) < len(CORPUS) / 2


@pytest.mark.parametrize("path", COVER, ids=[os.path.relpath(p, os.path.dirname(HERE)) for p in COVER])
def test_same_children_parents_and_qualified_names_as_libcst(path: str) -> None:
    with open(path, "rb") as fh:
        module = cst.parse_module(fh.read())
    expected = list(_libcst_walk(module))
    assert list(walk(module)) == expected
    for node in expected:
        assert children(node) == list(node.children), type(node).__name__
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    assert dict(wrapper.resolve(ParentProvider)) == dict(wrapper.resolve(ParentNodeProvider))
    ours, theirs = wrapper.resolve(QualifiedNameProvider), wrapper.resolve(LibcstQualifiedNameProvider)
    for node in expected:
        assert _names(ours.get(node, set())) == _names(theirs.get(node, set())), type(node).__name__
