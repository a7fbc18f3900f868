"""The step-heir route's edit of one file without apex.amp: a subclass's training loop
that calls the base class's scaling methods and steps the optimizers they scale for.

The base class (the launcher's) scales each loss in a method of its own
(``def d_backward(self): with amp.scale_loss(loss, self.d_optim, loss_id=0) as s:
s.backward()``) and keeps the GradScaler on ``self``; a subclass of another file drives
the loop: ``self.d_optim.zero_grad(); self.d_backward(); self.d_optim.step()``.  That loop
is edited as bytes here: each step of a scaled optimizer goes through the inherited
GradScaler, one ``update()`` follows the loop's last step, and the statements between the
backwards and steps that may run a forward pass go under ``torch.autocast``, enabled
exactly when the GradScaler is.  Proven only for this shape:

- one method of the file's subclasses calls the scaling methods and steps, each as a
  plain statement (a scaling call, ``self.<opt>.step()`` without arguments), all inside
  one loop directly in the method, nested in nothing but ``if`` blocks of it;
- each scaling call is followed, in its block or an enclosing one of the loop, by a step
  of every optimizer it scales for, and preceded there by a ``zero_grad`` of each one it
  is the first to scale for in the loop (the gradients restart each iteration: the
  GradScaler unscales them at the step, as apex unscaled each loss at its backward);
- each step is preceded, in its block or an enclosing one, by a call scaling for it;
- the last step stands directly in the loop's body after all others (the ``update()``
  goes right after it, so each iteration's steps share one scale), and no ``break``,
  ``continue`` or ``return`` of the loop lies between its first scaling and that update;
- outside the loop the method calls nothing on ``self`` but methods of the classes (no
  forward pass of a model attribute).

Pure ``ast``.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Sequence, Set, Tuple, Union

from . import stdlib_trees
from .holder_route import HolderEdit, compiled_or_reason, device_of, physical_lines, torch_import_after
from .repo_index import parent_links

#: method names of ``self.<x>.<name>(...)`` that run no forward pass (no autocast needed)
NOT_FORWARD = frozenset({
    "zero_grad", "step", "train", "eval", "state_dict", "load_state_dict", "parameters", "named_parameters",
    "info", "debug", "warning", "error", "add_scalar", "add_scalars", "update", "updates", "resets",
})
_JUMPS = (ast.Break, ast.Continue, ast.Return)


def step_heir_route(path: str, shown: str, source: bytes, classes: Set[str], scaling: Dict[str, Tuple[str, ...]],
                    scaler: str, methods_known: Sequence[str] = ()) -> Union[HolderEdit, str]:
    """The edit of ``source`` whose classes ``classes`` (subclasses of the launcher's class)
    call the scaling methods ``scaling`` (method -> the optimizer attributes it scales for)
    and step those optimizers through ``self.<scaler>``, else why not ("" when no method of
    those classes calls a scaling method or steps such an optimizer); ``methods_known``: the
    base class's methods (a call of one of them outside the loop is no forward pass of a
    model attribute)."""
    tree = stdlib_trees.parse(source)
    text = stdlib_trees.decoded(source)
    if tree is None or text is None:
        return f"{shown} does not parse"
    parents = parent_links(tree)
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    scaled = {a for attrs in scaling.values() for a in attrs}
    if scaler in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}:
        return f"{shown} already reads an attribute named {scaler}"
    uses = [n for n in ast.walk(tree) if _is_use(n, scaling, scaled)]
    if not uses:
        return ""
    methods = {_method(parents, n, classes) for n in uses}
    if len(methods) != 1 or None in methods:
        return (f"{shown} calls the scaling methods or steps the optimizers they scale for outside one method of "
                f"{' / '.join(sorted(classes))}")
    method = methods.pop()
    me = method.args.args[0].arg
    where = f"{method.name}() in {shown}"
    calls: List[Tuple[ast.Expr, Tuple[str, ...]]] = []
    steps: List[Tuple[ast.Expr, str]] = []
    for node in uses:
        stmt = parents.get(parents.get(node))
        if isinstance(node, ast.Attribute) and node.attr in scaling:  # self.<scaling method>
            call = parents.get(node)
            if not (isinstance(call, ast.Call) and call.func is node and isinstance(stmt, ast.Expr)
                    and stmt.value is call and _is_name(node.value, me)):
                return f"{me}.{node.attr} is used at {shown}:{node.lineno} other than as a call statement"
            calls.append((stmt, scaling[node.attr]))
        else:  # self.<opt>.step
            call = parents.get(node)
            opt = node.value
            if not (isinstance(call, ast.Call) and call.func is node and not call.args and not call.keywords
                    and isinstance(stmt, ast.Expr) and stmt.value is call and _is_name(opt.value, me)):
                return f"{ast.unparse(node)} is used at {shown}:{node.lineno} other than as a plain step() statement"
            steps.append((stmt, opt.attr))
    loop = _loop(method, [s for s, _a in calls] + [s for s, _a in steps], parents)
    if isinstance(loop, str):
        return f"{loop} in {where}"
    order = _order(loop)
    why = _proven_order(loop, calls, steps, order, parents, me, where)
    if why:
        return why
    last = max((s for s, _a in steps), key=lambda s: order[id(s)])
    if parents.get(last) is not loop or last not in loop.body:
        return f"the last step of the loop in {where} is not directly in its body"
    known = set(methods_known) | {f.name for f in parents.get(method).body if isinstance(f, ast.FunctionDef)}
    for stmt in method.body:
        if stmt is loop:
            continue
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and _is_name(n.func.value, me) \
                    and n.func.attr not in known:
                return (f"{where} calls {ast.unparse(n.func)}() outside its training loop (line {n.lineno}): a forward "
                        "pass there would run outside autocast")
    barriers = {id(s) for s, _a in calls} | {id(s) for s, _a in steps}
    runs: List[Tuple[ast.stmt, ast.stmt]] = []
    why = _runs(loop.body, barriers, self_roots(method, me), runs, where)
    if why:
        return why
    holder = f"{me}.{scaler}"
    unit = " " * (loop.body[0].col_offset - loop.col_offset or 4)
    device = device_of(loop.body, me)
    edits: List[Tuple[int, int, Tuple[str, ...]]] = []
    for first, end in runs:
        start, stop = first.lineno, end.end_lineno
        if lines[start - 1][: first.col_offset].strip() or _shares_lines(method, first, end, start, stop, parents):
            return f"the statements of {where} at lines {start}-{stop} do not stand on lines of their own"
        pad = " " * first.col_offset
        head = f"{pad}with torch.autocast({device}, dtype=torch.float16, enabled={holder}.is_enabled()):"
        body = tuple(unit + line if line.strip() else line for line in lines[start - 1 : stop])
        edits.append((start, stop, (head, *body)))
    for stmt, attr in steps:
        pad = " " * stmt.col_offset
        new = [f"{pad}{holder}.step({me}.{attr})"]
        if stmt is last:
            new.append(f"{pad}{holder}.update()")
        edits.append((stmt.lineno, stmt.end_lineno, tuple(new)))
    for n in ast.walk(method):
        if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and n.lineno != n.end_lineno:
            return f"a string spans lines in {where}"
    edits.sort()
    if any(a[1] >= b[0] for a, b in zip(edits, edits[1:])):
        return f"the lines of {where} are not laid out one statement a line"
    torch_after = torch_import_after(tree)
    if torch_after < 0:
        return f"{shown} imports nothing at module level to put `import torch` after"
    cls = parents.get(method)
    edit = HolderEdit(path, shown, cls.name, method.name, "", scaler, tuple(edits), torch_after, 0)
    return compiled_or_reason(source, edit)


def step_heir_message(edit: HolderEdit, base: str) -> str:
    return (
        f"{edit.cls}.{edit.method}() steps the optimizers {base} scales its losses for: each step goes through the "
        f"GradScaler it inherits (self.{edit.new_attribute}), one update() follows the last, and its forward passes "
        "run under torch.autocast while that GradScaler is enabled"
    )


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_use(node: ast.AST, scaling: Dict[str, Tuple[str, ...]], scaled: Set[str]) -> bool:
    """``<x>.<scaling method>`` or ``<x>.<scaled optimizer>.step``."""
    if not isinstance(node, ast.Attribute):
        return False
    if node.attr in scaling:
        return True
    return node.attr == "step" and isinstance(node.value, ast.Attribute) and node.value.attr in scaled


def _method(parents, node: ast.AST, classes: Set[str]) -> Optional[ast.FunctionDef]:
    """The plain method of one of ``classes`` (top-level) around ``node``, else None."""
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        cur = parents.get(cur)
    cls = parents.get(cur) if isinstance(cur, ast.FunctionDef) else None
    if not (isinstance(cls, ast.ClassDef) and cls.name in classes and isinstance(parents.get(cls), ast.Module)):
        return None
    if cur.decorator_list or not cur.args.args:
        return None
    return cur


def _loop(method: ast.FunctionDef, stmts: Sequence[ast.stmt], parents) -> Union[ast.For, ast.While, str]:
    """The loop directly in ``method`` holding every statement of ``stmts``, each nested in
    nothing but ``if`` blocks of that loop's body."""
    loops = set()
    for stmt in stmts:
        cur = parents.get(stmt)
        while isinstance(cur, ast.If):
            cur = parents.get(cur)
        if not (isinstance(cur, (ast.For, ast.While)) and parents.get(cur) is method and not cur.orelse):
            return (f"the scaling call or step at line {stmt.lineno} is not in a loop directly in the method, "
                    "nested in nothing but ifs")
        loops.add(cur)
    if len(loops) != 1:
        return "the scaling calls and steps are in several loops"
    return loops.pop()


def _order(loop: ast.AST) -> Dict[int, int]:
    """Statement id -> its position in the loop in source order."""
    stmts = sorted((n for n in ast.walk(loop) if isinstance(n, ast.stmt)), key=lambda n: (n.lineno, n.col_offset))
    return {id(s): i for i, s in enumerate(stmts)}


def _encloses(parents, outer_stmt: ast.stmt, inner_stmt: ast.stmt) -> bool:
    """Whether ``outer_stmt``'s block is ``inner_stmt``'s or holds it (so whenever
    ``inner_stmt`` runs in an iteration, the block of ``outer_stmt`` runs too)."""
    block = parents.get(outer_stmt)
    cur = parents.get(inner_stmt)
    while cur is not None:
        if cur is block:
            return _same_branch(parents, outer_stmt, inner_stmt, block)
        cur = parents.get(cur)
    return False


def _same_branch(parents, outer_stmt: ast.stmt, inner_stmt: ast.stmt, block: ast.AST) -> bool:
    """Both are in the same list (``body``/``orelse``) of ``block``, directly or not."""
    cur = inner_stmt
    while parents.get(cur) is not block:
        cur = parents.get(cur)
    for name in ("body", "orelse"):
        part = getattr(block, name, [])
        if outer_stmt in part:
            return cur in part
    return False


def _shares_lines(method: ast.FunctionDef, first: ast.stmt, end: ast.stmt, start: int, stop: int, parents) -> bool:
    """Whether a statement of ``method`` outside the span ``first``..``end`` (siblings in
    one block) starts on one of its lines (``x = f(); self.d_backward()``)."""
    block = enclosing_block(parents, first)
    inside = block[block.index(first) : block.index(end) + 1]
    covered = {id(n) for s in inside for n in ast.walk(s)}
    return any(isinstance(n, ast.stmt) and start <= n.lineno <= stop and id(n) not in covered for n in ast.walk(method))


def enclosing_block(parents, stmt: ast.stmt) -> List[ast.stmt]:
    """The statement list ``stmt`` stands in (its own one-item list where none holds it)."""
    holder = parents.get(stmt)
    for name in ("body", "orelse", "finalbody"):
        part = getattr(holder, name, None)
        if isinstance(part, list) and stmt in part:
            return part
    return [stmt]


def _proven_order(loop, calls, steps, order, parents, me: str, where: str) -> str:
    zero = {}
    for n in ast.walk(loop):
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) \
                and n.value.func.attr == "zero_grad" and isinstance(n.value.func.value, ast.Attribute) \
                and _is_name(n.value.func.value.value, me):
            zero.setdefault(n.value.func.value.attr, []).append(n)
    first_call: Dict[str, ast.stmt] = {}
    for stmt, attrs in sorted(calls, key=lambda c: order[id(c[0])]):
        for attr in attrs:
            first_call.setdefault(attr, stmt)
            if not any(a == attr and order[id(s)] > order[id(stmt)] and _encloses(parents, s, stmt) for s, a in steps):
                return (f"no {me}.{attr}.step() follows the scaling call at line {stmt.lineno} of {where} whenever "
                        "that call runs")
    for attr, stmt in first_call.items():
        if not any(order[id(z)] < order[id(stmt)] and _encloses(parents, z, stmt) for z in zero.get(attr, [])):
            return (f"{me}.{attr}.zero_grad() does not come before the first scaling call for it (line {stmt.lineno}) "
                    f"in the loop of {where}: gradients carried over would mix scales")
    for stmt, attr in steps:
        if not any(attr in attrs and order[id(c)] < order[id(stmt)] and _encloses(parents, c, stmt)
                   for c, attrs in calls):
            return f"the step at line {stmt.lineno} of {where} is not preceded by a call scaling for {me}.{attr}"
    start = min(order[id(s)] for s, _a in calls)
    end = max(order[id(s)] for s, _a in steps)
    for n in ast.walk(loop):
        if isinstance(n, _JUMPS) and start < order[id(n)] < end and _jumps_out(parents, n, loop):
            return f"a {type(n).__name__.lower()} at line {n.lineno} of {where} may skip the GradScaler's update()"
    return ""


def _jumps_out(parents, node: ast.stmt, loop: ast.AST) -> bool:
    """Whether the jump ``node`` leaves the iteration of ``loop`` (a return of a nested
    function, a break of an inner loop does not)."""
    cur = parents.get(node)
    while cur is not loop:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return False
        if isinstance(cur, (ast.For, ast.While, ast.AsyncFor)) and not isinstance(node, ast.Return):
            return False
        cur = parents.get(cur)
    return True


def forward_like(stmt: ast.stmt, roots: Set[str]) -> bool:
    """Whether ``stmt`` calls something reached from ``self`` (or a local bound to an
    attribute of it: ``roots``) that may run a forward pass."""
    for n in ast.walk(stmt):
        if not isinstance(n, ast.Call):
            continue
        root = n.func
        while isinstance(root, (ast.Attribute, ast.Subscript)):
            root = root.value
        name = n.func.attr if isinstance(n.func, ast.Attribute) else ""
        if isinstance(root, ast.Name) and root.id in roots and name not in NOT_FORWARD:
            return True
    return False


def self_roots(method: ast.FunctionDef, me: str) -> Set[str]:
    """``self`` and the locals of ``method`` bound to something read off it (``gen = self.gen``)."""
    roots = {me}
    for n in ast.walk(method):
        if isinstance(n, ast.Assign) and isinstance(n.value, (ast.Attribute, ast.Subscript)):
            root = n.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if _is_name(root, me):
                roots |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    return roots


def _holds(stmt: ast.stmt, barriers: Set[int]) -> bool:
    return any(id(n) in barriers for n in ast.walk(stmt))


def _inert(stmt: ast.stmt) -> bool:
    """``self.<opt>.zero_grad()`` and the like: a statement outside any autocast span's ends."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) \
        and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "zero_grad"


def makes_calls(stmt: ast.stmt) -> bool:
    """Whether ``stmt`` calls anything (a ``@`` too: autocast runs matmul in float16)."""
    return not _inert(stmt) and any(
        isinstance(n, ast.Call) or (isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult)) for n in ast.walk(stmt)
    )


def _runs(block: List[ast.stmt], barriers: Set[int], roots: Set[str], out: List[Tuple[ast.stmt, ast.stmt]],
          where: str, after: bool = False) -> str:
    """Collects into ``out`` the (first, last) statements of each stretch of ``block``
    between the backwards and steps: from its first call (before the iteration's first
    backward, its first call reached from ``self``, a forward pass) through its last call
    (``zero_grad()`` aside), so the forward passes and the losses computed from their outputs
    run under autocast; why not, when a statement holding a backward or step is neither one
    nor an ``if`` to look into.  ``after``: a backward or step came before ``block`` in the
    iteration."""
    run: List[ast.stmt] = []
    seen = [after]

    def close() -> None:
        start = next((i for i, s in enumerate(run) if (makes_calls(s) if seen[0] else forward_like(s, roots))), None)
        if start is not None:
            stop = max(i for i, s in enumerate(run) if i == start or makes_calls(s))
            out.append((run[start], run[stop]))
        run.clear()

    for stmt in block:
        if not _holds(stmt, barriers):
            run.append(stmt)
            continue
        close()
        if id(stmt) not in barriers:
            if not isinstance(stmt, ast.If) or _holds(stmt.test, barriers):
                return (f"line {stmt.lineno} of {where} holds a scaling call or step inside a "
                        f"{type(stmt).__name__.lower()}")
            why = _runs(stmt.body, barriers, roots, out, where, seen[0]) or \
                _runs(stmt.orelse, barriers, roots, out, where, seen[0])
            if why:
                return why
        seen[0] = True
    close()
    return ""
