"""Answers the apex.amp rules of one same-text group (``engine.SAME_TEXT_GROUPS``) all ask
about the same tree, worked out once.

The rules of a group run on one tree with one set of metadata and one plan, so a question
that depends on those alone (and on what the initialize rule, which ran before the group,
recorded in the file state) has one answer for all of them.  ``remembered`` keeps the last
answer of each question with what it was asked about: tree nodes, metadata maps and plans
are compared by identity, recorded texts by value.
"""

from __future__ import annotations

from typing import Any, Callable, List, Sequence, TypeVar

_T = TypeVar("_T")


def remembered(slot: List[Any], asked: Sequence[Any], compute: Callable[[], _T]) -> _T:
    """``compute()``, or the answer kept in ``slot`` when it was computed for ``asked``
    (``slot`` holds [what was asked, the answer]; a list per question, at module level)."""
    if slot and len(slot[0]) == len(asked) and all(_same(a, b) for a, b in zip(slot[0], asked)):
        return slot[1]
    answer = compute()
    slot[:] = [tuple(asked), answer]
    return answer


def _same(one: Any, other: Any) -> bool:
    return one is other or (isinstance(one, str) and isinstance(other, str) and one == other)
