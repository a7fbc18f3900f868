"""The cross-file plan's step-heir route: the launcher's class initializes and scales its
losses in methods of its own (``d_backward()`` with ``amp.scale_loss(loss, self.d_optim,
loss_id=0)``), and never steps those optimizers; its subclasses, in files without
apex.amp, call those methods and step (``self.d_backward(); self.d_optim.step()``).

The launcher keeps one GradScaler on ``self`` (the inheritance route's attribute, see
``heir_plan``), created where the initialize was; its scaling methods scale through it and
leave the steps to the subclasses; each subclass file's training loop is edited as bytes
(``step_heir_route``): steps through that GradScaler, one update after the last,
autocast around the forward passes.  One GradScaler serves every loss id: an optimizer fed
by several loss ids (``[self.ac_optim, self.g_optim]``) must be stepped at one scale.
Planned only where every scaling method is called only from the subclass files edited,
the launcher's file steps none of the scaled optimizers, the loss scale is dynamic, and
every subclass calls the base's ``__init__`` and redefines neither a scaling method nor the
initializing one (the rules check that no scaling method runs a forward pass itself).  The
launcher and those files form one component.  Pure data.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Set, Tuple

from .family_names import family_attribute_names
from .holder_route import HolderEdit
from .repo_index import ModuleSummary
from .step_heir_route import step_heir_route


def add_step_heir_routes(plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions,
                         unindexed: Dict[str, Tuple[str, bytes]], apex_free: Dict[str, bytes]):
    """``plan`` with one component per launcher whose class's scaled optimizers are stepped
    by subclasses in files without apex.amp (files already in a component are left)."""
    from .repo_plan import SCALER_PARAM_NAMES, FilePlan, derived_classes

    files: Dict[str, Tuple[str, bytes]] = dict(unindexed)
    files.update({p: (by_path[p].shown, src) for p, src in apex_free.items() if p in by_path})
    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    for launcher in sorted(launchers):
        own = plan.files.get(launcher)
        summary = by_path[launcher]
        inits = summary.training_inits
        if (own is not None and own.component is not None) or len(inits) != 1 or not inits[0].method:
            continue
        base = inits[0].owner
        scaling = _scaling_methods(summary, base)
        if not scaling:
            continue
        family = derived_classes((launcher, base), by_path, definitions)
        heirs: Dict[str, Set[str]] = {}
        for path, cls in family - {(launcher, base)}:
            heirs.setdefault(path, set()).add(cls)
        reason = _refusal(summary, base, scaling, family, heirs, files, definitions, launcher)
        if reason is None:
            continue
        # a base of another file (or a subclass) may set or read a `self.scaler` of its own
        used = summary.identifiers | summary.object_attributes | family_attribute_names(
            [(launcher, base)], by_path, definitions, skip=launcher)
        scaler = next((n for n in SCALER_PARAM_NAMES if n not in used), "apexcompat_grad_scaler")
        edits: Dict[str, HolderEdit] = {}
        for path in sorted(heirs) if not reason else ():
            shown, source = files[path]
            known = sorted(summary.class_members.get(base, set()))
            edit = step_heir_route(path, shown, source, heirs[path], scaling, scaler, known)
            if isinstance(edit, str):
                if edit:
                    reason = edit
                    break
                continue
            edits[path] = edit
        if not reason and not edits:
            continue
        stepped = tuple(sorted({(m, a) for m, attrs in scaling.items() for a in attrs}))
        if reason:
            note = (f"{base}'s scaling methods ({', '.join(sorted(scaling))}) leave the steps to its subclasses in "
                    f"files without apex.amp, but {reason}")
            plan.files[launcher] = replace(own or FilePlan(), step_heir_refusal=note)
            continue
        plan.files[launcher] = replace(
            own or FilePlan(), component=number, scaler_name=scaler, heir_base=base, step_heirs=stepped,
            heir_from=f"{base}.{inits[0].method}() in {summary.shown}",
            dynamic_scaler=inits[0].dynamic,
        )
        for path, edit in edits.items():
            plan.step_heir_edits[path] = (number, edit, base)
        number += 1
    return plan


def _scaling_methods(summary: ModuleSummary, base: str) -> Dict[str, Tuple[str, ...]]:
    """Method of ``base`` -> the optimizer attributes its scale_loss calls scale for, where
    every scale_loss of the file is in such a method, given ``self.<attr>`` or a list of
    them, and no method of the file steps one of them; else {}."""
    scaling: Dict[str, List[str]] = {}
    for site in summary.amp_sites:
        if site.member != "scale_loss":
            continue
        if site.owner != base or not site.method or not site.optimizer_attrs:
            return {}
        attrs = scaling.setdefault(site.method, [])
        attrs.extend(a for a in site.optimizer_attrs if a not in attrs)
    if not scaling or {a for attrs in scaling.values() for a in attrs} & summary.self_steps:
        return {}
    return {m: tuple(attrs) for m, attrs in scaling.items()}


def _refusal(summary, base, scaling, family, heirs, files, definitions, launcher):
    """None when the route does not apply (no subclass file calls a scaling method); ""
    when nothing stands in its way; else why the launcher keeps apex.amp."""
    callers = {c for (cls, _m), called in summary.method_self_calls.items() for c in called if c in scaling}
    if callers:
        return f"{summary.shown} itself calls {', '.join(sorted(callers))}() on self, and steps nothing"
    calling = {p for p, (_shown, source) in files.items() if any(m.encode() in source for m in scaling)}
    for path, other in definitions.by_path.items():
        if path != launcher and path not in files and (
            any(m in scaling for _c, m in other.self_calls) or any(c.method in scaling for c in other.method_calls)
        ):
            calling.add(path)
    if not calling & set(heirs):
        return None
    outside = sorted(definitions.summary(p).shown if definitions.summary(p) else p for p in calling - set(heirs))
    if outside:
        return f"{outside[0]} names a scaling method outside the subclasses"
    if any(p not in files for p in heirs):
        stray = sorted(p for p in heirs if p not in files)[0]
        return f"{(definitions.summary(stray) or ModuleSummary(stray, stray)).shown}, which subclasses it, has apex.amp"
    if not summary.training_inits[0].dynamic:
        return "its loss scale is not provably dynamic (the subclasses' autocast follows a GradScaler's switch)"
    redefinable = set(scaling) | {summary.training_inits[0].method}
    for path, cls in sorted(family - {(launcher, base)}):
        heir = definitions.summary(path) or ModuleSummary(path, path)
        if cls in heir.unchained_inits:
            return f"{cls}'s __init__ does not call the base's, so its instances would lack the GradScaler"
        redefined = sorted(redefinable & heir.class_members.get(cls, set()))
        if redefined:
            return f"{cls} in {heir.shown} redefines {redefined[0]}()"
    return ""
