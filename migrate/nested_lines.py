"""The line on which a statement nested in a top-level statement starts, read from the
stdlib ``ast`` of the file as read.

A rule reports on a node; its line is the line of the statement line holding it plus the
node's line within that statement line.  Printing the statement line alone gives the second
(``_node_ranges``); the first is here, found by following the statement's compound parts
down the stdlib tree in step with LibCST's: the same bodies in the same order, a LibCST
line ``a; b`` counting for two stdlib statements.  Where the two do not line up (never
expected), there is no answer and the caller prints the whole top-level statement.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional, Sequence, Tuple

import libcst as cst

#: LibCST compound statement -> the stdlib classes it is read as
_SAME_KIND: Dict[type, Tuple[type, ...]] = {
    cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef),
    cst.ClassDef: (ast.ClassDef,),
    cst.If: (ast.If,),
    cst.For: (ast.For, ast.AsyncFor),
    cst.While: (ast.While,),
    cst.With: (ast.With, ast.AsyncWith),
    cst.Try: (ast.Try,),
}
if hasattr(ast, "TryStar"):
    _SAME_KIND[cst.TryStar] = (ast.TryStar,)  # type: ignore[attr-defined]
if hasattr(ast, "Match"):
    _SAME_KIND[cst.Match] = (ast.Match,)  # type: ignore[attr-defined]


def statement_line(chain: Sequence[cst.CSTNode], top: ast.stmt) -> Optional[int]:
    """The line of the first token of ``chain[-1]``, a statement (a statement line or an
    undecorated compound one) inside the top-level statement ``chain[0]``; ``chain`` holds every node between them
    (a walk's ancestors), ``top`` is ``chain[0]``'s stdlib statement.  None where the two
    trees do not line up."""
    statement: cst.CSTNode = chain[0]
    stdlib: Any = top
    index = 1
    while index < len(chain):
        if not isinstance(stdlib, _SAME_KIND.get(type(statement), ())):
            return None
        owner = chain[index]
        if type(owner) is cst.If and type(statement) is cst.If:  # an ``elif``: the orelse's one If
            if len(stdlib.orelse) != 1:
                return None
            statement, stdlib, index = owner, stdlib.orelse[0], index + 1
            continue
        body = _stdlib_body(statement, owner, stdlib)
        if body is None:
            return None
        if owner is not getattr(statement, "body", None):
            index += 1  # the part (else, except, finally, case) owning the block
        if index + 1 >= len(chain) or not isinstance(chain[index], cst.IndentedBlock):
            return None
        block, nested = chain[index], chain[index + 1]
        position = _stdlib_index(block.body, nested)
        if position is None or position >= len(body):
            return None
        if nested is chain[-1]:  # a decorated definition's text starts at its first decorator
            return None if getattr(nested, "decorators", ()) else body[position].lineno
        statement, stdlib, index = nested, body[position], index + 2
    return None


def _stdlib_body(statement: cst.CSTNode, owner: cst.CSTNode, stdlib: Any) -> Optional[List[ast.stmt]]:
    """The stdlib statements of the block of ``statement`` that ``owner`` (its ``body``, or
    one of its ``else``/``except``/``finally``/``case`` parts) holds."""
    if owner is getattr(statement, "body", None):
        return stdlib.body  # type: ignore[no-any-return]
    if isinstance(owner, cst.Else):
        return stdlib.orelse  # type: ignore[no-any-return]
    if isinstance(owner, cst.Finally):
        return stdlib.finalbody  # type: ignore[no-any-return]
    for parts, stdlib_parts in (("handlers", "handlers"), ("cases", "cases")):
        own = getattr(statement, parts, None)
        if own is not None:
            for part, stdlib_part in zip(own, getattr(stdlib, stdlib_parts, ())):
                if part is owner:
                    return stdlib_part.body  # type: ignore[no-any-return]
    return None


def _stdlib_index(body: Sequence[cst.CSTNode], statement: cst.CSTNode) -> Optional[int]:
    """Where ``statement`` of a LibCST block's ``body`` is among the block's stdlib statements."""
    position = 0
    for item in body:
        if item is statement:
            return position
        position += len(item.body) if isinstance(item, cst.SimpleStatementLine) else 1
    return None
