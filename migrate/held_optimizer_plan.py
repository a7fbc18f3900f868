"""The cross-file plan's held-optimizer route: the GradScaler becomes an attribute of the object
that owns the optimizers apex initialized, and the sites that scale through those optimizers
read it there.

DeepDeblur's ``Optimizer`` wrapper keeps the torch optimizers as ``self.G`` / ``self.D`` and
initializes them in a method (``model, [self.G, self.D] = amp.initialize(model, [self.G,
self.D], ...)``); a trainer and a loss class built by name at run time scale through it
(``amp.scale_loss(loss, self.optimizer.G)``).  No call chain hands those classes a GradScaler,
but each reaches the object that initialized apex: the launcher puts the GradScaler on that
object (``self.scaler = scaler``, the attach route's edit) and each site reads it as
``self.optimizer.scaler``.  Proven only when

* the repository has one launcher, whose training initializes are all in one method of one
  top-level class, each given ``self.<attr>`` or a list of them, with one loss id;
* every amp site of each class that needs the scaler and that no other route reaches is an
  ``amp.scale_loss(loss, self.<holder>.<attr>)`` in one of its methods (not ``__init__``),
  with one ``holder`` per class and ``attr`` among those the initializes were given;
* among the repository's classes only the initializing class stores those attributes on its
  own instances (``self.G = ...``), so the holder is an instance of it: apex's scale_loss
  raised for an optimizer no initialize had seen, and only that class's optimizers were;
* the new attribute's name is used by no file of the repository, so reading it on any other
  object would raise AttributeError rather than find something else;
* the class has its own ``__init__`` (which creates the GradScaler disabled: the launcher may
  never call the initializing method) and no class derives from it;
* the ``if`` around each site's ``with`` (``if self.args.amp: ... else: loss.backward()``)
  tests what switches every initialize (``if not self.args.amp: return model`` before it), read
  off an attribute both classes only keep from their constructor's parameter of that name: a
  plain branch taken while the GradScaler is enabled would step gradients it never scaled.
  That both constructors are handed the same object is not followed.

Only classes no call chain from the launcher reaches are candidates (the call routes serve the
others), and it is all of them or none: where one is refused, or another such class uses amp
otherwise, every one keeps apex.amp with the reason (one left on the shim would find apex never
initialized).  Pure data from the index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Sequence, Set, Tuple, Union

from . import stdlib_trees
from .held_optimizers import HeldFacts, read_held_facts
from .ast_table import NodeTable

Def = Tuple[str, str]
#: names the attribute may take, in order of preference
ATTRIBUTES = ("scaler", "grad_scaler", "amp_scaler")


@dataclass
class HeldRoute:
    """What the route proved: the classes it reaches and how, the launcher's attach."""

    #: class -> (method, expression of the GradScaler in it)
    carried: Dict[Def, Tuple[Tuple[str, str], ...]] = field(default_factory=dict)
    #: class -> the launcher whose object it reads the GradScaler from
    joined: Dict[Def, str] = field(default_factory=dict)
    #: site file -> (method, attribute) of the holder's class whose method only calls the same
    #: method of that attribute (``def step(self): self.G.step()``): the site's
    #: ``self.optimizer.step()`` steps ``self.optimizer.G``
    delegates: Dict[str, Tuple[Tuple[str, str], ...]] = field(default_factory=dict)
    #: launcher -> (class, instance, attribute) of the attach
    attach: Dict[str, Tuple[str, str, str]] = field(default_factory=dict)
    #: why not, per file and definition (as ``RepoPlan`` notes)
    notes: Dict[str, Dict[str, str]] = field(default_factory=dict)


def held_route(by_path, launchers: Set[str], candidates: Set[Def],
               others: Sequence[Tuple[str, str, bytes]]) -> HeldRoute:
    """The route for the classes among ``candidates`` (needy definitions no other route
    reaches) that scale through an optimizer kept on an attribute of ``self``."""
    route = HeldRoute()
    chained = {d for d in candidates if any(s[0] == d[1] for s in by_path[d[0]].held.scales)}
    # all of them or none: a site left on apex.amp would find apex never initialized (those
    # that only call them need nothing of their own)
    using = {d for d in candidates - chained if any(s.owner == d[1] for s in by_path[d[0]].amp_sites)}
    if not chained or len(launchers) != 1 or using:
        return route
    launcher = next(iter(launchers))
    summary = by_path[launcher]
    inits = summary.training_inits
    held = summary.held.inits
    if not inits or len(held) != len(inits) or len({(c, m) for c, m, _l, _a, _s in held}) != 1:
        return route  # not this route's launcher: the others say why
    cls, method = held[0][0], held[0][1]
    given = {a for _c, _m, _l, attrs, _s in held for a in attrs}
    switches = [set(s) for _c, _m, _l, _a, s in held]
    why = _launcher_refusal(summary, cls) or _derived(cls, summary.shown, by_path, others)
    delegates = tuple(sorted(summary.held.delegates.get(cls, {}).items()))
    facts = _all_facts(by_path, others)
    name = next((a for a in ATTRIBUTES if not _named(a, by_path, others)), None)
    refused: Dict[Def, str] = {}
    for item in sorted(chained):
        path, owner = item
        reason = why or _site_refusal(by_path[path], owner, given)
        if not reason:
            reason = _switch_refusal(by_path[path], owner, summary, cls, switches)
        if not reason:
            attrs = {s[4] for s in by_path[path].held.scales if s[0] == owner}
            reason = _store_refusal(facts, attrs, cls, summary.shown)
        if not reason and name is None:
            reason = f"{' and '.join(ATTRIBUTES)} are all taken in the repository"
        if reason:
            refused[item] = (
                f"{owner} scales through the optimizers {cls}.{method}() of {summary.shown} initializes, "
                f"but {reason}"
            )
            continue
        holders = {s[3] for s in by_path[path].held.scales if s[0] == owner}
        holder = holders.pop()
        methods = sorted({s[1] for s in by_path[path].held.scales if s[0] == owner})
        route.carried[item] = tuple((m, f"self.{holder}.{name}") for m in methods)
        route.joined[item] = launcher
        route.delegates[path] = delegates
        route.attach[launcher] = (cls, "self", name)
    if refused:
        # one site left on apex.amp keeps them all there: the initialize stays apex's
        first = next(iter(refused.values()))
        for path, owner in sorted(chained):
            route.notes.setdefault(path, {})[owner] = refused.get((path, owner), first)
        return HeldRoute(notes=route.notes)
    return route


def _launcher_refusal(summary, cls: str) -> str:
    if cls not in summary.held.constructed:
        return f"{cls} has no __init__ of its own to create the GradScaler disabled in"
    if any(s.num_losses != 1 for s in summary.training_inits):
        return "its amp.initialize makes more than one loss scaler (num_losses)"
    if any(s.member == "scale_loss" for s in summary.amp_sites):
        return f"{summary.shown} scales losses itself"
    odd = next((s for s in summary.amp_sites if s.owner != cls and s.member != "initialize"), None)
    if odd is not None:
        return f"{summary.shown} uses amp.{odd.member} outside {cls}"
    return ""


def _derived(cls: str, shown: str, by_path, others: Sequence[Tuple[str, str, bytes]]) -> str:
    """Why the holder may be of a subclass of ``cls`` (whose methods may differ): one is
    defined, or may be, somewhere in the repository."""
    for summary in by_path.values():
        for name, bases in summary.class_bases.items():
            if any(b.split(".")[-1] == cls for b in bases):
                return f"{name} in {summary.shown} derives from {cls} of {shown}"
    pattern = re.compile(rb"^\s*class\s+\w+\s*\([^)]*\b" + cls.encode() + rb"\b", re.MULTILINE)
    for _path, other, source in others:
        if pattern.search(source):
            return f"a class in {other} derives from {cls} of {shown}"
    return ""


def _site_refusal(summary, owner: str, given: Set[str]) -> str:
    sites = [s for s in summary.amp_sites if s.owner == owner]
    scales = [s for s in summary.held.scales if s[0] == owner]
    if len(scales) != len(sites) or any(s.member != "scale_loss" for s in sites):
        odd = next((s for s in sites if s.member != "scale_loss"), sites[0])
        return f"{owner} uses amp.{odd.member} at {summary.shown}:{odd.line} other than as scale_loss(loss, self.<x>.<opt>)"
    if len({s[3] for s in scales}) != 1:
        return f"{owner} reaches the optimizers through more than one attribute of self"
    if any(s[1] == "__init__" for s in scales):
        return f"{owner}.__init__ scales a loss"
    missing = sorted({s[4] for s in scales} - given)
    if missing:
        return f"{owner} scales through .{missing[0]}, which that initialize is not given"
    return ""


def _switch_refusal(site_file, owner: str, launcher, cls: str, switches: List[Set[str]]) -> str:
    """Why a site's amp switch may disagree with the initialize's: the ``if`` around its
    ``with`` must test what every initialize is switched by, the same text on the same
    attribute of ``self``, which both classes only keep from their constructor's parameter of
    that name (``self.args = args``): a site that took its plain branch while the GradScaler
    was enabled would step gradients it never scaled, unscaled by it."""
    for _c, _m, line, _h, _a, switch in (s for s in site_file.held.scales if s[0] == owner):
        if not switch:
            continue
        if not all(switch in found for found in switches):
            return (f"the amp.scale_loss at {site_file.shown}:{line} is switched by `{switch}`, which does not "
                    "switch every amp.initialize the same way")
        root = switch.split(".")[1] if switch.startswith("self.") and switch.count(".") >= 2 else ""
        if not root or root not in site_file.held.kept_parameters.get(owner, set()) or root not in (
            launcher.held.kept_parameters.get(cls, set())
        ):
            return (f"the amp.scale_loss at {site_file.shown}:{line} is switched by `{switch}`, not read off an "
                    f"attribute of self that {owner} and {cls} both keep from their constructor's parameter")
    return ""


def _all_facts(by_path, others: Sequence[Tuple[str, str, bytes]]) -> List[Tuple[str, HeldFacts]]:
    found = [(s.shown, s.held) for s in by_path.values()]
    for _path, shown, source in others:
        tree = stdlib_trees.parse(source)
        if tree is not None:
            found.append((shown, read_held_facts(NodeTable(tree), set())))
    return found


def _store_refusal(facts, attrs: Set[str], cls: str, home: str) -> str:
    for shown, held in facts:
        for attr in sorted(attrs):
            owners = held.stores.get(attr, set()) - ({cls} if shown == home else set())
            if owners:
                return (f"{sorted(owners)[0]} in {shown} also keeps a .{attr} on its instances, so which object "
                        "holds the optimizer is not proven")
    return ""


def _named(name: str, by_path, others: Sequence[Tuple[str, str, bytes]]) -> bool:
    if any(name in s.identifiers or name in s.loaded_attributes for s in by_path.values()):
        return True
    word = re.compile(rb"\b" + name.encode() + rb"\b")
    return any(word.search(source) for _p, _s, source in others)
