"""Setup loops: ``for k in range(n): m, o = amp.initialize(models[k], opts[k]); models[k] = m``.

A loop whose body only calls ``amp.initialize`` and stores what it returns trains nothing
between its passes, so the GradScaler apex's last pass stands for is made once, after the loop.
The per-file rules (``rules/_amp_setup_loop``, LibCST) and the repository index (stdlib
``ast``) both ask what counts as such a body; the calls it may make are named here."""

from __future__ import annotations

import ast

#: calls a setup loop may make besides the initialize: storing results, reading sizes, printing
SETUP_METHODS = frozenset({"append", "extend", "insert"})
SETUP_BUILTINS = frozenset(
    {"print", "len", "range", "zip", "enumerate", "list", "tuple", "getattr", "setattr", "isinstance"}
)

_LEAVES = (ast.Return, ast.Break, ast.Continue, ast.Raise, ast.Yield, ast.YieldFrom, ast.Global, ast.Nonlocal)


def initializes_only(loop: ast.AST) -> bool:
    """Whether ``loop`` (a ``for``/``while`` of the index's walk) is a setup loop: no ``else``,
    only simple statements, no jump out, and no call but ``<x>.initialize(...)`` and the
    storing and sizing calls above."""
    if not isinstance(loop, (ast.For, ast.AsyncFor, ast.While)) or loop.orelse:
        return False
    simple = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Pass)
    if not all(isinstance(stmt, simple) for stmt in loop.body):
        return False
    for node in (sub for stmt in loop.body for sub in ast.walk(stmt)):
        if isinstance(node, _LEAVES):
            return False
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and (func.attr == "initialize" or func.attr in SETUP_METHODS):
            continue
        if isinstance(func, ast.Name) and func.id in SETUP_BUILTINS:
            continue
        return False
    return True
