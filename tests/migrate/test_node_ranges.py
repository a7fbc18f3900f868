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


def _printed(texts: StatementTexts) -> set:
    """The ids of the statements printed so far, with offsets or for their text."""
    return {key[1] for key in texts._facts if key[0].startswith("offsets")} | {key[0] for key in texts._texts}


def test_statement_offsets_are_reused_by_the_next_tree() -> None:
    """A tree sharing statements with one already asked about prints only its new ones;
    the shared statements' nodes move by the lines the new statement adds."""
    first = cst.parse_module(b"import os\n\ndef f(a):\n    return a\n\nx = f(1)\n")
    texts = StatementTexts()
    last_call = first.body[2].body[0].value
    assert _statementwise(first, texts)[last_call].start == CodePosition(6, 4)
    printed = _printed(texts)
    assert printed == {id(statement) for statement in first.body}
    longer = cst.parse_statement("y = (\n    2)\n")
    second = first.with_changes(body=[first.body[0], longer, *first.body[1:]])
    ranges = _statementwise(second, texts)
    assert ranges[last_call].start == CodePosition(8, 4)
    assert _printed(texts) == printed | {id(longer)}  # only the new statement was printed
    theirs = MetadataWrapper(second, unsafe_skip_copy=True).resolve(LibcstPositions)
    assert ranges[last_call] == theirs[last_call]


def test_statementwise_module_and_header_nodes() -> None:
    module = cst.parse_module(b"# header\n\nimport os\n")
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    ours = _statementwise(module, StatementTexts())
    assert ours[module] == theirs[module]
    assert ours[module.header[0]] == theirs[module.header[0]]


#: statement lines at every depth of every compound statement, lines continued in brackets
NESTED = (
    "import os\n\n\n"
    "class C(Base):\n"
    "    # a comment\n"
    "    def f(self, a):\n"
    "        if a:\n"
    "            x = call(a,\n"
    "                     b)  # trailing\n"
    "        elif b:\n"
    "            y = 1; z = 2\n"
    "        else:\n"
    "\n"
    "            w = [\n"
    "                3]\n"
    "        for i in r:\n"
    "            pass\n"
    "        else:\n"
    "            q = i\n"
    "        while t:\n"
    "            break\n"
    "        else:\n"
    "            v = 0\n"
    "        try:\n"
    "            import apex\n"
    "        except ImportError as e:\n"
    "            apex = None\n"
    "        except (OSError, ValueError):\n"
    "            pass\n"
    "        else:\n"
    "            u = apex.amp\n"
    "        finally:\n"
    "            done = True\n"
    "        with open(p) as fh, open(q):\n"
    "            text = fh.read()\n"
    "        match text:\n"
    "            case 'a':\n"
    "                m = 1\n"
    "            case _:\n"
    "                m = 2\n"
    "        return x\n\n\n"
    "async def g():\n"
    "\tasync with a as b:\n"
    "\t\tasync for c in b:\n"
    "\t\t\tawait c\n"
    "if x: y = 1\n"
)


@pytest.mark.parametrize("source", ["nested", "clipping.py"])
def test_ranges_from_statement_lines_printed_alone_are_libcsts(source: str) -> None:
    """With the statements' texts read from the file (``StatementTexts.read_source``) and
    their walks known, a node of a statement line nested in a top-level statement is
    placed from that line printed alone and the line's first line in the stdlib tree; the
    top-level statements holding them are printed with offsets only where needed."""
    from migrate.rules._tree import walk

    if source == "nested":
        text = NESTED
    else:
        root = os.path.join(os.path.dirname(__file__), "..", "..", "migrate", "rules")
        with open(os.path.join(root, source), encoding="utf-8") as handle:
            text = handle.read()
    module = cst.parse_module(text)
    theirs = MetadataWrapper(module, unsafe_skip_copy=True).resolve(LibcstPositions)
    texts = StatementTexts()
    assert texts.read_source(module, text)
    with printing_by_statement(texts):
        list(walk(module))  # the statement walks the rules' metadata makes
        ours = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nested = [
            node for node in theirs
            if isinstance(node, (cst.Name, cst.Call)) and any(type(c) is cst.SimpleStatementLine for c in texts.chain_to(node)[1:])
        ]
        assert len(nested) > 10
        assert {node: ours[node] for node in nested} == {node: theirs[node] for node in nested}
        printed_whole = [key for key in texts._facts if key[0].startswith("offsets")]
        assert not printed_whole  # each call's line was printed alone
        assert {node: ours[node] for node in theirs} == dict(theirs)


def test_no_line_where_the_stdlib_statement_is_of_another_kind() -> None:
    from migrate.nested_lines import statement_line
    import ast

    module = cst.parse_module("def f():\n    x = 1\n")
    function = module.body[0]
    chain = [function, function.body, function.body.body[0]]
    assert statement_line(chain, ast.parse("def f():\n    x = 1\n").body[0]) == 2
    assert statement_line(chain, ast.parse("class f:\n    x = 1\n").body[0]) is None
    assert statement_line(chain, ast.parse("def f():\n    pass\n").body[0]) == 2  # the same place
    assert statement_line(chain, ast.parse("def f(): pass\n").body[0]) == 1


def test_a_node_shared_with_an_earlier_tree_is_placed_in_the_tree_asked_about() -> None:
    """A rule's output keeps the nodes it did not change inside a statement it changed: the
    same node object sits in the earlier tree's statement and in the new one, and its range
    is the one it has in the tree asked about."""
    from migrate.rules._tree import walk

    first = cst.parse_module("import os\n\n\ndef f(a):\n    x = g(a)\n    return x\n")
    texts = StatementTexts()
    function = first.body[1]
    kept_line = function.body.body[1]
    with printing_by_statement(texts):
        list(walk(first))
        assert _statementwise(first, texts)[kept_line].start == CodePosition(6, 4)
        added = cst.parse_statement("y = (\n    1)\n")
        changed = function.with_changes(body=function.body.with_changes(body=[added, *function.body.body]))
        second = first.with_changes(body=[first.body[0], changed])
        ranges = _statementwise(second, texts)
        theirs = MetadataWrapper(second, unsafe_skip_copy=True).resolve(LibcstPositions)
        assert ranges[kept_line] == theirs[kept_line] and ranges[kept_line].start == CodePosition(8, 4)
        assert ranges[kept_line.body[0].value] == theirs[kept_line.body[0].value]
    # found in the new statement's walk: the statement before it was not printed for offsets
    assert not texts.knows(f"offsets {first.default_indent!r} {first.default_newline!r}", first.body[0])
