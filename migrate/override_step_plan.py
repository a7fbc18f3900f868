"""The cross-file plan's override-step route: the launcher's class steps the optimizer it
scales for in a method of its own (``FP16Trainer._apex_step()``), and one subclass in a file
without apex.amp overrides that method with a step of its own (``HVDTrainer._apex_step()``,
inside Horovod's ``skip_synchronize()``).

apex patched the optimizer's ``step``, so the override's step was skipped on an overflow and
stepped unscaled gradients; natively the base's step goes through the GradScaler the class
keeps on ``self``, and the override's must too: its file is edited as bytes
(``override_step_route``).  The launcher (a component of its own, the GradScaler's name
chosen here) and that file are migrated together or not at all; a launcher whose rewrite
does not step the base's method through that GradScaler with an update right after is
migrated again without the route, its override left as it is (``pipeline.migrate_planned``).
Planned only where the launcher initializes once, in a method of the class, for
``self.<opt>``, every scale_loss of its file scales for that one attribute in a method of
that class, and, for each of its methods stepping ``self.<opt>`` that a class of its family
redefines: exactly one class does, in another file without apex.amp, deriving from the base
directly, redefining neither the initializing method nor another method stepping
``self.<opt>``, reading gradients only in the override (and only where no method of the base
or of a class it derives from reads any, and every such class is followed: one unscale_ per
step), and no other walked file names the method.  Pure data from the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Set, Tuple

from .family_names import ancestors_or_why, family_attribute_names
from .holder_route import HolderEdit
from .override_plan import named_base
from .override_step_route import override_step_route
from .repo_index import ModuleSummary


def add_override_step_routes(plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions,
                             unindexed: Dict[str, Tuple[str, bytes]], apex_free: Dict[str, bytes]):
    """``plan`` with one component per launcher whose stepping methods are overridden by
    subclasses the route can edit; the others keep the step rule's refusal, with the reason
    this route gives (``override_step_gaps``)."""
    from .repo_plan import SCALER_PARAM_NAMES, FilePlan, derived_classes

    files: Dict[str, Tuple[str, bytes]] = dict(unindexed)
    files.update({p: (by_path[p].shown, src) for p, src in apex_free.items() if p in by_path})
    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    for launcher in sorted(launchers):
        own = plan.files.get(launcher) or FilePlan()
        summary = by_path[launcher]
        inits = summary.training_inits
        if own.component is not None or len(inits) != 1 or not inits[0].method or not inits[0].optimizer_attr:
            continue
        base, attr = inits[0].owner, inits[0].optimizer_attr
        scaling = [s for s in summary.amp_sites if s.member == "scale_loss"]
        if not scaling or any(s.owner != base or not s.method or s.optimizer_attrs != (attr,) for s in scaling):
            continue
        steppers = sorted(m for (o, m), attrs in summary.method_steps.items() if o == base and attr in attrs)
        if not steppers:
            continue
        family = derived_classes((launcher, base), by_path, definitions, by_name=True) - {(launcher, base)}
        overrides = [(m, sorted((p, c) for p, c in family if m in _members(definitions, p, c))) for m in steppers]
        overrides = [(m, found) for m, found in overrides if found]
        if not overrides:
            continue
        used = summary.identifiers | summary.object_attributes | family_attribute_names(
            [(launcher, base)], by_path, definitions, skip=launcher)
        scaler = next((n for n in SCALER_PARAM_NAMES if n not in used), "apexcompat_grad_scaler")
        unscaling = _unscaling_ancestor(launcher, base, definitions)
        edits: Dict[str, HolderEdit] = {}
        gaps: List[Tuple[str, str, str]] = []
        for method, found in overrides:
            why = _refusal(method, found, launcher, base, inits[0].method, attr, files, by_path, definitions)
            if not why:
                path, cls = found[0]
                shown, source = files[path]
                edit = override_step_route(path, shown, source, cls, method, attr, scaler, unscaling)
                why = edit if isinstance(edit, str) else ""
                if path in edits:
                    why = f"{shown} holds overrides of several of {base}'s stepping methods"
                if not why:
                    edits[path] = edit
            if why:
                gaps.append((base, method, why))
        if gaps:
            plan.files[launcher] = replace(own, override_step_gaps=tuple(gaps))
            continue
        plan.files[launcher] = replace(
            own, component=number, scaler_name=scaler, override_steps=tuple((base, m, attr) for m, _f in overrides),
            dynamic_scaler=inits[0].dynamic,
        )
        for path, edit in edits.items():
            plan.override_step_edits[path] = (number, edit, base)
        number += 1
    return plan


def _unscaling_ancestor(launcher: str, base: str, definitions) -> str:
    """Where the base or a class it derives from reads the gradients (its rewrite may unscale
    them before the overridden method runs), or a base that is not followed; "" for none."""
    def unknown(name: str, text: str, _summary) -> str:
        return "" if text == "object" else f"{name} derives from {text}, whose methods are not followed"

    found, why = ancestors_or_why((launcher, base), definitions, unknown)
    for path, cls in sorted(found):
        summary = definitions.summary(path)
        readers = sorted(m for o, m in summary.gradient_methods if o == cls) if summary is not None else []
        if readers:
            return f"{cls}.{readers[0]}() reads them too"
    return why


def _members(definitions, path: str, cls: str) -> Set[str]:
    summary = definitions.summary(path)
    return summary.class_members.get(cls, set()) if summary is not None else set()


def _refusal(method: str, found, launcher: str, base: str, init_method: str, attr: str, files, by_path,
             definitions) -> str:
    """Why the one override of ``base.method`` cannot be edited (before its text is read),
    or ""."""
    from .repo_plan import _base_def

    shown = [f"{c} in {(definitions.summary(p) or ModuleSummary(p, p)).shown}" for p, c in found]
    if len(found) != 1:
        return f"{' and '.join(shown)} override it"
    path, cls = found[0]
    heir = definitions.summary(path) or ModuleSummary(path, path)
    if path == launcher:
        return f"{cls} overrides it in the same file"
    if path not in files:
        return f"{shown[0]} overrides it, in a file that uses apex.amp itself"
    direct = any(
        _base_def(b, path, heir, definitions) == (launcher, base) or named_base(b, heir, {(launcher, base)})
        for b in heir.class_bases.get(cls, ())
    )
    if not direct:
        return f"{shown[0]} overrides it without deriving from {base} directly"
    if init_method in heir.class_members.get(cls, set()):
        return f"{shown[0]} also redefines {init_method}(), where the GradScaler is made"
    if init_method == "__init__" and cls in heir.unchained_inits:
        return f"{shown[0]}'s __init__ does not call the base's, which makes the GradScaler"
    others = sorted(m for (o, m), attrs in heir.method_steps.items() if o == cls and attr in attrs and m != method)
    if others:
        return f"{shown[0]} also steps self.{attr} in {others[0]}()"
    readers = sorted(m for o, m in heir.gradient_methods if o == cls and m != method)
    if readers:
        return f"{shown[0]} reads the gradients in {readers[0]}() too, which the route does not follow"
    for other, summary in sorted(by_path.items()):
        if other not in (launcher, path) and method in summary.attribute_names:
            return f"{summary.shown} names {method}, so another call may reach the override"
    for other, (where, source) in sorted(files.items()):
        if other not in (launcher, path) and other not in by_path and method.encode() in source:
            return f"{where} names {method}, so another call may reach the override"
    return ""
