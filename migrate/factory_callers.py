"""Calls of a model factory from files without apex.amp.

A model factory (``repo_plan._factory_routes``) that returns the GradScaler as one more
value changes what every caller receives, including callers in files the rules never see
(an evaluation script that builds its model through the factory, no apex.amp in it).  Such
a call is kept working only where its shape proves it:

- the result is discarded (``build(cfg)`` as a statement), or indexed with a literal
  ``k >= 0`` (``build(cfg)[0]``), or kept in a name of a function whose every read is such
  an index: one more value at the end changes nothing there;
- the result is unpacked into names (``model, _ = build(cfg)``): the unpacking takes the
  extra value into ``_`` (the one edit made in such a file), provided the file never reads
  ``_`` itself.

Any other shape (passed on, returned, starred, kept and used whole) cannot be proven, and
the factory's whole component keeps apex.amp with the exact ``path:line`` why.  Pure
stdlib ``ast``; the edit is applied to the bytes (``apply_edit``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Dict, List, Sequence, Set, Tuple, Union

from . import stdlib_trees
from .repo_index import parent_links

#: what an unpacking of a factory's call gains in a file without apex.amp
THROWAWAY = "_"
#: the finding of such an edit
CODE = "APX235"


@dataclass(frozen=True)
class CallerEdit:
    """The edit a file without apex.amp gets so that its factory calls keep working."""

    #: the file's real path and its path as shown
    path: str
    shown: str
    #: the model factory's name, for the finding
    factory: str
    #: (line, byte column) right after the last name of each unpacking: ``, _`` goes there
    inserts: Tuple[Tuple[int, int], ...] = ()

    @property
    def changes(self) -> bool:
        return bool(self.inserts)


def _non_negative_index(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0


def _indexed_only(name: str, assign: ast.Assign, parents: Dict[ast.AST, ast.AST]) -> bool:
    """Whether ``name``, bound by ``assign`` in a function, is bound nowhere else there and
    read only as ``name[k]`` with a literal ``k >= 0``."""
    scope = parents.get(assign)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = parents.get(scope)
    if scope is None:
        return False  # module level: other modules may read it whole
    for node in ast.walk(scope):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if isinstance(node, ast.arg) and node.arg == name:
            return False
        if not isinstance(node, ast.Name) or node.id != name:
            continue
        if isinstance(node.ctx, ast.Store):
            if parents.get(node) is not assign:
                return False
            continue
        outer = parents.get(node)
        if not (isinstance(outer, ast.Subscript) and outer.value is node and _non_negative_index(outer.slice)):
            return False
    return True


def _shape(call: ast.Call, parents: Dict[ast.AST, ast.AST], reads_throwaway: bool) -> Union[Tuple[int, int], str, None]:
    """Where ``, _`` goes for this call (None: nothing to change), or why its shape is not
    proven to take one more value."""
    outer = parents.get(call)
    if isinstance(outer, ast.Expr):
        return None
    if isinstance(outer, ast.Subscript) and outer.value is call and isinstance(outer.ctx, ast.Load):
        return None if _non_negative_index(outer.slice) else "indexed other than by a literal k >= 0"
    if not isinstance(outer, ast.Assign) or outer.value is not call:
        return "used other than by an assignment of its own (passed on, returned or computed with)"
    if len(outer.targets) != 1:
        return "assigned to several targets at once"
    target = outer.targets[0]
    if isinstance(target, ast.Name):
        if _indexed_only(target.id, outer, parents):
            return None
        return f"kept in `{target.id}`, which is used other than by a literal index k >= 0"
    if not isinstance(target, (ast.Tuple, ast.List)) or not target.elts:
        return "assigned to something other than names"
    if any(isinstance(e, ast.Starred) for e in target.elts):
        return "unpacked with a starred name"
    if reads_throwaway:
        return f"unpacked in a file that reads `{THROWAWAY}` itself"
    last = target.elts[-1]
    if last.end_lineno is None or last.end_col_offset is None:
        return "unpacked where the end of its names is unknown"
    return (last.end_lineno, last.end_col_offset)


def caller_edit(
    factory: str, texts: Set[str], lines: Sequence[int], path: str, shown: str, source: bytes
) -> Union[CallerEdit, str]:
    """The edit that keeps the calls of ``factory`` (written as one of ``texts``, at
    ``lines``) in this file without apex.amp working once it returns one more value, or
    why it cannot be proven (naming the ``shown:line``)."""
    tree = stdlib_trees.parse(source)
    if tree is None:
        return f"{shown} does not parse"
    parents = parent_links(tree)
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and n.lineno in lines and ast.unparse(n.func) in texts
    ]
    if len(calls) < len(set(lines)):
        return f"a call of {factory}() in {shown} was not found again"
    reads_throwaway = any(
        isinstance(n, ast.Name) and n.id == THROWAWAY and isinstance(n.ctx, ast.Load) for n in ast.walk(tree)
    )
    inserts: List[Tuple[int, int]] = []
    for call in sorted(calls, key=lambda c: (c.lineno, c.col_offset)):
        shape = _shape(call, parents, reads_throwaway)
        if isinstance(shape, str):
            return (
                f"what {factory}() returns at {shown}:{call.lineno}, a file without apex.amp, is {shape}, "
                "so it cannot be proven to take the GradScaler as one more value"
            )
        if shape is not None:
            line, column = shape
            if not source.splitlines()[line - 1][:column].isascii():
                return f"{shown}:{line} has other than ASCII text before the end of the names it unpacks into"
            inserts.append(shape)
    return CallerEdit(path, shown, factory, tuple(inserts))


def apply_edit(source: bytes, edit: CallerEdit) -> bytes:
    """``source`` with ``, _`` after the last name of each unpacking the edit names (the
    columns are byte offsets, as ``ast`` gives them)."""
    lines = source.splitlines(keepends=True)
    for line, column in sorted(edit.inserts, reverse=True):
        text = lines[line - 1]
        lines[line - 1] = text[:column] + f", {THROWAWAY}".encode() + text[column:]
    return b"".join(lines)


def edit_message(edit: CallerEdit) -> str:
    return (
        f"{edit.factory}() now returns the GradScaler as one more value: this file's unpacking takes it into "
        f"`{THROWAWAY}`; no autocast is placed here (no loss is scaled), so forward passes apex's O1/O2 would have "
        "cast after the factory's amp.initialize run in float32"
    )
