"""migrate.rules._node_ranges gives every node the range LibCST's PositionProvider gives it
(findings are reported at those ranges)."""

from __future__ import annotations

import os

import libcst as cst
import pytest
from libcst.metadata import CodePosition, MetadataWrapper
from libcst.metadata import PositionProvider as LibcstPositions

from migrate.rules._node_ranges import PositionProvider
from migrate.rules._tree import StatementTexts, printing_by_statement

SOURCES = {
    "crlf": b"x = [1,\r\n  2]  # c\r\n\r\ndef f(a,\r\n      b=2):\r\n    return a\r\n",
    "lone-cr": b"if a:\r    b = 1\r    c = '''\r\n'''\r",
    "mixed": b"a = 1\r\nb = (2,\r 3)\rc = '''x\r\ny'''\n",
    "decorated": b"@dec(\n    1)\n# comment\nclass C(  # why\n    Base):\n    @property\n    def p(self): return 1\n",
    "strings": b"s = f'{a!r:>{w}} {b}'  \\\n    'tail'\nt = '''\nx\n'''; u = 2\n",
    "empty": b"",
    "no-newline-at-end": b"import os\nos.getcwd()",
    "tabs": b"def f():\n\tif x:\n\t\treturn [\n\t\t\t1]\n",
    "unicode": "név = 'ő'  # ünnep\nπ = 3.14\n".encode("utf-8"),
}


def _both(source: bytes):
    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    return wrapper.resolve(LibcstPositions), wrapper.resolve(PositionProvider)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_same_range_for_every_node(name: str) -> None:
    theirs, ours = _both(SOURCES[name])
    assert set(ours) == set(theirs)
    assert {node: ours[node] for node in ours} == dict(theirs)


def test_same_ranges_on_this_package() -> None:
    """The migrator's own sources: every node kind the rules print, long files."""
    root = os.path.join(os.path.dirname(__file__), "..", "..", "migrate", "rules")
    for name in ("_amp_sites.py", "clipping.py", "_node_ranges.py"):
        with open(os.path.join(root, name), "rb") as handle:
            theirs, ours = _both(handle.read())
        assert {node: ours[node] for node in ours} == dict(theirs), name


def test_unknown_node_is_a_key_error() -> None:
    _, ours = _both(b"a = 1\n")
    with pytest.raises(KeyError):
        ours[cst.Name("a")]


def _statementwise(module: cst.Module, texts: StatementTexts):
    with printing_by_statement(texts):
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_statementwise_ranges_are_libcsts(name: str) -> None:
    module = cst.parse_module(SOURCES[name])
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    ours = _statementwise(module, StatementTexts())
    assert {node: ours[node] for node in theirs} == dict(theirs)


def test_statementwise_ranges_on_this_package() -> None:
    root = os.path.join(os.path.dirname(__file__), "..", "..", "migrate", "rules")
    with open(os.path.join(root, "_amp_sites.py"), "rb") as handle:
        module = cst.parse_module(handle.read())
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    ours = _statementwise(module, StatementTexts())
    assert {node: ours[node] for node in theirs} == dict(theirs)


def test_statement_offsets_are_reused_by_the_next_tree() -> None:
    """A tree sharing statements with one already asked about prints only its new ones;
    the shared statements' nodes move by the lines the new statement adds."""
    first = cst.parse_module(b"import os\n\ndef f(a):\n    return a\n\nx = f(1)\n")
    texts = StatementTexts()
    last_call = first.body[2].body[0].value
    assert _statementwise(first, texts)[last_call].start == CodePosition(6, 4)
    printed = len(texts._facts)
    assert printed == 3
    longer = cst.parse_statement("y = (\n    2)\n")
    second = first.with_changes(body=[first.body[0], longer, *first.body[1:]])
    ranges = _statementwise(second, texts)
    assert ranges[last_call].start == CodePosition(8, 4)
    assert len(texts._facts) == printed + 1  # only the new statement was printed
    theirs = MetadataWrapper(second, unsafe_skip_copy=True).resolve(LibcstPositions)
    assert ranges[last_call] == theirs[last_call]


def test_statementwise_module_and_header_nodes() -> None:
    module = cst.parse_module(b"# header\n\nimport os\n")
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    ours = _statementwise(module, StatementTexts())
    assert ours[module] == theirs[module]
    assert ours[module.header[0]] == theirs[module.header[0]]
