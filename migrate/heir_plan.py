"""The cross-file plan's inheritance route: amp.initialize in a method of a base class,
``amp.scale_loss`` in methods of its subclasses in other files.

The launcher's class keeps the GradScaler on ``self`` (``self.scaler``), created where the
initialize was; every subclass of it, in any walked file, inherits that attribute.  So a
subclass's method that scales a loss through the optimizer the base initialized
(``amp.scale_loss(loss, self.optimizer)``) uses ``self.<scaler>`` instead, and a subclass
that overrides the initializing method with its own initialize (another opt level)
re-creates the same attribute.  The launcher and those files form one component: migrated
together or not at all (``pipeline.migrate_planned``).  Pure data from the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Set, Tuple

from .family_names import family_attribute_names
from .repo_index import ModuleSummary

Def = Tuple[str, str]


def add_heir_routes(plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], definitions):
    """``plan`` with one component per launcher whose initializing class has subclasses
    with apex.amp sites in other indexed files (files already in a component are left)."""
    from .repo_plan import SCALER_PARAM_NAMES, FilePlan, derived_classes

    taken = {p for p, f in plan.files.items() if f.component is not None}
    number = max((f.component for f in plan.files.values() if f.component is not None), default=-1) + 1
    for launcher in sorted(launchers):
        inits = by_path[launcher].training_inits
        if len(inits) != 1 or not inits[0].method or not inits[0].optimizer_attr:
            continue
        site = inits[0]
        base: Def = (launcher, site.owner)
        family = derived_classes(base, by_path, definitions)
        heirs = sorted(
            {p for p, c in family if p != launcher and p in by_path and any(a.owner == c for a in by_path[p].amp_sites)}
        )
        if not heirs or launcher in taken or taken & set(heirs):
            continue
        unchained = sorted(
            (p, c) for p, c in family - {base} if c in (definitions.summary(p) or ModuleSummary(p, p)).unchained_inits
        )
        if unchained:
            # its instances may lack what the base's __init__ sets; the base keeps apex.amp
            # with the subclasses that scale through it (they share apex's state)
            path, cls = unchained[0]
            where = (definitions.summary(path) or ModuleSummary(path, path)).shown
            reason = (
                f"{cls} in {where} derives from {site.owner} but its __init__ does not call the base's, so its "
                f"instances would lack the GradScaler {site.owner} keeps on self; subclasses in other files scale "
                "their losses through it"
            )
            plan.files[launcher] = replace(plan.files.get(launcher, FilePlan()), refusal=reason)
            continue
        members = [launcher] + heirs
        # the attribute is the instance's: no file of the class family (bases above the
        # launcher's class included) may read or set one of that name
        used: Set[str] = family_attribute_names([base], by_path, definitions)
        for path in members:
            used |= by_path[path].identifiers
        scaler = next((n for n in SCALER_PARAM_NAMES if n not in used), "apexcompat_grad_scaler")
        for path in members:
            classes = {c for p, c in family if p == path}
            summary = by_path[path]
            methods: List[Tuple[str, str, str]] = []
            overrides: List[str] = []
            notes: List[Tuple[str, str]] = []
            for amp_site in summary.amp_sites:
                if amp_site.owner not in classes or not amp_site.method or (path, amp_site.owner) == base:
                    continue  # the base's own methods find the scaler in their own file
                if amp_site.member == "scale_loss" and amp_site.optimizer_attr == site.optimizer_attr:
                    methods.append((amp_site.owner, amp_site.method, f"{amp_site.receiver}.{scaler}"))
                elif amp_site.member == "scale_loss":
                    given = amp_site.optimizer_attr and f"{amp_site.receiver}.{amp_site.optimizer_attr}"
                    notes.append((amp_site.owner, (
                        f"{amp_site.owner} derives from the class whose {site.method}() initializes, but "
                        f"{amp_site.method}() scales its loss for {given or 'another optimizer'}, not for "
                        f"{amp_site.receiver}.{site.optimizer_attr}, whose GradScaler that class keeps"
                    )))
                elif amp_site.member == "initialize" and amp_site.training and amp_site.method == site.method:
                    overrides.append(amp_site.owner)
            own = plan.files.get(path, FilePlan())
            stepped, gaps = ((), ()) if path == launcher else _base_steps(path, methods, base, site, by_path,
                                                                          definitions)
            plan.files[path] = replace(
                own,
                base_steps=stepped,
                base_step_gaps=gaps,
                component=number,
                scaler_name=scaler,
                carried=tuple(sorted(set(own.carried) | set(methods))),
                heir_methods=tuple(sorted({(c, m) for c, m, _a in methods})),
                heir_inits=tuple(sorted(set(overrides))),
                heir_base=site.owner if path == launcher else "",
                heir_optimizer=site.optimizer_attr,
                heir_from=f"{site.owner}.{site.method}() in {by_path[launcher].shown}",
                notes=tuple(dict(list(own.notes) + notes).items()),
            )
        taken |= set(members)
        number += 1
    return plan


def _base_steps(path: str, methods, base: Def, site, by_path: Dict[str, ModuleSummary], definitions):
    """(class, method, attribute, the test the base's initialize is under) of the scaling
    methods of ``path`` (``methods``) that leave the step to the base, and (class, method,
    why not) of those overriding a scaling method of the base that cannot.  One can where it
    overrides a method of the base class that scales for the same ``self.<attribute>`` (the
    base's file steps that one in other methods, through
    the GradScaler, with the unscale_ its clipping needs), its class derives from the base
    directly, redefines none of the base's methods stepping the attribute, steps it nowhere
    itself, calls the scaling method on ``self`` nowhere (that loss would not be followed to a
    step), and no method of the class reads the gradients (they stay scaled until the base's
    step, where apex had unscaled them at the end of amp.scale_loss)."""
    from .repo_plan import _base_def

    launcher, owner = base
    home, heir = by_path[launcher], by_path[path]
    attr = site.optimizer_attr
    scaling = {
        s.method for s in home.amp_sites
        if s.member == "scale_loss" and s.owner == owner and s.optimizer_attr == attr and s.method
    }
    steppers = {m for (o, m), attrs in home.method_steps.items() if o == owner and attr in attrs} - scaling
    found, gaps = [], []
    for cls, method, _access in methods:
        if method not in scaling or not steppers:
            continue
        redefined = sorted(steppers & heir.class_members.get(cls, set()))
        callers = sorted(m for (o, m), called in heir.method_self_calls.items() if o == cls and method in called)
        readers = sorted(m for o, m in heir.gradient_methods if o == cls)
        own = sorted(m for (o, m), attrs in heir.method_steps.items() if o == cls and attr in attrs)
        why = ""
        if not any(_base_def(b, path, heir, definitions) == base for b in heir.class_bases.get(cls, ())):
            why = f"{cls} does not derive from {owner} directly"
        elif redefined:
            why = f"{cls} redefines {redefined[0]}(), which steps self.{attr} in {owner}"
        elif own:
            why = f"{cls}.{own[0]}() steps self.{attr} itself"
        elif callers:
            why = f"{cls}.{callers[0]}() calls {method}() itself, after which no step of self.{attr} is followed"
        elif readers:
            why = (f"{cls}.{readers[0]}() reads gradients, which stay scaled until {owner} steps self.{attr} "
                   "(apex had unscaled them when amp.scale_loss ended)")
        if why:
            gaps.append((cls, method, f"{owner}.{sorted(steppers)[0]}() steps it, but {why}"))
        else:
            found.append((cls, method, attr, site.guard))
    return tuple(sorted(found)), tuple(sorted(gaps))
