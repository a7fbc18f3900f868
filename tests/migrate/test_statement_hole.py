"""``_statement_hole.filled_hole``: the sibling branch's expression where one statement has a
hole, layout aside (the clipping rule's merge of ``if fp16: clip(amp.master_params(o)) else:
clip(model.parameters())`` written over different lines)."""

from __future__ import annotations

from migrate.rules._statement_hole import HOLE, filled_hole


def test_the_expression_in_a_statement_wrapped_otherwise():
    pattern = f"clip_grad_norm_(\n    {HOLE}, max_norm)"
    assert filled_hole(pattern, "clip_grad_norm_(model.parameters(), max_norm)") == "model.parameters()"
    wrapped = "clip_grad_norm_(\n    model.parameters(),\n    max_norm,\n)"
    assert filled_hole(f"clip_grad_norm_({HOLE}, max_norm)", wrapped) == "model.parameters()"


def test_comments_and_parentheses_do_not_count():
    text = "norm = (clip_grad_norm_(model.parameters(),  # all of them\n    max_norm))"
    assert filled_hole(f"norm = clip_grad_norm_({HOLE}, max_norm)", text) == "model.parameters()"


def test_statements_that_differ_elsewhere_have_no_filling():
    pattern = f"clip_grad_norm_({HOLE}, max_norm)"
    assert filled_hole(pattern, "clip_grad_norm_(model.parameters(), max_norm, error_if_nonfinite=True)") is None
    assert filled_hole(pattern, "clip_grad_norm_(model.parameters(), 2 * max_norm)") is None
    assert filled_hole(pattern, "clip_grad_value_(model.parameters(), max_norm)") is None
    assert filled_hole(pattern, "x = clip_grad_norm_(model.parameters(), max_norm)") is None


def test_a_hole_used_twice_or_text_that_does_not_parse():
    assert filled_hole(f"f({HOLE}, {HOLE})", "f(a, b)") is None
    assert filled_hole(f"f({HOLE}", "f(a)") is None
    assert filled_hole(f"f({HOLE})", "f(a") is None
