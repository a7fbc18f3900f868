"""What one file refers to, read with the stdlib ``ast`` before any rule runs.

A rule that rewrites apex names can only have work in a file whose code names apex: an
import, a name or attribute, or a string (``importlib.import_module("apex")``).  Comments
and docstrings do not count, except the TODO comments this tool writes (a second run
reports them again).  The byte triggers cannot tell ``# we used to use apex here`` from
``from apex import amp``, and a rule that runs pays LibCST's metadata and a rebuild of the
whole tree even when it changes nothing: most admitted files need one or two rules of the
fourteen.  See ``Rule.CODE_WORDS``.
"""

from __future__ import annotations

import ast
from typing import FrozenSet, Optional, Set

from . import stdlib_trees
from .ast_table import child_nodes

#: the start of every TODO comment the rules write (``rules.base.TODO_PREFIX``)
OWN_TODO = b"TODO(apexcompat)"


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _text_of(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.alias):
        return f"{node.name} {node.asname or ''}"
    if isinstance(node, ast.ImportFrom):
        return node.module or ""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def _named_in_code(tree: ast.AST, words: FrozenSet[str]) -> FrozenSet[str]:
    found: Set[str] = set()
    stack = [tree]
    while stack and len(found) < len(words):
        node = stack.pop()
        if _is_docstring(node):
            continue
        text = _text_of(node)
        if text:
            found.update(w for w in words if w in text)
        stack.extend(child_nodes(node))
    return frozenset(found)


def words_in_code(source: bytes, words: FrozenSet[str]) -> Optional[FrozenSet[str]]:
    """Which of ``words`` the code of ``source`` names (every word when a TODO of ours is
    in it); ``None`` when the stdlib cannot parse it (then every rule runs and LibCST's
    parser reports what is wrong)."""
    if OWN_TODO in source:
        return words
    present = frozenset(w for w in words if w.encode() in source)
    if not present:
        return present
    tree = stdlib_trees.parse(source)
    if tree is None:
        return None
    return _named_in_code(tree, present)
