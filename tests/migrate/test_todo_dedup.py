"""rules/_edits.with_leading: a second run does not add a TODO that differs from the one an
earlier run wrote only by the module-scaler clause (whether that plan is tried depends on which
files still used apex.amp, which the earlier run changed: ignite's shape) or by the files named as
reading the attribute apex.amp is stored on (TencentPretrain's shape)."""

from __future__ import annotations

import libcst as cst

from migrate.rules._edits import todo_lines, with_leading

SHIM = "; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand"
REASON = "amp.initialize is not in this file (f is exported by the __all__ of pkg/__init__.py: callers outside)"
INSIDE = (
    "amp.initialize is not in this file (f is exported by the __all__ of pkg/__init__.py: callers outside; nor "
    "can a module-level GradScaler stand in (the GradScaler plan across files was dropped: in pkg/a.py, (x)))"
)
AT_END = "no amp.scale_loss in this file; nor can a module-level GradScaler stand in (the plan was dropped: (y))"


def _statement_with(message: str) -> cst.SimpleStatementLine:
    stmt = cst.parse_statement("loss.backward()\n")
    return with_leading(stmt, todo_lines(message))


def _todo_count(stmt: cst.SimpleStatementLine) -> int:
    return sum(1 for line in stmt.leading_lines if line.comment is not None and "TODO(apexcompat)" in line.comment.value)


def test_the_module_scaler_clause_inside_a_parenthesis_adds_no_second_todo() -> None:
    first = _statement_with(REASON + SHIM)
    assert _todo_count(with_leading(first, todo_lines(INSIDE + SHIM))) == 1


def test_the_clause_at_the_end_and_the_reverse_direction_add_no_second_todo() -> None:
    first = _statement_with("no amp.scale_loss in this file" + SHIM)
    assert _todo_count(with_leading(first, todo_lines(AT_END + SHIM))) == 1
    later = _statement_with(AT_END + SHIM)
    assert _todo_count(with_leading(later, todo_lines("no amp.scale_loss in this file" + SHIM))) == 1


def test_another_reason_is_still_added() -> None:
    first = _statement_with(REASON + SHIM)
    assert _todo_count(with_leading(first, todo_lines("the step is in another function" + SHIM))) == 2


#: TencentPretrain's shape: the finetune scripts store apex.amp on their own ``args.amp`` and
#: read it back, so the first run names them as readers; rewritten to native, they no longer do
READERS = " (read off an object in finetune/run_classifier.py, finetune/run_ner.py)"


def test_the_files_reading_the_stored_attribute_add_no_second_todo() -> None:
    first = _statement_with("no amp.scale_loss in this file: the losses are scaled through args.amp"
                            + READERS + ", not followed" + SHIM)
    second = "no amp.scale_loss in this file: the losses are scaled through args.amp, not followed" + SHIM
    assert _todo_count(with_leading(first, todo_lines(second))) == 1
    assert _todo_count(with_leading(first, todo_lines("the losses are scaled through model.amp, not followed" + SHIM))) == 2
