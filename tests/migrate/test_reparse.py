"""``reparse.next_tree`` gives the text LibCST prints for a rule's output and a tree equal to
a parse of that whole text, reusing the statements the rule did not touch."""

from __future__ import annotations

import os
from typing import Callable, List

import libcst as cst
import pytest

from migrate.reparse import VERIFY_ENV, next_tree
from migrate.rules._tree import StatementTexts
from migrate.rules._traverse import transform
from migrate.rules.base import Rule
from migrate.settings import Settings

TEXT = '''"""Module docstring."""
# leading comment of the imports
import os

# a comment before f
def f(x):
    # first line of f
    return x + 1
    # trailing comment of f's block

# a comment before y
y = f(2)  # trailing
z = [
    1,  # one
]


class C:
    def g(self):
        return old
    # the class block's trailing comment
# a comment at the end of the file
'''


def _edit(source: str, change: Callable[[cst.Module], cst.Module]):
    before = cst.parse_module(source)
    after = change(before)
    text, tree = next_tree(before, source.encode(), after, StatementTexts())
    return before, after, text, tree


def _replace_statement(index: int, code: str) -> Callable[[cst.Module], cst.Module]:
    def change(module: cst.Module) -> cst.Module:
        body = list(module.body)
        body[index : index + 1] = cst.parse_module(code).body
        return module.with_changes(body=body)

    return change


CASES = [
    ("replace a middle statement", _replace_statement(3, "y = f(3)\n")),
    ("replace by two statements", _replace_statement(3, "# new comment\ny = 1\nw = 2\n")),
    (
        "replace the function with its comments",
        _replace_statement(2, "\n# lead\ndef f(x):\n    return x\n    # tail\n"),
    ),
    ("replace the last statement", _replace_statement(5, "class C:\n    pass\n")),
    ("replace the first statement", _replace_statement(0, '"""Other docstring."""\n')),
    ("remove a statement", lambda m: m.with_changes(body=[s for i, s in enumerate(m.body) if i != 4])),
    ("remove the first statement", lambda m: m.with_changes(body=list(m.body[1:]))),
    ("remove the last statement", lambda m: m.with_changes(body=list(m.body[:-1]))),
    ("remove the two last statements", lambda m: m.with_changes(body=list(m.body[:-2]))),
    ("duplicate a statement object", lambda m: m.with_changes(body=[*m.body, m.body[3]])),
    ("change the footer", lambda m: m.with_changes(footer=())),
    ("no change", lambda m: m),
]


@pytest.mark.parametrize("name, change", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_text_is_libcsts_and_tree_is_a_parse_of_it(name: str, change, newline: str) -> None:
    source = TEXT.replace("\n", newline)
    before, after, text, tree = _edit(source, change)
    assert text == after.bytes
    assert tree.deep_equals(cst.parse_module(text))
    assert tree.bytes == text
    if text == source.encode():
        assert tree is before


def test_the_tests_check_every_statement_wise_parse() -> None:
    assert os.environ.get(VERIFY_ENV) == "1"  # set by tests/conftest.py


def test_untouched_statements_are_reused_and_the_changed_ones_parsed_afresh() -> None:
    before, after, text, tree = _edit(TEXT, _replace_statement(3, "y = f(3)\n"))
    assert [a is b for a, b in zip(tree.body, before.body)] == [True, True, True, False, True, True]
    assert tree.body[3] is not after.body[3]  # the rule's own node is not kept: parsed again


def test_a_statement_parsed_alone_has_its_text_known(monkeypatch) -> None:
    """The text a changed statement was parsed from is its text: printing the next rule's
    output does not print it again."""
    before = cst.parse_module(TEXT)
    texts = StatementTexts()
    _, tree = next_tree(before, TEXT.encode(), _replace_statement(3, "y = f(3)  # kept\n")(before), texts)
    fresh = tree.body[3]
    printed: List[cst.CSTNode] = []
    real = cst.Module.code_for_node
    monkeypatch.setattr(cst.Module, "code_for_node", lambda self, node: printed.append(node) or real(self, node))
    known = texts.text(tree, fresh)
    assert printed == []
    assert known == "y = f(3)  # kept\n" == real(tree, fresh)


def test_a_file_without_final_newline_is_parsed_whole() -> None:
    source = TEXT.rstrip("\n")
    before, after, text, tree = _edit(source, _replace_statement(3, "y = f(3)\n"))
    assert text == after.bytes and tree.deep_equals(cst.parse_module(text))
    assert not any(a is b for a, b in zip(tree.body, before.body))


class _Renamer(Rule):
    CODES = {"APX999": "test"}

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.Name:
        return updated_node.with_changes(value="new") if updated_node.value == "old" else updated_node


def test_a_rules_output_keeps_all_but_the_edited_statement() -> None:
    from libcst.codemod import CodemodContext

    before = cst.parse_module(TEXT)
    out = transform(before, _Renamer(CodemodContext(), Settings(), []))
    assert isinstance(out, cst.Module)
    text, tree = next_tree(before, TEXT.encode(), out, StatementTexts())
    assert text == TEXT.replace("old", "new").encode()
    kept: List[bool] = [a is b for a, b in zip(tree.body, before.body)]
    assert kept == [True, True, True, True, True, False]


def test_a_statement_that_becomes_the_first_is_parsed_with_the_whole_text() -> None:
    # a whole parse gives the form feed line leading ``def g`` to the module's header once
    # the import above it is gone
    source = "from apex import amp\n\x0c\ndef g(): pass\nmodel = amp.initialize(model); y = 2\n"
    before = cst.parse_module(source)
    after = before.with_changes(body=[before.body[1], cst.parse_statement("model = model; y = 2\n")])
    text, tree = next_tree(before, source.encode(), after, StatementTexts())
    assert text == after.bytes
    assert tree.deep_equals(cst.parse_module(text))


def test_a_statement_indented_unlike_the_file_keeps_its_indentation() -> None:
    # the file's indentation is the first block's (8 spaces); the edited function is indented
    # by 4: parsed alone, LibCST takes 4 for its default and would print the block with 8
    source = "def f(x):\n        return x\n\n\ndef old():\n    if x:\n        return 1\n"
    before, after, text, tree = _edit(source, lambda m: transform(m, _renamer()))
    assert text == source.replace("def old", "def new").encode()
    assert tree.code.encode() == text
    assert tree.deep_equals(cst.parse_module(text))


def _renamer() -> "_Renamer":
    from libcst.codemod import CodemodContext

    return _Renamer(CodemodContext(), Settings(), [])


NEIGHBOURS = '''import torch


def train(model, batches):
    model.train()
    for x in batches:
        loss = old(x)
        loss.backward()
    return model


# a comment between the two
def main(args):
    model = build(args)
    train(model, args.batches)
    return old
'''


def test_neighbouring_changed_functions_keep_their_untouched_lines() -> None:
    """A rule that edits two functions next to each other: each is parsed again on its own,
    and only the changed lines of its block, so the lines it did not touch stay the objects
    they were (parsing both functions whole cost most of such a rule's new tree)."""
    before, after, text, tree = _edit(NEIGHBOURS, lambda m: transform(m, _renamer()))
    assert text == NEIGHBOURS.replace("old", "new").encode()
    assert tree.deep_equals(cst.parse_module(text))
    old_train, old_main = before.body[1].body.body, before.body[2].body.body
    new_train, new_main = tree.body[1].body.body, tree.body[2].body.body
    assert [a is b for a, b in zip(new_train, old_train)] == [True, False, True]
    assert [a is b for a, b in zip(new_main, old_main)] == [True, True, False]


def test_neighbouring_functions_one_of_them_with_a_new_signature() -> None:
    def change(module: cst.Module) -> cst.Module:
        renamed = transform(module, _renamer())
        train = renamed.body[1]
        params = train.params.with_changes(params=[*train.params.params, cst.Param(cst.Name("scaler"))])
        return renamed.with_changes(body=[renamed.body[0], train.with_changes(params=params), renamed.body[2]])

    before, after, text, tree = _edit(NEIGHBOURS, change)
    assert text == after.bytes
    assert tree.deep_equals(cst.parse_module(text))
    assert tree.body[1] is not before.body[1] and tree.body[2].body.body[0] is before.body[2].body.body[0]
