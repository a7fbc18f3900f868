"""Three-way merge of two rules' outputs for the same LibCST tree.

A rule's output keeps the very objects of every subtree it did not change
(``rules._traverse``), so which parts of the base tree each of two outputs changed is a
matter of object identity.  ``merge`` combines two outputs of one base: a part only one
of them changed comes from that one; where both changed the same node, its fields are
merged one by one, and a list field by the elements both kept (anchors), the stretches
between them taken from the side that changed them.  Both sides changing the same stretch
of a list, a node whose class one side changed, or a plain value both set differently is
a conflict: ``merge`` returns None, and the engine runs the later rule again on the text
the earlier ones left.

A rule whose edit of a node depends on all of that node as the earlier rules left it (an
``if`` written once where both branches read the same) names the node in the file state
under ``WHOLE_NODE_READS``, with the edit as a function of the node (``Finish``).  When the
later of the two outputs is that rule's, the node's fields are merged and the function is
applied to the merged node, as it would have been to the node the earlier rules left;
any other change to the node by another rule is a conflict.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import libcst as cst


#: the file-state key (``repo_plan.FILE_STATE_KEY``) of the nodes a rule's edit read whole:
#: a dict node -> its ``Finish``
WHOLE_NODE_READS = "whole node reads"

#: a rule's edit of a node it read whole: the node as the rules before left it (with the
#: rule's own edits inside) -> the statements that replace it
Finish = Callable[[cst.CSTNode], List[cst.CSTNode]]


class _Spliced(List[Any]):
    """A finished node's statements, spliced into the list that held it."""


class _Conflict(Exception):
    """Both sides changed the same part of the base."""


_FIELDS: Dict[type, Tuple[str, ...]] = {}


def _field_names(kind: type) -> Tuple[str, ...]:
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(f.name for f in dataclasses.fields(kind))
    return names


def merge(
    base: cst.Module,
    first: cst.Module,
    second: cst.Module,
    read_whole: Optional[Mapping[cst.CSTNode, Optional[Finish]]] = None,
) -> Optional[cst.Module]:
    """The tree with both ``first``'s and ``second``'s changes of ``base``; None when they
    changed the same part of it, or both changed a node of ``read_whole`` that has no
    ``Finish`` (one with a ``Finish``: ``second``'s rule read it whole, and finishes it)."""
    try:
        merged = _Merge(read_whole or {}).node(base, first, second)
    except _Conflict:
        return None
    return merged if isinstance(merged, cst.Module) else None


class _Merge:
    def __init__(self, read_whole: Mapping[cst.CSTNode, Optional[Finish]]) -> None:
        self.read_whole = read_whole

    def node(self, base: Any, first: Any, second: Any) -> Any:
        if first is base or first is second:
            return second
        if second is base:
            return first
        kind = type(base)
        if type(first) is not kind or type(second) is not kind or not isinstance(base, cst.CSTNode):
            raise _Conflict
        finish = None
        if base in self.read_whole:
            finish = self.read_whole[base]
            if finish is None:
                raise _Conflict
        changes = {}
        for name in _field_names(kind):
            was = getattr(base, name)
            value = self.value(was, getattr(first, name), getattr(second, name))
            if isinstance(value, _Spliced):
                raise _Conflict  # statements where one node must stand
            if value is not was:
                changes[name] = value
        merged = base.with_changes(**changes) if changes else base
        if finish is None:
            return merged
        statements = finish(merged)
        return statements[0] if len(statements) == 1 and type(statements[0]) is kind else _Spliced(statements)

    def value(self, base: Any, first: Any, second: Any) -> Any:
        if first is base or first is second:
            return second
        if second is base:
            return first
        if isinstance(base, cst.CSTNode):
            return self.node(base, first, second)
        if isinstance(base, (tuple, list)) and isinstance(first, (tuple, list)) and isinstance(second, (tuple, list)):
            merged = self.sequence(base, first, second)
            return type(second)(merged) if not isinstance(second, tuple) else tuple(merged)
        if first == base:
            return second
        if second == base or first == second:
            return first
        raise _Conflict

    def sequence(self, base: Sequence[Any], first: Sequence[Any], second: Sequence[Any]) -> List[Any]:
        regions = _regions(base, first)
        for theirs in _regions(base, second):
            clash = [ours for ours in regions if _overlap(ours, theirs)]
            if not clash:
                regions.append(theirs)
                continue
            ours = clash[0]
            start, end, elements = theirs
            if len(clash) > 1 or ours[:2] != (start, end) or not len(ours[2]) == len(elements) == end - start:
                raise _Conflict
            # both changed the same elements in place: merge each
            merged: List[Any] = []
            for b, f, s in zip(base[start:end], ours[2], elements):
                value = self.value(b, f, s)
                if isinstance(value, _Spliced):
                    merged.extend(value)
                else:
                    merged.append(value)
            regions[regions.index(ours)] = (start, end, merged)
        out: List[Any] = []
        done = 0
        for start, end, elements in sorted(regions, key=lambda region: region[:2]):
            out.extend(base[done:start])
            out.extend(elements)
            done = end
        out.extend(base[done:])
        return out


def _kept_positions(base: Sequence[Any], side: Sequence[Any]) -> Dict[int, int]:
    """For each element of ``side`` that is an element of ``base`` (the same object, in the
    same order), its index in ``base`` -> its index in ``side``, in increasing order."""
    where = {id(element): index for index, element in enumerate(base)}
    kept: Dict[int, int] = {}
    last = -1
    for index, element in enumerate(side):
        at = where.get(id(element))
        if at is not None and at > last and base[at] is element:
            kept[at] = index
            last = at
    return kept


#: a changed stretch of a list: base[start:end] became ``elements`` (start == end: inserted)
_Region = Tuple[int, int, Sequence[Any]]


def _regions(base: Sequence[Any], side: Sequence[Any]) -> List[_Region]:
    """The stretches of ``base`` that ``side`` changed, between the elements it kept."""
    regions: List[_Region] = []
    previous_base = previous_side = -1
    kept = _kept_positions(base, side)
    for at_base, at_side in [*kept.items(), (len(base), len(side))]:
        if at_base - previous_base == at_side - previous_side:
            # as many elements as were there: each one changed in place
            for offset in range(1, at_base - previous_base):
                regions.append((previous_base + offset, previous_base + offset + 1, [side[previous_side + offset]]))
        else:
            regions.extend(_stretch_regions(base, side, previous_base + 1, at_base, previous_side + 1, at_side))
        previous_base, previous_side = at_base, at_side
    return regions


def _stretch_regions(
    base: Sequence[Any], side: Sequence[Any], start: int, end: int, side_start: int, side_end: int
) -> List[_Region]:
    """``base[start:end]`` became ``side[side_start:side_end]`` (of another length): the
    elements at either end made from the one they stand for (an element removed or added
    beside a function the rule also changed) are changed in place, the rest is one region."""
    before: List[_Region] = []
    after: List[_Region] = []
    while start < end and side_start < side_end and _made_from(side[side_start], base[start]):
        before.append((start, start + 1, [side[side_start]]))
        start, side_start = start + 1, side_start + 1
    while start < end and side_start < side_end and _made_from(side[side_end - 1], base[end - 1]):
        after.append((end - 1, end, [side[side_end - 1]]))
        end, side_end = end - 1, side_end - 1
    if start < end or side_start < side_end:
        before.append((start, end, side[side_start:side_end]))
    return before + after[::-1]


def _made_from(node: Any, original: Any) -> bool:
    """Whether ``node`` is ``original`` with some fields changed: the same class, and one of
    its child nodes the very object ``original`` has."""
    kind = type(original)
    if type(node) is not kind or not isinstance(original, cst.CSTNode):
        return False
    for name in _field_names(kind):
        value = getattr(original, name)
        if isinstance(value, cst.CSTNode) and getattr(node, name) is value:
            return True
    return False


def _overlap(one: _Region, other: _Region) -> bool:
    """Whether the two stretches touch the same elements, or insert at the same place (an
    insertion at either end of the other's stretch keeps its place before or after it)."""
    start, end, _ = one
    other_start, other_end, _ = other
    if start == end and other_start == other_end:
        return start == other_start
    if start == end:
        return other_start < start < other_end
    if other_start == other_end:
        return start < other_start < end
    return start < other_end and other_start < end
