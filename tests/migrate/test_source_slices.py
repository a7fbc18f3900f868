"""The statements' texts cut from the file (``migrate.source_slices``) are what LibCST
prints for them, or there are none; a file whose replaced statements LibCST does not print
back is refused (``StatementTexts.reprints_replaced``)."""

from __future__ import annotations

import libcst as cst
import pytest

from migrate.engine import migrate_source
from migrate.rules._tree import StatementTexts
from migrate.settings import Settings
from migrate.source_slices import statement_slices

SETTINGS = Settings(target="native")

SHAPES = {
    "plain": "import os\nx = 1\n\n\ndef f():\n    return x\n",
    "header comments": "#!/usr/bin/env python\n# a licence\n\n# about x\nx = 1\n",
    "footer comments": "x = 1\n\n# the end\n\n",
    "semicolons": "a = 1; b = 2\nc = (3,\n     4); d = 5\n",
    "decorators with comments": (
        "import functools\n\n# before the decorator\n@functools.lru_cache()\n# between\n@staticmethod\n\n"
        "def f():\n    pass\n"
    ),
    "decorated class after a comment": "x = 1\n# a note\n\n@dataclass\nclass A:\n    y: int = 0\n",
    "comments trailing a block": "def f():\n    return 1\n    # indented after the body\n# at the margin\nx = 2\n",
    "strings over lines": 's = """one\ntwo\n"""\nt = f"{s}\\n"\nu = (\n    "a"\n    "b"\n)\n',
    "continued lines": "x = 1 + \\\n    2\nif x:\n    y = 3 \\\n        + 4\n",
    "compound statements": (
        "try:\n    import apex\nexcept ImportError:  # none\n    apex = None\nelse:\n    pass\nfinally:\n    pass\n"
        "for i in range(3):\n    pass\nelse:\n    pass\nwhile False:\n    pass\nwith open('f') as fh:\n    pass\n"
        "async def g():\n    async with a as b:\n        pass\n"
        "if __name__ == '__main__':\n    main()\n"
    ),
    "form feed and tabs": "x = 1\n\x0c\ndef f():\n\treturn 2\n",
    "a parenthesized first token": "(a) = 1\n[b, c] = 2, 3\n",
}


@pytest.mark.parametrize("text", SHAPES.values(), ids=SHAPES.keys())
def test_each_statement_s_text_is_its_printing(text: str) -> None:
    module = cst.parse_module(text)
    found = statement_slices(module, text)
    assert found is not None
    slices = [part.text for part in found]
    assert slices == [module.code_for_node(statement) for statement in module.body]
    lines = [1 + len(module.header)]
    for part in slices[:-1]:
        lines.append(lines[-1] + part.count("\n"))
    assert [part.line for part in found] == lines
    header = "".join(module.code_for_node(line) for line in module.header)
    footer = "".join(module.code_for_node(line) for line in module.footer)
    assert header + "".join(slices) + footer == text


@pytest.mark.parametrize(
    "text",
    [
        "x = 1\r\ny = 2\r\n",  # a carriage return: LibCST's printing may not give it back
        "\ufeffx = 1\n",  # a byte-order mark
        "x = 1\ny = 2",  # no final newline
        "@ \\\n  decorator\ndef f():\n    pass\n",  # the decorator's expression below its @
    ],
    ids=["carriage return", "byte-order mark", "no final newline", "split decorator"],
)
def test_no_slices_where_they_cannot_be_told(text: str) -> None:
    assert statement_slices(cst.parse_module(text), text) is None


def test_an_empty_module_has_no_slices() -> None:
    assert statement_slices(cst.parse_module("# only a comment\n"), "# only a comment\n") is None


def test_a_replaced_statement_counts_only_where_its_printing_differs() -> None:
    text = "x = 1\ny = 2\n"
    module = cst.parse_module(text)
    first, second = module.body
    texts = StatementTexts()
    assert texts.read_source(module, text)
    assert texts.text(module, first) == "x = 1\n"
    texts.note_printed(module.with_changes(body=[first]))  # ``y = 2`` replaced
    assert texts.reprints_replaced(module)  # printed now: the file's text
    texts.learn(module, second, "y = 2  # printed otherwise\n")  # a printing of it that differs
    assert not texts.reprints_replaced(module)


def test_a_changed_file_whose_replaced_statement_does_not_print_back_is_refused(monkeypatch) -> None:
    source = b"from apex.parallel import DistributedDataParallel as DDP\nmodel = DDP(model)\n"
    assert migrate_source(source, "ok.py", SETTINGS).new != source
    monkeypatch.setattr(StatementTexts, "reprints_replaced", lambda self, module: False)
    refused = migrate_source(source, "train.py", SETTINGS)
    assert refused.new == source
    assert refused.internal_error is not None and "does not reproduce" in refused.internal_error.message
