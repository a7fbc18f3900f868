"""The override-step route's edit of one file without apex.amp: a subclass's override of
the base class's method that steps the optimizer apex scaled for.

The base (the launcher's class) keeps the step in a hook of its own (``def _apex_step(self):
self.optimizer.step()``), called after its scaled backward; a subclass in another file
redefines the hook (``with self.optimizer.skip_synchronize(): self.optimizer.step()``).  apex
patched the optimizer's ``step`` itself, so the override's step was skipped on an overflow
and stepped the unscaled gradients.  The base's rewrite steps its hook through the GradScaler
it keeps on ``self``; the override is edited the same way here, as bytes: its step becomes
``self.<scaler>.step(self.<opt>)`` followed by ``self.<scaler>.update()``, and where it reads
the gradients before the step, ``self.<scaler>.unscale_(self.<opt>)`` goes before the first
statement that does (apex had unscaled them when amp.scale_loss ended).  Horovod's shape
stays as it is: ``optimizer.synchronize()`` all-reduces the scaled gradients where the
backward is, the unscale_ and the GradScaler's step come after it, the step inside
``skip_synchronize()``.  Proven only for this shape:

- the override is a plain method (no decorator) of the class, defined once, without nested
  functions, ``return``, ``yield`` or ``await``, calling no ``backward`` and no other ``step``;
- its one step is ``self.<opt>.step()`` without arguments, a statement on lines of its own
  in the method's body or nested only in ``with`` blocks of it (every call steps once);
- ``self.<opt>`` is read there only as ``self.<opt>.param_groups`` or to call
  ``synchronize()`` / ``skip_synchronize()`` on it (no alias, nothing handed it);
- the file names the method nowhere but its definition (no other call reaches it).

Pure ``ast``.
"""

from __future__ import annotations

import ast
from typing import List, Optional, Tuple, Union

from . import stdlib_trees
from .holder_route import HolderEdit, compiled_or_reason, physical_lines
from .repo_index import GRADIENT_READS, parent_links

#: the finding of the override's edit
OVERRIDE_STEP_CODE = "APX257"
#: what the override may do with ``self.<opt>`` besides stepping it
READ_ONLY_USES = frozenset({"param_groups", "synchronize", "skip_synchronize"})
_FORBIDDEN = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, ast.Return, ast.Yield,
              ast.YieldFrom, ast.Await)


def override_step_route(path: str, shown: str, source: bytes, cls: str, method: str, attr: str, scaler: str,
                        unscaling: str = "") -> Union[HolderEdit, str]:
    """The edit of ``source`` whose class ``cls`` overrides ``method``, stepping ``self.<attr>``
    through ``self.<scaler>``, else why not; ``unscaling``: why the edit may not unscale the
    gradients itself (a method of the base or of its ancestors reads them, so its rewrite may
    unscale them before the call), "" when it may."""
    tree = stdlib_trees.parse(source)
    text = stdlib_trees.decoded(source)
    if tree is None or text is None:
        return f"{shown} does not parse"
    where = f"{cls}.{method}() in {shown}"
    func = _override(tree, cls, method)
    if isinstance(func, str):
        return func
    if scaler in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}:
        return f"{shown} already reads an attribute named {scaler}"
    named = [n for n in ast.walk(tree) if _names(n, method)]
    if named:
        return f"{shown} names {method} at line {named[0].lineno} besides its definition (another call may reach it)"
    parents = parent_links(tree)
    me = func.args.args[0].arg
    step = _the_step(func, me, attr, parents, where)
    if isinstance(step, str):
        return step
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    edits: List[Tuple[int, int, Tuple[str, ...]]] = []
    reader = _first_reader(func, step, parents, where)
    if isinstance(reader, str):
        return reader
    if reader is not None:
        if unscaling:
            return (f"{where} reads the gradients before its step, but {unscaling}: the base's rewrite may unscale "
                    "them before the call (a second unscale_ raises)")
        if not _own_lines(lines, func, reader, reader.lineno, reader.lineno):
            return f"the statement at {shown}:{reader.lineno} does not start a line of its own"
        pad = " " * reader.col_offset
        edits.append((reader.lineno, reader.lineno, (f"{pad}{me}.{scaler}.unscale_({me}.{attr})",
                                                     lines[reader.lineno - 1])))
    stmt = parents[step]
    if not _own_lines(lines, func, stmt, stmt.lineno, stmt.end_lineno):
        return f"the step at {shown}:{stmt.lineno} does not stand on lines of its own"
    tail = lines[stmt.end_lineno - 1].encode("utf-8")[stmt.end_col_offset:].decode("utf-8")
    if tail.strip() and not tail.strip().startswith("#"):
        return f"the step at {shown}:{stmt.lineno} shares its line"
    pad = " " * stmt.col_offset
    new = (f"{pad}{me}.{scaler}.step({me}.{attr}){tail.rstrip()}", f"{pad}{me}.{scaler}.update()")
    edits.append((stmt.lineno, stmt.end_lineno, new))
    edit = HolderEdit(path, shown, cls, method, attr, scaler, tuple(edits))
    return compiled_or_reason(source, edit)


def override_step_message(edit: HolderEdit, base: str) -> str:
    unscaled = any(".unscale_(" in line for _f, _l, new in edit.lines for line in new)
    return (
        f"{edit.cls}.{edit.method}() overrides {base}.{edit.method}(), whose step of self.{edit.attribute} goes "
        f"through the GradScaler {base} keeps on self: the override's step does too (self.{edit.new_attribute}"
        f".step() and update(){', unscaled before its gradient reads' if unscaled else ''}), as apex patched "
        "every optimizer.step"
    )


def _override(tree: ast.Module, cls: str, method: str) -> Union[ast.FunctionDef, str]:
    """The one plain definition of ``cls.method`` at the top of the file, else why not."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls]
    if len(classes) != 1:
        return f"{cls} is not defined once at the top of its file"
    defs = [n for n in classes[0].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == method]
    if len(defs) != 1 or not isinstance(defs[0], ast.FunctionDef) or defs[0].decorator_list or not defs[0].args.args:
        return f"{cls}.{method}() is not one plain method"
    bad = next((n for n in ast.walk(defs[0]) if n is not defs[0] and isinstance(n, _FORBIDDEN)), None)
    if bad is not None:
        return f"{cls}.{method}() holds a {type(bad).__name__.lower()} (line {bad.lineno})"
    return defs[0]


def _names(node: ast.AST, method: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == method) or (
        isinstance(node, ast.Name) and node.id == method)


def _is_self_attr(node: ast.AST, me: str, attr: str) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == attr and isinstance(node.value, ast.Name) \
        and node.value.id == me


def _the_step(func: ast.FunctionDef, me: str, attr: str, parents, where: str) -> Union[ast.Call, str]:
    """The one ``self.<attr>.step()`` of ``func``, a statement in its body or in ``with``
    blocks only, else why not."""
    steps, uses = [], []
    for node in ast.walk(func):
        if isinstance(node, ast.Attribute) and node.attr in ("backward", "scale_loss"):
            return f"{where} calls {node.attr} itself (line {node.lineno})"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            steps.append(node)
        if _is_self_attr(node, me, attr):
            uses.append(node)
    if len(steps) != 1 or not _is_self_attr(steps[0].func.value, me, attr):
        return f"{where} does not step {me}.{attr} exactly once, and nothing else"
    step = steps[0]
    if step.args or step.keywords:
        return f"{where} passes arguments to {me}.{attr}.step()"
    for use in uses:
        outer = parents.get(use)
        if outer is step.func:
            continue
        called = isinstance(parents.get(outer), ast.Call) and parents.get(outer).func is outer
        if not (isinstance(outer, ast.Attribute) and outer.attr in READ_ONLY_USES) or (
            outer.attr != "param_groups" and not called
        ):
            return f"{where} uses {me}.{attr} other than to step it (line {use.lineno})"
    stmt = parents.get(step)
    if not (isinstance(stmt, ast.Expr) and stmt.value is step):
        return f"the step of {where} is not a statement of its own"
    cur = stmt
    while parents.get(cur) is not func:
        holder = parents.get(cur)
        if not isinstance(holder, ast.With) or cur not in holder.body:
            return (f"the step of {where} is nested in a statement other than with (line {holder.lineno}), so some "
                    "calls may not step")
        cur = holder
    return step


def _reads_gradients(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in GRADIENT_READS)
        or (isinstance(n, ast.Name) and n.id in GRADIENT_READS)
        for n in ast.walk(node)
    )


def _first_reader(func: ast.FunctionDef, step: ast.Call, parents, where: str) -> Union[ast.stmt, None, str]:
    """The first statement (in one of the blocks around the step) that reads the gradients
    before the step, None when none does, or why none can take an unscale_ before it."""
    chain: List[ast.stmt] = []
    cur = parents.get(step)
    while cur is not func:
        chain.append(cur)
        cur = parents.get(cur)
    chain.reverse()  # the outermost statement first, the step's own last
    block = func.body
    for holder in chain:
        for stmt in block[: block.index(holder)]:
            if _reads_gradients(stmt):
                return stmt
        if isinstance(holder, ast.With):
            if any(_reads_gradients(item) for item in holder.items):
                return f"the with statement around the step of {where} reads the gradients (line {holder.lineno})"
            block = holder.body
    return None


def _own_lines(lines: List[str], func: ast.FunctionDef, stmt: ast.stmt, first: int, last: int) -> bool:
    """Whether ``stmt`` starts its first line and no statement of ``func`` outside it starts
    on one of the lines ``first``..``last``."""
    if lines[first - 1][: stmt.col_offset].strip():
        return False
    inside = {id(n) for n in ast.walk(stmt)}
    return not any(
        isinstance(n, ast.stmt) and first <= n.lineno <= last and id(n) not in inside for n in ast.walk(func)
    )


def base_step_gap(source: str, cls: str, method: str, attr: str, scaler: str) -> Optional[str]:
    """Why the rewritten base ``source`` does not step ``self.<attr>`` in ``cls.method()``
    through ``self.<scaler>`` with its ``update()`` right after (what the override's edit
    mirrors), or None when it does."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return "it does not parse"
    owner = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    func = next((n for n in getattr(owner, "body", []) if isinstance(n, ast.FunctionDef) and n.name == method), None)
    if func is None or not func.args.args:
        return f"{cls}.{method}() is not there"
    me = func.args.args[0].arg
    want = [f"{me}.{scaler}.step({me}.{attr})", f"{me}.{scaler}.update()"]
    for node in ast.walk(func):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list):
                texts = [ast.unparse(s) if isinstance(s, ast.Expr) else "" for s in block]
                if any(texts[i : i + 2] == want for i in range(len(texts) - 1)):
                    return None
    return f"{cls}.{method}() does not step {me}.{attr} through {me}.{scaler} with an update() right after"
