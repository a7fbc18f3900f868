"""``tree_merge``: two rules' outputs of one tree, merged; and the engine's same-text groups,
which must give what running the rules one after the other gives."""

from __future__ import annotations

from typing import Any, List, Sequence, Union

import libcst as cst
import pytest

from migrate import engine, tree_merge
from migrate.engine import migrate_source
from migrate.rules import ALL_RULES
from migrate.rules.base import example_files
from migrate.settings import Settings

BASE = """import os
import apex


def train(model, loader):
    model.train()
    for batch in loader:
        loss = model(batch)
        loss.backward()
        step(model)


def evaluate(model):
    return model.eval()
"""


def replaced(node: Any, old: cst.CSTNode, new: Union[cst.CSTNode, Sequence[cst.CSTNode]]) -> Any:
    """``node`` with ``old`` replaced by ``new`` (a list: spliced into the list holding
    ``old``), every other subtree the very object it was, as a rule's output keeps it."""
    if node is old:
        return new
    for name in tree_merge._field_names(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            changed = replaced(value, old, new)
            if changed is not value:
                return node.with_changes(**{name: changed})
        elif isinstance(value, (list, tuple)):
            for index, item in enumerate(value):
                changed = replaced(item, old, new) if isinstance(item, cst.CSTNode) else item
                if changed is not item:
                    spliced = list(changed) if isinstance(changed, list) else [changed]
                    return node.with_changes(**{name: [*value[:index], *spliced, *value[index + 1 :]]})
    return node


def statement(code: str) -> cst.BaseStatement:
    return cst.parse_statement(code)


def code(tree: cst.Module) -> str:
    return tree.code


def function(tree: cst.Module, name: str) -> cst.FunctionDef:
    return next(s for s in tree.body if isinstance(s, cst.FunctionDef) and s.name.value == name)


def loop_body(tree: cst.Module) -> List[cst.BaseStatement]:
    loop = function(tree, "train").body.body[1]
    return list(loop.body.body)


@pytest.fixture
def base() -> cst.Module:
    return cst.parse_module(BASE)


def test_untouched_sides_give_the_other(base):
    first = replaced(base, base.body[0], statement("import sys\n"))
    assert tree_merge.merge(base, first, base) is first
    assert tree_merge.merge(base, base, first) is first
    assert tree_merge.merge(base, base, base) is base


def test_edits_of_different_statements_are_both_kept(base):
    first = replaced(base, base.body[1], [])  # the apex import removed
    second = replaced(base, function(base, "evaluate"), statement("def evaluate(model):\n    return None\n"))
    merged = tree_merge.merge(base, first, second)
    assert merged is not None
    assert code(merged) == code(replaced(first, function(first, "evaluate"), statement("def evaluate(model):\n    return None\n")))
    assert "import apex" not in code(merged) and "return None" in code(merged)


def test_edits_of_different_statements_of_one_block_are_both_kept(base):
    backward, step = loop_body(base)[1], loop_body(base)[2]
    first = replaced(base, backward, [statement("scaler.scale(loss).backward()\n")])
    second = replaced(base, step, [statement("scaler.step(opt)\n"), statement("scaler.update()\n")])
    merged = tree_merge.merge(base, first, second)
    assert merged is not None
    assert "        scaler.scale(loss).backward()\n        scaler.step(opt)\n        scaler.update()\n" in code(merged)
    # the untouched function is the very object of the base
    assert function(merged, "evaluate") is function(base, "evaluate")


def test_a_removed_statement_beside_a_changed_function(base):
    """One side drops the import before ``train`` and changes ``train``; the other changes
    ``train``'s loop: ``train`` is told apart from the removal as the same function changed."""
    new_train = replaced(function(base, "train"), function(base, "train").body.body[0], [])
    first = replaced(replaced(base, base.body[1], []), function(base, "train"), new_train)
    second = replaced(base, loop_body(base)[1], [statement("scaler.scale(loss).backward()\n")])
    merged = tree_merge.merge(base, first, second)
    assert merged is not None
    text = code(merged)
    assert "import apex" not in text and "model.train()" not in text and "scaler.scale(loss)" in text


def test_a_comment_and_an_edit_of_the_same_statement(base):
    backward = loop_body(base)[1]
    comment = cst.EmptyLine(comment=cst.Comment("# TODO: look here"))
    first = replaced(base, backward, backward.with_changes(leading_lines=[comment]))
    new_body = [cst.Expr(cst.parse_expression("scaler.scale(loss).backward()"))]
    second = replaced(base, backward, backward.with_changes(body=new_body))
    merged = tree_merge.merge(base, first, second)
    assert merged is not None
    assert "        # TODO: look here\n        scaler.scale(loss).backward()\n" in code(merged)


@pytest.mark.parametrize(
    "first_code, second_code",
    [
        ("a()\n", "b()\n"),  # the same statement rewritten twice
        ("a()\n", None),  # rewritten by one side, removed by the other
    ],
)
def test_the_same_statement_changed_twice_is_a_conflict(base, first_code, second_code):
    backward = loop_body(base)[1]
    first = replaced(base, backward, [statement(first_code)])
    second = replaced(base, backward, [statement(second_code)] if second_code else [])
    assert tree_merge.merge(base, first, second) is None


def test_two_insertions_at_one_place_are_a_conflict(base):
    """Which goes first depends on the order the rules ran in."""
    step = loop_body(base)[2]
    first = replaced(base, step, [statement("a()\n"), step])
    second = replaced(base, step, [statement("b()\n"), step])
    assert tree_merge.merge(base, first, second) is None


def test_a_node_of_another_class_is_a_conflict(base):
    backward = loop_body(base)[1]
    call = backward.body[0].value
    first = replaced(base, call, cst.parse_expression("wrapped(loss.backward())"))
    second = replaced(base, call.func, cst.parse_expression("loss.other"))
    assert tree_merge.merge(base, first, second) is None


# --- the engine's groups against the rules one after the other ----------------------------


def _examples() -> List[Any]:
    cases = []
    for rule in ALL_RULES:
        for example in rule.EXAMPLES + rule.NOOP_EXAMPLES:
            if len(example_files(example.before)) == 1:
                cases.append(pytest.param(example, id=f"{rule.__name__}:{example.id}"))
    return cases


def _run(text: bytes, settings: Settings):
    result = migrate_source(text, "example.py", settings)
    return result.new, sorted(result.findings), result.internal_error


@pytest.mark.parametrize("example", _examples())
def test_same_text_groups_give_the_sequential_result(example, monkeypatch):
    """Each example migrated with the groups and with every rule on the text the previous
    one left: the same text and the same findings, at the same places."""
    before = example.before.encode("utf-8")
    grouped = _run(before, example.settings)
    monkeypatch.setattr(engine, "SAME_TEXT_GROUPS", ())
    assert _run(before, example.settings) == grouped


def _refusals(monkeypatch) -> list:
    refused: list = []
    merge = tree_merge.merge

    def counting(*args, **kwargs):
        merged = merge(*args, **kwargs)
        refused.append(merged is None)
        return merged

    monkeypatch.setattr(tree_merge, "merge", counting)
    return refused


def test_an_if_read_whole_is_finished_on_what_the_earlier_rules_left(monkeypatch):
    """The step rule scales the plain branch's backward; the scale-loss rule writes the
    ``if`` once when both branches read the same: on the shared text its edit of the ``if``
    is applied to the merged ``if``, as it would be to the step rule's output."""
    from migrate.rules.step import StepRule

    example = next(e for e in StepRule.EXAMPLES if e.id == "identical-branches-under-a-test-that-only-reads-values-are-written-once")
    refused = _refusals(monkeypatch)
    new, findings, error = _run(example.before.encode(), example.settings)
    assert error is None and refused and not any(refused)
    assert new.decode() == example.after  # the if written once
    monkeypatch.setattr(engine, "SAME_TEXT_GROUPS", ())
    assert _run(example.before.encode(), example.settings) == (new, findings, error)


def test_a_node_read_whole_is_finished_by_the_later_rule_or_refused():
    tree = cst.parse_module("if fp16:\n    a()\nelse:\n    b()\n")
    branch = tree.body[0]
    first = replaced(tree, branch.body.body[0], [statement("x()\n")])
    second = replaced(tree, branch.orelse.body.body[0], [statement("y()\n")])
    finished = tree_merge.merge(tree, first, second, {branch: lambda node: [statement("done()\n")]})
    assert finished is not None and finished.code == "done()\n"
    # the node was read whole by the earlier rule (no finish with the later output)
    assert tree_merge.merge(tree, first, second, {branch: None}) is None


def test_a_conflict_runs_the_rule_again_on_the_text_the_others_left(monkeypatch):
    """A clip inside the ``amp.scale_loss`` block: the clipping rule edits inside the block
    the scale-loss rule replaces; the merge refuses, and the scale-loss rule runs again on
    the clipping rule's output (its findings and file state of the first try dropped)."""
    from migrate.rules.clipping import ClippingRule

    example = next(e for e in ClippingRule.EXAMPLES if e.id == "clip-in-the-block-and-a-read-after-it-share-one-unscale")
    refused = _refusals(monkeypatch)
    grouped = _run(example.before.encode(), example.settings)
    assert any(refused) and grouped[2] is None
    assert grouped[0].decode() == example.after
    monkeypatch.setattr(engine, "SAME_TEXT_GROUPS", ())
    assert _run(example.before.encode(), example.settings) == grouped


def test_an_answer_is_kept_for_the_same_tree_only():
    from migrate.rules._per_tree import remembered

    slot: list = []
    computed = []
    tree, same_text = cst.parse_module("x = 1\n"), cst.parse_module("x = 1\n")

    def ask(module, recorded):
        return remembered(slot, (module, recorded), lambda: computed.append(module) or len(computed))

    assert ask(tree, "{}") == ask(tree, "{}") == 1  # the same tree, the same recorded state
    assert ask(same_text, "{}") == 2  # another tree of the same text: asked again
    assert ask(same_text, "{'f': 'amp'}") == 3  # the initialize rule recorded more
    assert ask(same_text, "{'f': 'amp'}") == 3
