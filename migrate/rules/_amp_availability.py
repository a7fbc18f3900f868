"""The availability checks of the apex.amp rules: once apex.amp is migrated, native mixed
precision is always there, so ``amp is None`` / ``not amp`` checks fold to constants and the
``if``/``assert`` statements they decide are simplified (APX212)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ._amp_rule import AmpRule
from ._amp_sites import AmpFile, code_of
from ._edits import move_leading, suite_statements


def _paren_if_bool_op(node: cst.BaseExpression) -> cst.BaseExpression:
    if isinstance(node, cst.BooleanOperation) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def pure(node: Any) -> bool:
    """Names, attributes, comparisons and and/or/not of them: dropping one changes nothing
    but the value."""
    if isinstance(node, cst.BooleanOperation):
        return pure(node.left) and pure(node.right)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
        return pure(node.expression)
    return isinstance(node, (cst.Name, cst.Attribute, cst.Comparison))


def fold(expr: Any, consts: Dict[Any, bool]) -> Tuple[Optional[bool], Any]:
    """Fold the availability checks in ``expr``: returns ``(True/False, None)`` when the whole
    expression becomes a constant, else ``(None, simplified expression)``."""
    if expr in consts:
        return consts[expr], None
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        value, node = fold(expr.expression, consts)
        if value is not None:
            return (not value), None
        return None, expr if node is expr.expression else expr.with_changes(expression=_paren_if_bool_op(node))
    if isinstance(expr, cst.BooleanOperation):
        lv, ln = fold(expr.left, consts)
        rv, rn = fold(expr.right, consts)
        if isinstance(expr.operator, cst.And):
            if lv is False or (rv is False and pure(ln)):
                return False, None
            if lv is True:
                return rv, rn
            if rv is True:
                return None, ln
        else:
            if lv is True or (rv is True and pure(ln)):
                return True, None
            if lv is False:
                return rv, rn
            if rv is False:
                return None, ln
        if ln is expr.left and rn is expr.right:
            return None, expr
        left = ln if ln is not None else cst.Name(str(lv))
        right = rn if rn is not None else cst.Name(str(rv))
        return None, expr.with_changes(
            left=_paren_if_bool_op(left) if left is not expr.left else left,
            right=_paren_if_bool_op(right) if right is not expr.right else right,
        )
    return None, expr


def _taken(ifexp: cst.IfExp, branch: cst.BaseExpression) -> cst.BaseExpression:
    """``branch`` of ``ifexp`` in its place, inside the parentheses of both."""
    return branch.with_changes(lpar=[*ifexp.lpar, *branch.lpar], rpar=[*branch.rpar, *ifexp.rpar])


class AvailabilityChecks(AmpRule):
    """Folds apex.amp availability checks (part of the initialize rule)."""

    def _fold_checks(self, info: AmpFile) -> None:
        """``if amp is None: raise ...`` goes, ``assert amp is not None`` goes,
        ``args.fp16 and amp is not None`` becomes ``args.fp16``."""
        anchors = {s.anchor for s in info.inits}
        done = set()
        for check in info.checks:
            top = check
            while isinstance(self.parents.get(top), (cst.BooleanOperation, cst.UnaryOperation)):
                top = self.parents[top]
            if top in done:
                continue
            done.add(top)
            value, node = fold(top, info.checks)
            holder = self.parents.get(top)
            if (
                isinstance(holder, cst.If)
                and holder.test is top
                and holder not in anchors
                and not isinstance(self.parents.get(holder), cst.If)
                and value is not None
            ):
                if value:
                    self.edits.replace(holder, lambda upd: self._lift(upd, upd.body))
                elif holder.orelse is None:
                    self.edits.replace(holder, [])
                elif isinstance(holder.orelse, cst.Else):
                    self.edits.replace(holder, lambda upd: self._lift(upd, upd.orelse.body))
                else:
                    self.edits.replace(holder, lambda upd: [upd.orelse.with_changes(leading_lines=upd.leading_lines)])
            elif isinstance(holder, cst.IfExp) and holder.test is top and value is not None:
                # ``amp.state_dict() if amp else None``: the branch the check takes
                self.replace_node(holder, lambda upd, value=value: _taken(upd, upd.body if value else upd.orelse))
            elif isinstance(holder, cst.Assert) and holder.test is top and value is True:
                stmt = self.statement_of(holder)
                guard = self._guard_of_only(stmt, anchors)
                if guard is not None:  # ``if opt_level != "O0": assert amp is not None``
                    self.edits.replace(guard, [])
                elif isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
                    self.edits.replace(stmt, [])
                else:
                    self.replace_node(top, cst.Name("True"))
            else:
                self.replace_node(top, cst.Name(str(value)) if value is not None else node)
            self.report(
                top,
                "APX212",
                f"{code_of(top)}: apex.amp's availability check is "
                f"{value if value is not None else 'simplified'} now (native mixed precision is always there)",
                fixed=True,
                severity="info",
            )

    def _guard_of_only(self, stmt: Any, anchors: set) -> Optional[cst.If]:
        """The ``if`` (no ``elif``/``else``, a test without side effects) whose whole body
        is ``stmt``, a one-statement line: it would be left holding only ``pass``."""
        block = self.parents.get(stmt)
        guard = self.parents.get(block)
        if (
            not isinstance(stmt, cst.SimpleStatementLine)
            or len(stmt.body) != 1
            or not isinstance(block, cst.IndentedBlock)
            or len(block.body) != 1
            or not isinstance(guard, cst.If)
            or guard.orelse is not None
            or guard in anchors
            or isinstance(self.parents.get(guard), cst.If)
            or not pure(guard.test)
        ):
            return None
        return guard

    @staticmethod
    def _lift(upd: cst.BaseStatement, suite: cst.BaseSuite) -> List[cst.BaseStatement]:
        body = suite_statements(suite)
        return [move_leading(upd, body[0])] + body[1:] if body else []
