"""The cross-file plan's bound-backward route: the launcher binds a function of another
file that scales the loss onto an object of a class without apex.amp, whose own methods
run the forward pass, call that backward and step.

SimpleCV's ``run()`` initializes, builds ``tl = trainer.Launcher(model=model,
optimizer=optimizer, ...)`` and calls ``tl.override_backward(default_backward.amp_backward)``;
``amp_backward(self, total_loss, optimizer)`` scales with ``amp.scale_loss``.  Natively the
launcher puts its GradScaler on the object right after building it (``tl.grad_scaler =
scaler``, the built-object route's carry), the bound function scales through
``self.grad_scaler``, and the class's file is edited as bytes (``bound_route``): it steps,
unscales and runs its forward passes through that GradScaler while one is set, and is
unchanged for the objects built elsewhere.  Planned only when

* the launcher scales no loss itself and has one training initialize, with a dynamic loss
  scale, in a top-level function, which binds one function, read nowhere else in it, onto
  one object it builds once, after the initialize, handing it the optimizer the initialize returned (bound once
  in the function) for the parameter the class keeps as its optimizer; no method that may
  reach the backward or the step is called on the object between its build and the binding;
* the bound function is a top-level function of another file whose amp sites are all
  ``amp.scale_loss`` in it (the rule checks that it scales the loss its second parameter
  holds); no other file names it;
* the class (``bound_route``) is proven, no class derives from it, and no other file names
  the binder, the method running the backward or the GradScaler's attribute.

Pure data from the index.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Dict, Set, Tuple

from .bound_route import BoundEdit, bound_route
from .repo_index import ModuleSummary
from .runner_frameworks import CARRIER_ATTRIBUTE


def add_bound_routes(plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions,
                     unindexed: Dict[str, Tuple[str, bytes]], apex_free: Dict[str, bytes]):
    """``plan`` with one component per launcher that binds a scaling function onto an
    object of a class without apex.amp (files already in a component are left)."""
    from .repo_plan import SCALED_ELSEWHERE, FilePlan

    files: Dict[str, Tuple[str, bytes]] = dict(unindexed)
    files.update({p: (by_path[p].shown, src) for p, src in apex_free.items() if p in by_path})
    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    for launcher in sorted(launchers):
        found = _route(launcher, plan, by_path, definitions, files)
        if found is None:
            continue
        if len(found) == 3:
            scaled_path, function, why = found
            own = plan.files.get(launcher) or FilePlan()
            notes = tuple((k, f"{v}; {why}" if k == SCALED_ELSEWHERE else v) for k, v in own.notes)
            plan.files[launcher] = replace(own, notes=notes)
            theirs = plan.files.get(scaled_path)
            if theirs is not None and function:
                notes = tuple((k, f"{v}, and {why}" if k == function else v) for k, v in theirs.notes)
                plan.files[scaled_path] = replace(theirs, notes=notes)
            continue
        scaled_path, function, owner, target, line, class_path, bound = found
        plan.files[launcher] = replace(
            plan.files.get(launcher) or FilePlan(), component=number, scaler_name=_scaler_name(by_path[launcher]),
            object_builds=((owner, target, line),), dynamic_scaler=True, notes=(),
        )
        plan.files[scaled_path] = replace(
            plan.files.get(scaled_path) or FilePlan(), component=number, scaler_name=CARRIER_ATTRIBUTE,
            carried=(("", function, f"self.{CARRIER_ATTRIBUTE}"),), bound_functions=(function,), notes=(),
        )
        plan.bound_edits[class_path] = (number, bound.edit, by_path[launcher].shown)
        number += 1
    return plan


def _scaler_name(summary: ModuleSummary) -> str:
    from .repo_plan import SCALER_PARAM_NAMES

    taken = summary.identifiers | summary.object_attributes
    return next((n for n in SCALER_PARAM_NAMES if n not in taken), "apexcompat_grad_scaler")


def _route(launcher: str, plan, by_path, definitions, files):
    """None when the route does not apply; (the bound function's file, its name, why not); or
    the route's facts."""
    summary = by_path[launcher]
    own = plan.files.get(launcher)
    inits = summary.training_inits
    if (own is not None and own.component is not None) or len(inits) != 1 or inits[0].method or any(
        s.member == "scale_loss" for s in summary.amp_sites
    ):
        return None
    facts = summary.function_facts.get(inits[0].owner)
    if facts is None:
        return None
    scaled = []
    for binding in facts.bindings:
        module = summary.imports.get(binding.module)
        if module is None:
            continue
        dotted = f"{module[0]}.{module[1]}" if module[1] else module[0]
        item = definitions.find(dotted, binding.function, launcher)
        if item is not None and item[0] in by_path and item[0] != launcher and any(
            s.owner == item[1] and s.member == "scale_loss" for s in by_path[item[0]].amp_sites
        ):
            scaled.append((binding, item))
    if not scaled:
        return None
    binding, (scaled_path, function) = scaled[0]
    shown = by_path[scaled_path].shown
    where = f"{inits[0].owner}() in {summary.shown} binds {function} of {shown} onto {binding.receiver}"
    why = _refusal(summary, inits[0], facts, binding, scaled, by_path[scaled_path], function)
    if why:
        return scaled_path, function, f"{where}, but {why}"
    builds = [b for b in facts.builds if b.target == binding.receiver]
    build = builds[0]
    head, _, attr = build.callee.rpartition(".")
    if head:
        module = summary.imports.get(head)
        dotted = (f"{module[0]}.{module[1]}" if module[1] else module[0]) if module else ""
        item = definitions.find(dotted, attr, launcher, anywhere=True) if dotted else None
    else:
        module = summary.imports.get(attr)
        item = definitions.find(module[0], module[1], launcher, anywhere=True) if module and module[1] else None
    if item is None or item[0] not in files:
        return scaled_path, function, (f"{where}, but the class of {build.callee} is not found in a file without "
                                       "apex.amp")
    class_path, cls = item
    class_shown, source = files[class_path]
    bound = bound_route(class_path, class_shown, source, cls, binding.binder, CARRIER_ATTRIBUTE)
    if isinstance(bound, str):
        return scaled_path, function, f"{where}, but {bound}"
    why = _class_refusal(bound, build, inits[0], facts, launcher, scaled_path, class_path, cls, by_path, definitions,
                         files, binding.binder, function, binding.line)
    if why:
        return scaled_path, function, f"{where}, but {why}"
    return scaled_path, function, inits[0].owner, build.target, build.line, class_path, bound


def _refusal(summary, init, facts, binding, scaled, target: ModuleSummary, function: str) -> str:
    if len(scaled) != 1 or len(facts.bindings) != 1:
        return "it binds more than one function there"
    if not init.dynamic:
        return "its loss scale is not provably dynamic"
    if facts.reads.get(f"{binding.module}.{binding.function}", 0) != 1:
        return f"it reads {binding.module}.{binding.function} more than once"
    builds = [b for b in facts.builds if b.target == binding.receiver]
    if len(builds) != 1 or len(facts.bound.get(binding.receiver, ())) != 1:
        return f"{binding.receiver} is not bound once, to the object built there"
    build = builds[0]
    if not init.line < build.line < binding.line:
        return f"{binding.receiver} is not built after the amp.initialize and before the binding"
    odd = next((s for s in target.amp_sites if s.member != "scale_loss" or s.owner != function or s.method), None)
    if odd is not None:
        return f"{target.shown} uses amp.{odd.member} at line {odd.line} other than to scale in {function}()"
    return ""


def _class_refusal(bound: BoundEdit, build, init, facts, launcher, scaled_path, class_path, cls, by_path,
                   definitions, files, binder: str, function: str, binding_line: int) -> str:
    from .repo_plan import derived_classes

    handed = dict(build.keywords).get(bound.optimizer_param)
    if handed is None and bound.optimizer_position < len(build.positional):
        handed = build.positional[bound.optimizer_position]
    returned = facts.initialized.get(init.line, ())
    optimizer = returned[1] if len(returned) == 2 else ""
    if not optimizer or handed != optimizer:
        return (f"the object is not handed the optimizer amp.initialize returns ({optimizer or 'not a name'}) for "
                f"{cls}'s parameter {bound.optimizer_param}")
    if [ln for ln in facts.bound.get(optimizer, ()) if ln > init.line and ln <= build.line] != []:
        return f"{optimizer} is bound again between the amp.initialize and the build"
    between = [c for c in facts.calls if c[0] == build.target and build.line < c[2] < binding_line
               and c[1] in bound.training]
    if between:
        return (f"{build.target}.{between[0][1]}() runs before the binding (line {between[0][2]}), and may train "
                "with the plain backward")
    family = derived_classes((class_path, cls), by_path, definitions, by_name=True) - {(class_path, cls)}
    if family:
        heir_path, heir = sorted(family)[0]
        return f"{heir} in {_shown(heir_path, by_path, files)} derives from {cls}"
    words = {binder: (launcher, class_path), bound.backward_method: (class_path,), CARRIER_ATTRIBUTE: (),
             function: (launcher, scaled_path)}
    for word, allowed in words.items():
        pattern = re.compile(rb"\b" + re.escape(word.encode()) + rb"\b")
        for path, (shown, source) in sorted(files.items()):
            if path not in allowed and pattern.search(source):
                return f"{shown} names {word}"
        for path, other in sorted(by_path.items()):
            if path not in allowed and path not in files and word in (
                other.identifiers | other.called_names | other.loaded_attributes | other.object_attributes
            ):
                return f"{other.shown} names {word}"
    return ""


def _shown(path: str, by_path, files) -> str:
    if path in by_path:
        return by_path[path].shown
    return files[path][0] if path in files else path
