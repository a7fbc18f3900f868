"""migrate.rules._node_ranges gives every node the range LibCST's PositionProvider gives it
(findings are reported at those ranges)."""

from __future__ import annotations

import os

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper
from libcst.metadata import PositionProvider as LibcstPositions

from migrate.rules._node_ranges import PositionProvider

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
