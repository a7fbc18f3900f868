"""The cross-file plan's base-class route for a subclass that initializes amp itself:
DL-Art-School's ``BaseModel.save_training_state`` saves ``amp.state_dict()``, and
``ExtensibleTrainer(BaseModel).__init__`` calls ``amp.initialize``.

The launcher's class keeps the GradScaler its ``__init__`` creates on ``self`` right where
it is created (``self.scaler = scaler``, the attach route's edit), and the base's methods
read it there (the plan's ``carried`` methods).  Proven only when no base method reads the
attribute before it is set, and only instances of that class run them:

* the base saves or loads amp's state only on ``self`` in its methods, is built nowhere
  and is used in other files only as a base class (``base_plan.lendable_base``);
* exactly one class deriving from it initializes amp, in its own ``__init__``, which holds
  every training initialize of its file (a launcher), and no class derives from it;
* that ``__init__``, and the ``__init__`` of every class it derives from, reach (through
  ``self.m()`` and ``super().m()``, by name over all those classes, the attribute hooks and
  decorated methods of those classes included) none of the base's methods that use amp, and
  hand ``self`` to no other code; every base of those classes is a class of the walked
  files, ``object``, ``torch.nn.Module`` or ``abc.ABC`` (whose ``__init__`` runs none);
* every other class deriving from the base (FeatureModel) uses no amp itself and is built
  nowhere in the walked files (nor by name at run time): no run of the repository makes
  one.  Code outside that builds one and calls the base's methods gets AttributeError under
  the base's same guard (``scaler`` here), as apex.amp raised (``loss_scalers``) unless that
  process had initialized amp elsewhere: loudly, never a silently different training.

The base's file joins the launcher's component: native together or not at all.  Pure data.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Set, Tuple, Union

from .base_plan import STATE_MEMBERS, lendable_base, used_only_as_base
from .family_names import ancestors_or_why
from .repo_index import ModuleSummary

Def = Tuple[str, str]

#: methods Python runs on an instance without a call by name in the code
IMPLICIT = ("__setattr__", "__getattr__", "__getattribute__", "__delattr__")
#: bases from outside the repository whose ``__init__`` runs no method of the instance
#: (``nn.Module.__init__`` only sets its own attributes)
INERT_BASES = frozenset({"builtins.object", "torch.nn.Module", "torch.nn.modules.module.Module", "abc.ABC"})


def initializing_heirs(base: Def, by_path: Dict[str, ModuleSummary], family: Set[Def]) -> List[Def]:
    """The classes of ``family`` (those deriving from ``base``) that initialize amp in a
    method, when every amp site of ``base`` saves or loads its state in a method on self;
    [] otherwise (the route does not apply)."""
    sites = [s for s in by_path[base[0]].amp_sites if s.owner == base[1]]
    if not sites or any(s.member not in STATE_MEMBERS or not s.method or s.receiver != "self" for s in sites):
        return []
    return sorted(
        (p, c) for p, c in family - {base}
        if p in by_path and any(s.owner == c and s.method for s in by_path[p].training_inits)
    )


def self_kept_route(
    base: Def,
    by_path: Dict[str, ModuleSummary],
    definitions,
    launchers: Set[str],
    called: Callable[[Def], str],
    outside_callers: Callable[[str, str], list],
    runtime_built: Callable[[Def], str],
) -> Union[None, str, Def]:
    """The launcher's class that keeps the GradScaler on self for the methods of ``base``;
    why not, as a clause; None where ``base`` has no such shape (``called``: where a call of
    the indexed files builds a class, "" nowhere)."""
    from .repo_plan import derived_classes

    family = derived_classes(base, by_path, definitions)
    heirs = initializing_heirs(base, by_path, family)
    if not heirs:
        return None

    def outside_uses(name: str, path: str) -> list:
        # a file the index left out that only derives from it (FeatureModel's) is a sibling's
        return [o for o in outside_callers(name, path) if o[2] or not _only_derived(o[0], (path, name), definitions)]

    why = lendable_base(base, by_path, lambda d: bool(called(d)), outside_uses, definitions)
    if why is not None:
        return why
    if len(heirs) > 1:
        return f"{heirs[0][1]} and {heirs[1][1]} both initialize amp, each with a GradScaler of its own"
    heir = heirs[0]
    summary = by_path[heir[0]]
    if heir[0] not in launchers:
        return f"{summary.shown} initializes amp more than once"
    odd = next((s for s in summary.training_inits if s.owner != heir[1] or s.method != "__init__"), None)
    if odd is not None:
        where = f"{odd.owner}.{odd.method}()" if odd.method else odd.owner
        return f"{summary.shown} initializes amp in {where}, not only in {heir[1]}.__init__"
    below = sorted(derived_classes(heir, by_path, definitions, by_name=True) - {heir})
    if below:
        return f"{below[0][1]} derives from {heir[1]}: its methods may run in {heir[1]}.__init__"
    chain = _ancestors(heir, definitions)
    if isinstance(chain, str):
        return chain
    odd_class = next((d for d in sorted(chain - {base, heir}) if _uses_amp(d, definitions)), None)
    if odd_class is not None:
        return f"{odd_class[1]}, between {heir[1]} and {base[1]}, uses amp itself"
    why = _init_reaches(chain, heir, base, by_path, definitions)
    if why:
        return why
    for sibling in sorted(derived_classes(base, by_path, definitions, by_name=True) - chain - {heir}):
        why = _sibling_why(sibling, definitions, called, outside_callers, runtime_built)
        if why:
            return why
    return heir


def kept_name(base: Def, heir: Def, by_path: Dict[str, ModuleSummary], definitions, choices) -> str:
    """The attribute the GradScaler is kept on: a name no file of the base's family (its
    siblings' included: one of theirs would hand the base's methods another object) nor of
    the classes it derives from (whose own attribute it would replace) uses."""
    from .repo_plan import derived_classes

    paths = {base[0], heir[0]} | {p for p, _c in derived_classes(base, by_path, definitions, by_name=True)}
    chain = _ancestors(heir, definitions)
    paths |= {p for p, _c in chain} if not isinstance(chain, str) else set()
    used: Set[str] = set()
    for path in paths:
        summary = definitions.summary(path)
        used |= summary.identifiers | summary.attribute_names if summary is not None else set()
    return next((n for n in choices if n not in used), "apexcompat_" + choices[-1])


def _ancestors(heir: Def, definitions) -> Union[str, Set[Def]]:
    """``heir`` and every class of the walked files it derives from; why not, where a base
    is neither one of those nor imported from outside the repository."""
    found, why = ancestors_or_why(heir, definitions, _unknown_base)
    return why or found


def _unknown_base(name: str, text: str, summary: ModuleSummary) -> str:
    """Why ``name``'s base ``text`` (no class of the walked files) stops the proof: its
    ``__init__`` is not known to call nothing of ours; "" for object, nn.Module, ABC."""
    head, _, rest = text.partition(".")
    module, attr = summary.imports.get(head, ("", ""))
    dotted = ".".join(p for p in (module, attr, rest) if p) if module else f"builtins.{text}"
    if dotted in INERT_BASES:
        return ""
    return f"{name} derives from {text}, whose __init__ is not known to run none of the methods that use amp"


def _only_derived(path: str, item: Def, definitions) -> bool:
    """The file ``path`` imports the class ``item`` by name, calls it nowhere, uses it as no
    value, and names it as the base of a class (as the indexed files are read by
    ``used_only_as_base``)."""
    summary = definitions.summary(path)
    if summary is None:
        return False
    bases = {b for bs in summary.class_bases.values() for b in bs}
    names = [
        local for local, (module, attr) in summary.imports.items()
        if attr == item[1] and definitions.find(module, attr, path, anywhere=True) == item
    ]
    return bool(names) and all(n in bases and n not in summary.called_names | summary.valued for n in names)


def _uses_amp(item: Def, definitions) -> bool:
    summary = definitions.summary(item[0])
    return summary is not None and any(s.owner == item[1] for s in summary.amp_sites)


def _init_reaches(chain: Set[Def], heir: Def, base: Def, by_path: Dict[str, ModuleSummary], definitions) -> str:
    """Why the ``__init__`` of the launcher's class ``heir`` may run a method of ``base``
    that uses amp before the GradScaler is kept on self; "" where it cannot."""
    users = {s.method for s in by_path[base[0]].amp_sites if s.owner == base[1]}
    reached: Set[str] = set()
    # what runs without being called by name: the attribute hooks and the decorated methods
    # (properties, setters) an assignment or a read in __init__ may run
    work = ["__init__", *IMPLICIT]
    for path, name in sorted(chain):
        summary = definitions.summary(path)
        work.extend(sorted(summary.decorated_methods.get(name, ())) if summary is not None else ())
    while work:
        method = work.pop()
        if method in reached:
            continue
        reached.add(method)
        for path, name in sorted(chain):
            summary = definitions.summary(path)
            if summary is None:
                continue
            if (name, method) in summary.self_handed:
                what = f"{name}.{method}()" + ("" if (name, method) == (heir[1], "__init__") else
                                              f", which {heir[1]}.__init__ runs,")
                return f"{what} hands self on to other code, which may call them before the GradScaler exists"
            work.extend(summary.method_self_calls.get((name, method), ()))
            work.extend(summary.method_super_calls.get((name, method), ()))
    if reached & users:
        return (f"{heir[1]}.__init__ runs {sorted(reached & users)[0]}(), which uses amp: that it runs only after "
                "the GradScaler is kept on self is not proven")
    return ""


def _sibling_why(
    sibling: Def, definitions, called: Callable[[Def], str], outside_callers, runtime_built: Callable[[Def], str]
) -> str:
    """Why a class deriving from the base, which gets no GradScaler, may run the base's
    methods in the repository's runs; "" where it is built nowhere."""
    path, name = sibling
    summary: Optional[ModuleSummary] = definitions.summary(path)
    shown = summary.shown if summary is not None else path
    if summary is None:
        return f"{name} in {shown} derives from it too and is not read"
    if any(s.owner == name for s in summary.amp_sites):
        return f"{name} in {shown} derives from it too and uses amp itself"
    if name in summary.called_names or name in summary.escaping - summary.super_only:
        why: Optional[str] = f"it is built or passed on in {shown}"
    else:
        why = f"it is built in {called(sibling)}" if called(sibling) else None
    why = why or used_only_as_base(sibling, definitions.by_path, lambda n, p: [
        o for o in outside_callers(n, p) if o[2] or not _only_derived(o[0], sibling, definitions)
    ], definitions)
    why = why or runtime_built(sibling)
    if why:
        return f"{name} in {shown} derives from it too and initializes nothing ({why}): it would run them without one"
    return ""


def base_words(heir: Def, by_path: Dict[str, ModuleSummary], why: str) -> str:
    """The refusal's words for the base (``repo_plan._why_unreached``)."""
    return (
        f"a base class whose methods only save or load amp's state on self, derived from by {heir[1]} in "
        f"{by_path[heir[0]].shown}, which initializes amp in a method, but no GradScaler can be kept on self for "
        f"them: {why}"
    )

