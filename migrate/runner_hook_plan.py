"""The cross-file plan's runner-hook route: the GradScaler lives on the runner whose
``__init__`` initialized apex, and a hook of another file scales the loss that runner's step
stored (cvpods).

cvpods' ``DefaultRunner.__init__`` runs ``amp.initialize`` on ``self.model, self.optimizer``;
its base ``SimpleRunner.run_step`` (a file without apex.amp) runs the forward pass and stores
``self.step_outputs = {"loss_for_backward": losses}``; ``OptimizationHook.after_step`` reads
``self.trainer.step_outputs["loss_for_backward"]`` and scales it with
``amp.scale_loss(losses, self.trainer.optimizer)``, where ``register_hooks`` of the runners'
root class set ``h.trainer = weakref.proxy(self)``.  Natively the runner keeps the GradScaler
(``self.scaler``, created where the initialize was, disabled otherwise), the hook scales and
steps through ``self.trainer.scaler`` (the framework route's carried access), and the run
step puts its forward pass under autocast while the runner carries an enabled GradScaler
(``runner_step_route``).  Proven only when

* the launcher's one training initialize is in ``__init__`` of its class, given
  ``self.<model>`` and ``self.<optimizer>``;
* every apex.amp site of the hook's file is an ``amp.scale_loss`` in a method, given
  ``self.<carrier>.<optimizer>`` and a loss that method binds once, from
  ``self.<carrier>.<outputs>[<key>]``;
* every store of ``.<carrier>`` in the walked files is ``x.<carrier> = self`` (or
  ``weakref.proxy(self)``) in a method of one class the launcher's class derives from (the
  hooks' runner is always one of its instances);
* every store of ``.<outputs>`` in the walked files is in one method of one class the
  launcher's class derives from, in a file without apex.amp, which no class deriving from it
  redefines, and the run step's edit is proven there;
* no class deriving from the launcher's has an ``__init__`` that skips the base's;
* every other file reading apex's global state (``amp._amp_state``) only asks, in a probe the
  plan lets go (``probe_gate_plan``), whether apex was initialized: it joins the component.

The launcher, the hook's file and the run step's file form one component.  Pure data, from
the index and the walked files' text.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Set, Tuple

from . import stdlib_trees
from .repo_index import ModuleSummary, parent_links
from .runner_step_route import runner_step_route

Def = Tuple[str, str]


def add_runner_hook_routes(plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions,
                           files: Dict[str, Tuple[str, bytes]]):
    """``plan`` with one component per launcher whose runner's hooks, in other files, scale
    the losses its step stored; ``files``: every walked file (path -> shown, bytes)."""
    from .repo_plan import FilePlan

    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    for launcher in sorted(launchers):
        own = plan.files.get(launcher)
        inits = by_path[launcher].training_inits
        if len(inits) != 1 or inits[0].method != "__init__" or not inits[0].optimizer_attr or launcher not in files:
            continue
        site = inits[0]
        hooks = _hook_sites(by_path, files, launcher, site.optimizer_attr)
        if not hooks or not _replaceable(plan, launcher, hooks):
            continue
        for path in {launcher, *(h.path for h in hooks)}:
            if path in plan.files:  # the constructor route's part, which could not follow the loss
                plan.files[path] = replace(plan.files[path], component=None, entries=(), pass_to=(),
                                           unreferenced=(), optional_entries=(), method_entries=())
        own = plan.files.get(launcher)
        route = _route(hooks, by_path, launcher, site, definitions, files, plan)
        hook_paths = sorted({h.path for h in hooks})
        if isinstance(route, str):
            reason = f"{route} (the hooks of {', '.join(by_path[p].shown for p in hook_paths)} scale the losses " \
                     "the runner's step stored)"
            plan.files[launcher] = replace(own or FilePlan(), refusal=reason)
            for path in hook_paths:
                mine = plan.files.get(path, FilePlan())
                notes = dict(mine.notes)
                notes.update({h.cls: reason for h in hooks if h.path == path})
                plan.files[path] = replace(mine, notes=tuple(sorted(notes.items())))
            continue
        step_path, edit, scaler, where, probes = route
        own = replace(own, refusal="", notes=()) if own is not None else None  # how the hooks were not reached
        for path in probes:  # migrated with the launcher or not at all: they read the state it set
            plan.files[path] = replace(plan.files[path], component=number)
        plan.files[launcher] = replace(
            own or FilePlan(), component=number, scaler_name=scaler, heir_base=site.owner,
            heir_from=f"{site.owner}.{site.method}() in {by_path[launcher].shown}", dynamic_scaler=site.dynamic,
        )
        for path in hook_paths:
            mine = plan.files.get(path, FilePlan())
            classes = {h.cls for h in hooks if h.path == path}
            mine = replace(mine, notes=tuple((n, why) for n, why in mine.notes if n not in classes))
            carried = {(h.cls, h.method, f"{h.receiver}.{h.carrier}.{scaler}") for h in hooks if h.path == path}
            plan.files[path] = replace(
                mine, component=number, scaler_name=scaler, carried=tuple(sorted(set(mine.carried) | carried)),
                runner_step_autocast=tuple(sorted({(h.cls, h.method, where) for h in hooks if h.path == path})),
            )
        plan.runner_step_edits[step_path] = (number, edit, by_path[launcher].shown)
        number += 1
    return plan


def _replaceable(plan, launcher: str, hooks: List["_Hook"]) -> bool:
    """Whether the launcher and the hooks' files are in no component, or in one made of them
    alone where only the hook classes take the GradScaler through their constructor (that
    route cannot put autocast around a loss read off the runner: this one replaces it)."""
    own = plan.files.get(launcher)
    if own is None or own.component is None:
        return not any(plan.files.get(h.path) and plan.files[h.path].component is not None for h in hooks)
    members = {p for p, f in plan.files.items() if f.component == own.component}
    paths = {h.path for h in hooks}
    if not members <= {launcher} | paths:
        return False
    classes = {h.cls for h in hooks}
    return all(set(plan.files[p].entries) <= classes and not plan.files[p].method_entries for p in members - {launcher})


@dataclass(frozen=True)
class _Hook:
    """One ``amp.scale_loss`` of ``cls.method`` in ``path`` scaling through
    ``<receiver>.<carrier>.<optimizer>`` the loss read from ``<receiver>.<carrier>.<outputs>[key]``."""

    path: str
    cls: str
    method: str
    receiver: str
    carrier: str
    outputs: str
    key: str
    line: int


def _hook_sites(by_path, files, launcher: str, optimizer: str) -> List[_Hook]:
    """The scale_loss sites of other files that scale through ``self.<x>.<optimizer>`` (an
    empty list when some amp site of such a file is of another kind: no route)."""
    found: List[_Hook] = []
    for path, summary in sorted(by_path.items()):
        scales = [a for a in summary.amp_sites if a.member == "scale_loss"]
        if path == launcher or not scales or path not in files:
            continue
        tree = stdlib_trees.parse(files[path][1])
        if tree is None:
            continue
        parents = parent_links(tree)
        hooks = [_hook_of(tree, parents, path, a.line, optimizer) for a in scales]
        if not any(hooks):
            continue
        if not all(hooks) or len(scales) != len(summary.amp_sites):
            return []
        found.extend(h for h in hooks if h is not None)
    return found


def _hook_of(tree: ast.Module, parents, path: str, line: int, optimizer: str) -> Optional[_Hook]:
    call = next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line
                 and isinstance(n.func, ast.Attribute) and n.func.attr == "scale_loss"), None)
    if call is None or len(call.args) != 2 or call.keywords:
        return None
    method, cls = _method_and_class(parents, call)
    if method is None or cls is None or not method.args.args:
        return None
    me = method.args.args[0].arg
    opt = call.args[1]
    if not (isinstance(opt, ast.Attribute) and opt.attr == optimizer and isinstance(opt.value, ast.Attribute)
            and isinstance(opt.value.value, ast.Name) and opt.value.value.id == me):
        return None
    carrier = opt.value.attr
    loss = call.args[0]
    if isinstance(loss, ast.Name):
        values = [n.value for n in ast.walk(method) if isinstance(n, ast.Assign)
                  and any(isinstance(t, ast.Name) and t.id == loss.id for t in n.targets)]
        augmented = {id(n.target) for n in ast.walk(method) if isinstance(n, ast.AugAssign)}  # losses /= n
        stores = [n for n in ast.walk(method) if isinstance(n, ast.Name) and n.id == loss.id
                  and isinstance(n.ctx, ast.Store) and id(n) not in augmented]
        if len(values) != 1 or len(stores) != 1 or any(isinstance(a, ast.arg) and a.arg == loss.id
                                                       for a in ast.walk(method.args)):
            return None
        loss = values[0]
    if not (isinstance(loss, ast.Subscript) and isinstance(loss.slice, ast.Constant)
            and isinstance(loss.slice.value, str) and isinstance(loss.value, ast.Attribute)):
        return None
    read = loss.value
    if not (isinstance(read.value, ast.Attribute) and read.value.attr == carrier
            and isinstance(read.value.value, ast.Name) and read.value.value.id == me):
        return None
    return _Hook(path, cls.name, method.name, me, carrier, read.attr, loss.slice.value, line)


def _route(hooks: List[_Hook], by_path, launcher: str, site, definitions, files, plan):
    """(run step's path, its edit, the GradScaler's attribute, where autocast goes, the files
    probing apex's state that go with the launcher), else why not."""
    from .repo_plan import SCALER_PARAM_NAMES, derived_classes

    runner: Def = (launcher, site.owner)
    kinds = {(h.carrier, h.outputs, h.key) for h in hooks}
    if len(kinds) != 1:
        return "the hooks read their losses off different attributes of their objects"
    carrier, outputs, key = kinds.pop()
    roots = _stores(files, carrier, definitions, by_path)
    if isinstance(roots, str):
        return roots
    bad = [r for r in roots if runner not in derived_classes(r, by_path, definitions)]
    if not roots or bad:
        return (f"the objects put on .{carrier} are not provably instances of {site.owner} or of a class it derives "
                "from")
    steps = _stores(files, outputs, definitions, by_path, runner_only=False)
    if isinstance(steps, str):
        return steps
    if len(steps) != 1:
        where = ", ".join(f"{c}.{m}() in {files[p][0]}" for p, c, m in sorted(steps))
        return (f"self.{outputs} is stored in {len(steps)} methods ({where}), not in one of a class {site.owner} "
                "derives from")
    (step_path, step_cls, step_method), = steps
    if runner not in derived_classes((step_path, step_cls), by_path, definitions):
        return f"{step_cls}, whose {step_method}() stores self.{outputs}, is no base of {site.owner}"
    summary = by_path.get(step_path)
    if summary is not None and summary.amp_sites:
        return f"{files[step_path][0]}, where {step_cls}.{step_method}() runs the forward pass, uses apex.amp itself"
    for path, cls in sorted(derived_classes((step_path, step_cls), by_path, definitions) - {(step_path, step_cls)}):
        other = definitions.summary(path) or ModuleSummary(path, path)
        if step_method in other.class_members.get(cls, set()):
            return f"{cls} in {other.shown} redefines {step_method}(), whose forward pass the hooks' losses come from"
    for path, cls in sorted(derived_classes(runner, by_path, definitions) - {runner}):
        other = definitions.summary(path) or ModuleSummary(path, path)
        if cls in other.unchained_inits:
            return f"{cls}'s __init__ does not call the base's, so its instances would lack the GradScaler"
    probes = []
    for path, (shown, source) in sorted(files.items()):
        if path == launcher or path in {h.path for h in hooks} or b"_amp_state" not in source:
            continue
        if plan.files.get(path) is None or not plan.files[path].probe_gates:
            return (f"{shown} reads apex's global state (amp._amp_state), which stays on apexcompat.amp and no longer "
                    "sees this initialize once it is native")
        if plan.files[path].component is not None:
            return f"{shown}, which asks apex's global state whether it was initialized, takes part in another route"
        probes.append(path)
    model = _initialized_model(files[launcher][1], site.line)
    if model is None:
        return "the model amp.initialize is given is not an attribute of self"
    used: Set[str] = set()
    for path in {launcher, step_path, *(h.path for h in hooks)}:
        if path in by_path:
            used |= by_path[path].identifiers | by_path[path].object_attributes
    # a runner of any class may read the attribute (the run step's switch): one no walked file
    # reads off an object
    scaler = next((n for n in SCALER_PARAM_NAMES + ("apexcompat_grad_scaler",) if n not in used and not any(
        re.search(rb"\." + n.encode() + rb"\b", source) for _shown, source in files.values())), None)
    if scaler is None:
        return "every attribute name the GradScaler could take on the runner is read off an object somewhere"
    shown, source = files[step_path]
    edit = runner_step_route(step_path, shown, source, step_cls, step_method, outputs, key, model, scaler)
    if isinstance(edit, str):
        return edit
    return step_path, edit, scaler, f"{step_cls}.{step_method}() in {shown}", probes


def _stores(files, attr: str, definitions, by_path, runner_only: bool = True):
    """Every store of ``.<attr>`` in the walked files: with ``runner_only`` the classes whose
    methods put ``self`` (or ``weakref.proxy(self)``) there on another object; else the
    (path, class, method) storing ``self.<attr>``; why not, for any other store."""
    word = f".{attr}".encode()
    found = set()
    for path, (shown, source) in sorted(files.items()):
        if word not in source:
            continue
        tree = stdlib_trees.parse(source)
        if tree is None:
            return f"{shown} does not parse"
        parents = parent_links(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("setattr", "delattr") and \
                    any(isinstance(a, ast.Constant) and a.value == attr for a in node.args):
                return f"{shown} sets .{attr} by name at line {node.lineno}"
            if not (isinstance(node, ast.Attribute) and node.attr == attr and not isinstance(node.ctx, ast.Load)):
                continue
            method, cls = _method_and_class(parents, node)
            stmt = parents.get(node)
            why = f"{shown} stores .{attr} at line {node.lineno}"
            if method is None or cls is None or not method.args.args or not isinstance(stmt, ast.Assign) \
                    or stmt.targets != [node]:
                return why + ", not in a method of a top-level class"
            me = method.args.args[0].arg
            own = isinstance(node.value, ast.Name) and node.value.id == me
            if runner_only:
                value = stmt.value
                if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords and \
                        ast.unparse(value.func) in ("weakref.proxy", "proxy"):
                    value = value.args[0]
                if own or not (isinstance(value, ast.Name) and value.id == me):
                    return why + f", not as x.{attr} = {me} on another object"
                found.add((path, cls.name))
            else:
                if not own:
                    return why + f" on another object than {me}"
                found.add((path, cls.name, method.name))
    return found


def _initialized_model(source: bytes, line: int) -> Optional[str]:
    tree = stdlib_trees.parse(source)
    call = tree and next((n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.lineno == line
                          and isinstance(n.func, ast.Attribute) and n.func.attr == "initialize"), None)
    first = call.args[0] if call is not None and call.args else None
    if isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id == "self":
        return first.attr
    return None


def _method_and_class(parents, node):
    """The plain method around ``node`` and its top-level class (None, None elsewhere)."""
    cur = parents.get(node)
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        cur = parents.get(cur)
    cls = parents.get(cur)
    if not isinstance(cur, ast.FunctionDef) or not isinstance(cls, ast.ClassDef) or \
            not isinstance(parents.get(cls), ast.Module):
        return None, None
    return cur, cls
