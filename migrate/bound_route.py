"""The bound-backward route's edit of one file without apex.amp: the class whose objects
the launcher binds a scaling function onto (``bound_plan``).

SimpleCV's ``trainer.Launcher`` runs the forward pass, calls ``self.backward(loss,
self.optimizer)``, clips and steps ``self._optimizer``; ``override_backward(fn)`` binds
``self.backward = types.MethodType(fn, self)``, and the launcher of another file binds
a function that scales the loss through apex.amp.  apex patched that optimizer's ``step``
and ran the forward under its casts.  Natively the launcher puts its GradScaler on the
object (``tl.grad_scaler = scaler``); this class starts with ``self.grad_scaler = None``
(objects built elsewhere, with the plain backward, keep training as before) and, while one
is set: runs the statements from the forward pass through the loss under
``torch.autocast`` (enabled as the GradScaler is), unscales the gradients right after the
method that runs the backwards returns (before the caller clips or reads them), and steps
through it, one ``update()`` after.  Proven only for this shape:

- the binder's body is the one statement ``self.<attr> = types.MethodType(<param>, self)``
  and nothing else in the class assigns ``self.<attr>``;
- ``self.<attr>(loss, ...)`` is called, as statements, only in one method, each directly
  in the body of one loop directly in that method, after the statements that run the
  forward pass and compute ``loss``; that method reads no ``.grad`` and clips nothing, and
  outside the loop runs no forward pass;
- ``__init__`` keeps one of its parameters as the optimizer (``self._optimizer =
  optimizer``), which nothing else assigns; every step of it is the plain statement
  ``self._optimizer.step()`` directly in the body of one method of the class, followed there
  by ``self._optimizer.zero_grad()`` (each step's gradients start from zero);
- each call of the backward-running method is a statement followed in its block by a call
  statement of the stepping method, with no jump, return or other backward between.

Pure ``ast``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from . import stdlib_trees
from .holder_route import HolderEdit, compiled_or_reason, device_of, physical_lines, torch_import_after
from .repo_index import parent_links
from .step_heir_route import enclosing_block, forward_like, makes_calls, self_roots

_JUMPS = (ast.Break, ast.Continue, ast.Return)


@dataclass(frozen=True)
class BoundEdit:
    """The edit, and what the plan checks against the launcher."""

    edit: HolderEdit
    #: the bound attribute (``backward``) and the ``__init__`` parameter kept as the optimizer
    attribute: str
    optimizer_param: str
    optimizer_position: int
    #: the method running the backwards and the stepping one (other files must not call the first)
    backward_method: str
    step_method: str
    #: methods of the class that may reach the backward, the step or the binder (through
    #: calls on self): the launcher calls none of them before it binds
    training: Tuple[str, ...] = ()


def bound_route(path: str, shown: str, source: bytes, cls_name: str, binder: str,
                scaler: str) -> Union[BoundEdit, str]:
    """The edit of the class ``cls_name`` of ``source`` whose method ``binder`` binds a
    function as a method, else why not."""
    tree = stdlib_trees.parse(source)
    text = stdlib_trees.decoded(source)
    if tree is None or text is None:
        return f"{shown} does not parse"
    cls = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == cls_name), None)
    if cls is None:
        return f"{shown} defines no top-level class {cls_name}"
    where = f"{cls_name} in {shown}"
    if scaler in {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}:
        return f"{shown} already reads an attribute named {scaler}"
    methods = {f.name: f for f in cls.body if isinstance(f, ast.FunctionDef)}
    if any(isinstance(f, ast.AsyncFunctionDef) for f in cls.body):
        return f"{where} has async methods"
    attribute = _bound_attribute(methods.get(binder), tree)
    if not attribute:
        return f"{cls_name}.{binder}() in {shown} is not the one statement `self.<attr> = types.MethodType(fn, self)`"
    parents = parent_links(tree)
    stores = [n for n in ast.walk(cls) if isinstance(n, ast.Attribute) and n.attr == attribute
              and isinstance(n.ctx, (ast.Store, ast.Del))]
    if len(stores) != 1:
        return f"{where} assigns .{attribute} more than once"
    kept = _kept_optimizer(methods.get("__init__"))
    if isinstance(kept, str):
        return f"{cls_name}.__init__ in {shown} {kept}"
    optimizer, param, position = kept
    if sum(1 for n in ast.walk(cls) if isinstance(n, ast.Attribute) and n.attr == optimizer
           and isinstance(n.ctx, (ast.Store, ast.Del))) != 1:
        return f"{where} assigns self.{optimizer} more than once"
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    edits: List[Tuple[int, int, Tuple[str, ...]]] = []

    # the backward calls: one method, one loop, the forward before each call under autocast
    calls = [n for n in ast.walk(cls) if isinstance(n, ast.Attribute) and n.attr == attribute
             and isinstance(n.ctx, ast.Load) and _on_self(parents, n, cls)]
    hosts = {_method_of(parents, n, cls) for n in calls}
    if len(hosts) != 1 or None in hosts:
        return f"{where} reads self.{attribute} outside one of its methods, or in several"
    backward_method = hosts.pop()
    me = backward_method.args.args[0].arg if backward_method.args.args else ""
    where_backward = f"{backward_method.name}() in {shown}"
    why = _autocast_edits(backward_method, calls, me, parents, lines, scaler, edits, where_backward)
    if why:
        return why

    # the steps: one method, each a plain statement of its body
    steps = [n for n in ast.walk(cls) if isinstance(n, ast.Attribute) and n.attr == "step"
             and isinstance(n.value, ast.Attribute) and n.value.attr == optimizer]
    step_hosts = {_method_of(parents, n, cls) for n in steps}
    if len(steps) != 1 or None in step_hosts:
        return f"{where} steps self.{optimizer} other than once, in one of its methods"
    step_method = step_hosts.pop()
    stepper = step_method.args.args[0].arg
    step = parents.get(parents.get(steps[0]))
    call = parents.get(steps[0])
    if not (isinstance(step, ast.Expr) and step.value is call and not call.args and not call.keywords
            and step in step_method.body and _is_name(steps[0].value.value, stepper)):
        return f"the step of self.{optimizer} in {step_method.name}() of {shown} is not a plain statement of its body"
    zeroed = step_method.body[step_method.body.index(step) + 1 :]
    if not any(isinstance(z, ast.Expr) and isinstance(z.value, ast.Call) and isinstance(z.value.func, ast.Attribute)
               and z.value.func.attr == "zero_grad" and ast.unparse(z.value.func.value) == f"{stepper}.{optimizer}"
               for z in zeroed):
        return (f"{step_method.name}() in {shown} does not zero the gradients after its step: gradients carried over "
                "would mix scales")
    pad = " " * step.col_offset
    unit = " " * (step_method.body[0].col_offset - step_method.col_offset or 4)
    holder = f"{stepper}.{scaler}"
    edits.append((step.lineno, step.end_lineno, (
        f"{pad}if {holder} is not None:",
        f"{pad}{unit}{holder}.step({stepper}.{optimizer})",
        f"{pad}{unit}{holder}.update()",
        f"{pad}else:",
        f"{pad}{unit}{lines[step.lineno - 1].strip()}",
    )))

    # every call of the backward-running method: unscale_ right after it, a step follows
    why = _unscale_edits(cls, backward_method.name, step_method.name, optimizer, scaler, parents, lines, edits, shown)
    if why:
        return why

    init = methods["__init__"]
    last = init.body[-1]
    if not isinstance(last, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign)):
        return f"{cls_name}.__init__ in {shown} does not end with a simple statement"
    me_init = init.args.args[0].arg
    tail = lines[last.end_lineno - 1]
    edits.append((last.end_lineno, last.end_lineno, (tail, f"{' ' * last.col_offset}{me_init}.{scaler} = None")))
    edits.sort()
    if any(a[1] >= b[0] for a, b in zip(edits, edits[1:])):
        return f"the lines of {where} are not laid out one statement a line"
    for n in ast.walk(cls):
        if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes)) and n.lineno != n.end_lineno \
                and any(a <= n.end_lineno and n.lineno <= b for a, b, _new in edits):
            return f"a string spans lines edited in {where}"
    torch_after = torch_import_after(tree)
    if torch_after < 0:
        return f"{shown} imports nothing at module level to put `import torch` after"
    edit = HolderEdit(path, shown, cls_name, backward_method.name, attribute, scaler, tuple(edits), torch_after, 0)
    checked = compiled_or_reason(source, edit)
    if isinstance(checked, str):
        return checked
    training = _reaching(methods, {backward_method.name, step_method.name, binder, attribute})
    return BoundEdit(edit, attribute, param, position, backward_method.name, step_method.name, training)


def _reaching(methods, targets) -> Tuple[str, ...]:
    """The methods that are ``targets`` or call one of them on self, directly or not (a
    method that passes self on, or reads a method without calling it, counts too)."""
    uses = {}
    for name, method in methods.items():
        me = method.args.args[0].arg if method.args.args else ""
        named = set()
        for n in ast.walk(method):
            if isinstance(n, ast.Attribute) and _is_name(n.value, me):
                named.add(n.attr)
            elif isinstance(n, ast.Name) and n.id == me and not isinstance(n.ctx, ast.Store):
                named.add("<self>")
        uses[name] = named
    reached = set(targets)
    grew = True
    while grew:
        grew = False
        for name, named in uses.items():
            if name not in reached and (named & reached or "<self>" in _passed_on(methods[name])):
                reached.add(name)
                grew = True
    return tuple(sorted(reached))


def _passed_on(method: ast.FunctionDef) -> set:
    """{"<self>"} when ``method`` hands self to a call (``CheckPoint(self)``)."""
    me = method.args.args[0].arg if method.args.args else ""
    for n in ast.walk(method):
        if isinstance(n, ast.Call) and any(_is_name(a, me) for a in n.args + [k.value for k in n.keywords]):
            return {"<self>"}
    return set()


def bound_message(edit: HolderEdit, launcher: str) -> str:
    return (
        f"{launcher} binds a function that scales the loss onto {edit.cls}'s objects and puts its GradScaler on "
        f"them: self.{edit.new_attribute} (None unless set) steps the optimizer, unscales the gradients after "
        f"{edit.method}() and puts its forward passes under torch.autocast while it is enabled"
    )


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _bound_attribute(binder: Optional[ast.FunctionDef], tree: ast.Module) -> str:
    """``attr`` of ``self.attr = types.MethodType(fn, self)``, the binder's one statement."""
    if binder is None or binder.decorator_list or len(binder.args.args) != 2 or len(binder.body) != 1:
        return ""
    me, fn = (a.arg for a in binder.args.args)
    stmt = binder.body[0]
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Attribute)
            and _is_name(stmt.targets[0].value, me) and isinstance(stmt.value, ast.Call)):
        return ""
    call = stmt.value
    func = call.func
    imported = any(
        isinstance(s, ast.Import) and any(a.name == "types" and a.asname is None for a in s.names) for s in tree.body
    )
    if not (imported and isinstance(func, ast.Attribute) and func.attr == "MethodType" and _is_name(func.value, "types")
            and len(call.args) == 2 and not call.keywords and _is_name(call.args[0], fn)
            and _is_name(call.args[1], me)):
        return ""
    return stmt.targets[0].attr


def _kept_optimizer(init: Optional[ast.FunctionDef]) -> Union[Tuple[str, str, int], str]:
    """(attribute, parameter, position without self) of ``self.<attr> = <param>`` naming an
    optimizer in ``__init__``."""
    if init is None:
        return "is not defined"
    params = [a.arg for a in init.args.args]
    kept = [
        (s.targets[0].attr, s.value.id) for s in init.body
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Attribute)
        and params and _is_name(s.targets[0].value, params[0]) and isinstance(s.value, ast.Name)
        and s.value.id in params[1:] and "optim" in s.value.id.lower()
    ]
    if len(kept) != 1:
        return "does not keep one optimizer parameter on self"
    attr, param = kept[0]
    return attr, param, params.index(param) - 1


def _on_self(parents, node: ast.Attribute, cls: ast.ClassDef) -> bool:
    """``node`` reads an attribute of the first parameter of the method around it (or of
    anything but another object's: a read outside a method counts)."""
    method = _method_of(parents, node, cls)
    return method is None or not isinstance(node.value, ast.Name) or node.value.id == method.args.args[0].arg


def _method_of(parents, node: ast.AST, cls: ast.ClassDef) -> Optional[ast.FunctionDef]:
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        cur = parents.get(cur)
    if isinstance(cur, ast.FunctionDef) and parents.get(cur) is cls and not cur.decorator_list and cur.args.args:
        return cur
    return None


def _autocast_edits(method: ast.FunctionDef, reads: List[ast.Attribute], me: str, parents, lines, scaler: str,
                    edits: List[Tuple[int, int, Tuple[str, ...]]], where: str) -> str:
    loops = set()
    calls: List[ast.Expr] = []
    for read in reads:
        call = parents.get(read)
        stmt = parents.get(call)
        loop = parents.get(stmt)
        if not (isinstance(call, ast.Call) and call.func is read and call.args and _is_name(read.value, me)
                and isinstance(stmt, ast.Expr) and isinstance(loop, (ast.For, ast.While)) and stmt in loop.body
                and parents.get(loop) is method and not loop.orelse):
            return (f"{ast.unparse(read)} at line {read.lineno} of {where} is not called as a statement directly in a "
                    "loop of the method")
        loops.add(loop)
        calls.append(stmt)
    if len(loops) != 1 or len(calls) != 1:
        return f"{where} calls the bound backward other than once, in one loop"
    loop, stmt = loops.pop(), calls[0]
    for n in ast.walk(method):
        if (isinstance(n, ast.Attribute) and n.attr == "grad") or (
            isinstance(n, ast.Call) and "clip" in ast.unparse(n.func).lower()
        ):
            return f"{where} reads or clips gradients at line {n.lineno}, between backwards of one step"
    roots = self_roots(method, me)
    for other in method.body:
        if other is not loop and forward_like(other, roots):
            return f"{where} may run a forward pass outside its loop (line {other.lineno})"
    body = loop.body
    before = body[: body.index(stmt)]
    start = next((i for i, s in enumerate(before) if forward_like(s, roots)), None)
    loss = stmt.value.args[0]
    if start is None or not isinstance(loss, ast.Name):
        return f"no forward pass computes the loss handed to the bound backward in the loop of {where}"
    stop = max(i for i, s in enumerate(before) if i == start or makes_calls(s))
    if not any(isinstance(n, ast.Name) and n.id == loss.id and isinstance(n.ctx, ast.Store)
               for s in before[start : stop + 1] for n in ast.walk(s)):
        return f"the loss {loss.id} handed to the bound backward is not computed after the forward pass in {where}"
    for s in before[start : stop + 1]:
        for n in ast.walk(s):
            if isinstance(n, _JUMPS):
                return f"a {type(n).__name__.lower()} at line {n.lineno} of {where} lies in the forward pass"
    first, end = before[start], before[stop]
    if lines[first.lineno - 1][: first.col_offset].strip() or any(
        isinstance(n, ast.stmt) and first.lineno <= n.lineno <= end.end_lineno and n not in set(
            x for s in before[start : stop + 1] for x in ast.walk(s))
        for n in ast.walk(method)
    ):
        return f"the forward pass of {where} does not stand on lines of its own"
    device = device_of(body[: body.index(first) + 1], me)
    unit = " " * (body[0].col_offset - loop.col_offset or 4)
    holder = f"{me}.{scaler}"
    head = (f"{' ' * first.col_offset}with torch.autocast({device}, dtype=torch.float16, "
            f"enabled={holder} is not None and {holder}.is_enabled()):")
    moved = tuple(unit + line if line.strip() else line for line in lines[first.lineno - 1 : end.end_lineno])
    edits.append((first.lineno, end.end_lineno, (head, *moved)))
    return ""


def _unscale_edits(cls: ast.ClassDef, backward: str, step: str, optimizer: str, scaler: str, parents, lines,
                   edits: List[Tuple[int, int, Tuple[str, ...]]], shown: str) -> str:
    found = 0
    for n in ast.walk(cls):
        if not (isinstance(n, ast.Attribute) and n.attr == backward):
            continue
        found += 1
        call = parents.get(n)
        stmt = parents.get(call)
        method = _method_of(parents, n, cls)
        where = f"line {n.lineno} of {shown}"
        if method is None or not (
            isinstance(call, ast.Call) and call.func is n and isinstance(stmt, (ast.Expr, ast.Assign))
            and stmt.value is call and _is_name(n.value, method.args.args[0].arg)
        ):
            return f"{ast.unparse(n)} at {where} is not a call statement of a method on self"
        me = method.args.args[0].arg
        block = enclosing_block(parents, stmt)
        after = block[block.index(stmt) + 1 :]
        stepping = next((i for i, s in enumerate(after) if _calls_on(s, me, step)), None)
        if stepping is None:
            return f"no {me}.{step}() follows {me}.{backward}() in its block at {where}"
        for s in after[:stepping]:
            for m in ast.walk(s):
                if isinstance(m, _JUMPS + (ast.Raise,)) or (
                    isinstance(m, ast.Attribute) and m.attr in (backward, step, "backward")
                ):
                    return (f"line {m.lineno} of {shown} lies between {me}.{backward}() and {me}.{step}() and may "
                            "skip or repeat one")
        if lines[stmt.end_lineno - 1].rstrip().endswith((";", "\\")) or any(
            isinstance(m, ast.stmt) and m.lineno == stmt.end_lineno and m is not stmt and m not in set(ast.walk(stmt))
            for m in ast.walk(method)
        ):
            return f"the call at {where} does not end its line"
        pad = " " * stmt.col_offset
        unit = " " * (method.body[0].col_offset - method.col_offset or 4)
        edits.append((stmt.end_lineno, stmt.end_lineno, (
            lines[stmt.end_lineno - 1],
            f"{pad}if {me}.{scaler} is not None:",
            f"{pad}{unit}{me}.{scaler}.unscale_({me}.{optimizer})",
        )))
    if not found:
        return f"{cls.name} in {shown} never calls {backward}()"
    return ""


def _calls_on(stmt: ast.stmt, me: str, method: str) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and not stmt.value.args \
        and not stmt.value.keywords and isinstance(stmt.value.func, ast.Attribute) \
        and stmt.value.func.attr == method and _is_name(stmt.value.func.value, me)
