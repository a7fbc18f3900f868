"""An ``if`` whose two branches read the same once the loss is scaled in both: its body once,
without the ``if``.

``if args.fp16: with amp.scale_loss(loss, opt) as s: s.backward()`` / ``else:
loss.backward()`` becomes ``scaler.scale(loss).backward()`` in both branches where the plain
branch may run with the GradScaler on (``_plain_alternative``).  ``if t: A else: A`` runs
``A`` whichever way ``t`` goes, so ``A`` alone trains the same, provided evaluating ``t``
does nothing but yield a truth value (``pure_test``).  The branches' statements are compared
as printed, comments included; a comment the ``if`` would take with it (on the ``if`` or
``else`` line, above the ``else``, at the end of a branch) keeps the ``if``.

The scale-loss rule asks while apex's imports are still there; an ``if args.fp16: from apex
import amp`` + the scaled backward then differs from its ``else`` by an import that the
imports rule removes last.  That rule asks again, without the imports it removes
(``collapsed``'s ``dropped``), so such an ``if`` is written once too.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

import libcst as cst

from ._edits import code_of, move_leading, suite_statements

#: calls that only read state: CUDA's presence, a GradScaler's switch, a type or attribute test
_QUERIES = ("torch.cuda.is_available", "isinstance", "hasattr")


def pure_test(node: cst.BaseExpression) -> bool:
    """Whether ``node`` only reads values: names, attributes and subscripts of them (what an
    argument namespace, a config or a module holds), constants, comparisons, ``not``,
    ``and``/``or``, and the queries of ``_QUERIES`` or ``x.is_enabled()`` on such arguments;
    no other call (it may draw a random number, count, print), no ``:=``."""
    if isinstance(node, (cst.Name, cst.Integer, cst.Float, cst.SimpleString, cst.Ellipsis)):
        return True
    if isinstance(node, cst.Attribute):
        return pure_test(node.value)
    if isinstance(node, cst.Subscript):
        return pure_test(node.value) and all(
            isinstance(s.slice, cst.Index) and pure_test(s.slice.value) for s in node.slice
        )
    if isinstance(node, cst.UnaryOperation):
        return isinstance(node.operator, (cst.Not, cst.Minus)) and pure_test(node.expression)
    if isinstance(node, cst.BooleanOperation):
        return pure_test(node.left) and pure_test(node.right)
    if isinstance(node, cst.Comparison):
        return pure_test(node.left) and all(pure_test(c.comparator) for c in node.comparisons)
    if isinstance(node, cst.Call):
        callee = code_of(node.func).strip()
        is_switch = isinstance(node.func, cst.Attribute) and node.func.attr.value == "is_enabled" and not node.args
        if not (callee in _QUERIES or is_switch) or not pure_test(node.func):
            return False
        return all(a.keyword is None and not a.star and pure_test(a.value) for a in node.args)
    return False


def _has_comment(*parts: Any) -> bool:
    return any("#" in code_of(p) for p in parts if p is not None)


def _never(stmt: Any) -> bool:
    return False


def collapsed(stmt: Any, dropped: Callable[[Any], bool] = _never) -> Optional[List[Any]]:
    """The statements of ``stmt``'s body, the ``if``'s own leading lines before the first,
    where ``stmt`` is ``if <pure test>: A else: A`` (no ``elif``); None otherwise.
    ``dropped``: the statements of either branch that are going anyway (an apex import the
    imports rule removes): they are neither compared nor kept."""
    if not isinstance(stmt, cst.If) or not isinstance(stmt.orelse, cst.Else) or not pure_test(stmt.test):
        return None
    body, other = stmt.body, stmt.orelse.body
    if not isinstance(body, cst.IndentedBlock) or not isinstance(other, cst.IndentedBlock):
        return None
    statements = [s for s in suite_statements(body) if not dropped(s)]
    if not statements or [code_of(s) for s in statements] != [code_of(s) for s in other.body if not dropped(s)]:
        return None  # (the spaces ending the if and else lines may differ)
    if _has_comment(body.header, other.header, *body.footer, *other.footer, *stmt.orelse.leading_lines):
        return None
    return [move_leading(stmt, statements[0])] + statements[1:]


def enclosing_if(parents: Any, stmt: Any) -> Optional[cst.If]:
    """The ``if`` (a statement of its block, with an ``else``) one of whose branches holds
    ``stmt`` as a statement of its own block; None otherwise."""
    clause = parents.get(parents.get(stmt))
    head = parents.get(clause) if isinstance(clause, cst.Else) else clause
    if not isinstance(head, cst.If) or not isinstance(head.orelse, cst.Else):
        return None
    if not isinstance(parents.get(head), (cst.IndentedBlock, cst.Module)):
        return None  # an elif
    return head
