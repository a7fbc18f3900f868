"""Why a function that scales a loss and clips ``amp.master_params`` right after cannot get a
GradScaler where files without apex.amp call it once per micro-batch (jiant's shape).

jiant's ``complex_backpropagate(loss, optimizer, ...)`` scales the loss and clips
``amp.master_params(optimizer)`` after that backward; ``JiantRunner.run_train_step`` (no
apex) calls it, through a method of its own, once for each of ``gradient_accumulation_steps``
chunks and steps after the loop.  apex unscaled the gradients at every backward, so each clip
saw the unscaled sum so far; a GradScaler unscales once a step (a second ``unscale_`` before
the step raises), so no native rewrite keeps those clips.  The plan already refuses such a
function (its callers have no GradScaler); this adds the deeper reason to the findings of its
file and of the launchers whose notes name it, where the call is proven to run in a loop: the
call (by the name a ``from ... import`` binds) or a call on self of the method holding it
lies in a ``for`` or ``while`` of the calling function.  Pure ``ast`` over the callers' files; notes only.
"""

from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import Dict, Optional, Tuple

from . import stdlib_trees
from .repo_index import ModuleSummary, parent_links


def add_clip_loop_notes(plan, by_path: Dict[str, ModuleSummary], files: Dict[str, Tuple[str, bytes]]):
    """``plan`` with the reason added to the notes of the functions that clip after each
    scaled backward and are called in a loop of a file without apex.amp (``files``)."""
    from .repo_plan import SCALED_ELSEWHERE

    for path, summary in sorted(by_path.items()):
        own = plan.files.get(path)
        if own is None or own.component is not None:
            continue
        noted = dict(own.notes)
        for name in sorted({s.owner for s in summary.amp_sites if s.member == "scale_loss" and not s.method}):
            scaled = [s.line for s in summary.amp_sites if s.owner == name and s.member == "scale_loss"]
            clipped = [s.line for s in summary.amp_sites if s.owner == name and s.member == "master_params"
                       and s.line > min(scaled)]
            if name not in noted or not clipped:
                continue
            loop = _looping_caller(name, files)
            if loop is None:
                continue
            why = (f"{name}() clips amp.master_params after each backward it scales ({summary.shown}:{clipped[0]}) "
                   f"and {loop} may run it several times before one step: apex unscaled the gradients at every "
                   "backward, a GradScaler unscales them once a step, so those clips cannot be kept")
            plan.files[path] = own = replace(own, notes=tuple(
                (k, f"{v}; {why}" if k == name else v) for k, v in own.notes
            ))
            needle = f"{summary.shown} ({name})"
            for other, theirs in sorted(plan.files.items()):
                if other != path and theirs.component is None and any(
                    k == SCALED_ELSEWHERE and needle in v for k, v in theirs.notes
                ):
                    plan.files[other] = replace(theirs, notes=tuple(
                        (k, f"{v}; {why}" if k == SCALED_ELSEWHERE else v) for k, v in theirs.notes
                    ))
    return plan


def _looping_caller(name: str, files: Dict[str, Tuple[str, bytes]]) -> Optional[str]:
    """Where a file of ``files`` that imports ``name`` by it calls it (or a method of its own
    that calls it, on self) inside a loop of the calling function: ``run_train_step() in a.py
    (line 110, through complex_backpropagate())``."""
    word = re.compile(rb"\b" + re.escape(name.encode()) + rb"\b")
    for _path, (shown, source) in sorted(files.items()):
        if not word.search(source):
            continue
        tree = stdlib_trees.parse(source)
        if tree is None:
            continue
        imported = any(
            isinstance(s, ast.ImportFrom) and any(a.name == name and a.asname in (None, name) for a in s.names)
            for s in ast.walk(tree)
        )
        if not imported:
            continue
        parents = parent_links(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name):
                continue
            func = _function(parents, node)
            if func is None:
                continue
            if _in_loop(parents, node, func):
                return f"{func.name}() in {shown} (line {node.lineno})"
            cls = parents.get(func)
            if isinstance(cls, ast.ClassDef) and func.args.args:
                for call in ast.walk(cls):
                    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) \
                            and call.func.attr == func.name and isinstance(call.func.value, ast.Name):
                        caller = _function(parents, call)
                        if caller is not None and caller.args.args and call.func.value.id == caller.args.args[0].arg \
                                and _in_loop(parents, call, caller):
                            return f"{caller.name}() in {shown} (line {call.lineno}, through {func.name}())"
    return None


def _function(parents, node: ast.AST) -> Optional[ast.FunctionDef]:
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        cur = parents.get(cur)
    return cur if isinstance(cur, ast.FunctionDef) else None


def _in_loop(parents, node: ast.AST, func: ast.FunctionDef) -> bool:
    cur = parents.get(node)
    while cur is not None and cur is not func:
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor)):
            return True
        cur = parents.get(cur)
    return False
