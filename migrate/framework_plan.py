"""The cross-file plan's framework route: the GradScaler rides on a framework's runner.

A class of the repository that subclasses a framework's hook or runner (see
``runner_frameworks``) and scales losses or saves/loads the amp state is called by the
framework only, never by the repository, so no parameter can bring it the GradScaler.  The
runner can: the launcher that holds the training ``amp.initialize`` builds the runner with
the optimizer that initialize returned, and puts the GradScaler on it right after.  That is
proven only when

* every site of the class is in a method the framework calls with the runner (a hook's
  ``after_train_iter(self, runner)``, any plain method of a runner subclass);
* one launcher builds such a runner, in the function of its initialize, after it;
* no other runner is built anywhere in the repository (it would carry no GradScaler);
* the launcher sets the framework's autocast switch (mmcv: ``m.fp16_enabled = True``) in that
  function: the forward passes run inside the framework, where the tool cannot put autocast.

Otherwise each class gets a note saying which of these failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Set, Tuple

from .repo_index import MODULE_LEVEL, SCALER_MEMBERS, ModuleSummary
from .runner_frameworks import CARRIER_ATTRIBUTE, RUNNER, FrameworkClass, RunnerBuild, framework_named

Def = Tuple[str, str]


@dataclass
class FrameworkRoute:
    #: class -> (method, expression of the GradScaler in it)
    carried: Dict[Def, Tuple[Tuple[str, str], ...]] = field(default_factory=dict)
    #: launcher -> (function, runner name, line of the build)
    attach: Dict[str, Tuple[Tuple[str, str, int], ...]] = field(default_factory=dict)
    #: launcher -> what puts the forward passes under autocast (shown to the user)
    autocast: Dict[str, str] = field(default_factory=dict)
    #: why not, per file and definition (as ``RepoPlan`` notes)
    notes: Dict[str, Dict[str, str]] = field(default_factory=dict)


def _outside_builds(
    builders: Sequence[str], others: Sequence[Tuple[str, str, bytes]], carried: Sequence[str] = ()
) -> List[str]:
    """Files without apex that may call a runner builder (its definition is no call): their
    names.  A test file (under ``tests/``, ``test_*.py``) that never names the classes that
    need the GradScaler (``carried``, by class or by a config's ``type=``) builds runners for
    other hooks: it is left out."""
    calls = re.compile(rb"(?<!def )\b(?:" + b"|".join(re.escape(b.encode()) for b in builders) + rb")\s*\(")
    return [
        shown
        for path, shown, source in others
        if calls.search(source) and not (_is_test_file(path) and not any(n.encode() in source for n in carried))
    ]


def _test_for_other_hooks(path: str, summary: ModuleSummary, carried: Sequence[str]) -> bool:
    """An indexed test file without apex.amp that imports none of the classes needing the
    GradScaler: the runners it builds serve other hooks (as in ``_outside_builds``)."""
    if not _is_test_file(path) or summary.amp_sites or summary.training_inits:
        return False
    imported = set(summary.imports) | {attr for _module, attr in summary.imports.values()}
    return not imported & set(carried)


def _is_test_file(path: str) -> bool:
    parts = path.replace("\\", "/").split("/")
    return any(p in ("tests", "test") for p in parts[:-1]) or parts[-1].startswith("test_")


def _runner_builds(framework, summary: ModuleSummary, runner_classes: Set[str]) -> List[RunnerBuild]:
    """The runners of ``framework`` a file builds: through its builder, or by calling a
    runner class (one of the repository's runner subclasses, or a runner of the framework
    imported from it) with the optimizer, directly or through a local alias."""
    builds = [b for b in summary.framework.builds if b.framework == framework.name]
    for made in summary.framework.constructions:
        if any(_is_runner(framework, summary, name, runner_classes) for name in made.classes):
            builds.append(RunnerBuild(framework.name, made.owner, made.line, made.target, made.optimizer))
    return sorted(builds, key=lambda b: b.line)


def _is_runner(framework, summary: ModuleSummary, name: str, runner_classes: Set[str]) -> bool:
    if name in summary.framework.classes:
        return summary.framework.classes[name].role == RUNNER
    imported = summary.imports.get(name)
    if imported is None:
        return False
    module, attr = imported
    if module.split(".")[0] == framework.package:
        return attr in framework.runner_bases
    return attr in runner_classes


def framework_route(
    by_path: Dict[str, ModuleSummary],
    launchers: Set[str],
    needy: Set[Def],
    others: Sequence[Tuple[str, str, bytes]] = (),
    built: Optional[Dict[Def, str]] = None,
) -> FrameworkRoute:
    """The route for the framework hooks/runners among ``needy``; ``built``: the definitions
    some indexed file calls, and where (a runner class constructed directly carries no
    GradScaler)."""
    route = FrameworkRoute()
    candidates: Dict[Def, FrameworkClass] = {
        d: by_path[d[0]].framework.classes[d[1]] for d in needy if d[1] in by_path[d[0]].framework.classes
    }
    by_framework: Dict[str, List[Def]] = {}
    for item, cls in sorted(candidates.items()):
        by_framework.setdefault(cls.framework, []).append(item)
    for name, items in by_framework.items():
        framework = framework_named(name)
        reason = _refusal(framework, items, candidates, by_path, launchers, others, route, built or {})
        if reason is not None:
            for path, cls_name in items:
                route.notes.setdefault(path, {})[cls_name] = reason
            continue
        for item in items:
            cls = candidates[item]
            route.carried[item] = tuple((m, f"{runner}.{CARRIER_ATTRIBUTE}") for m, runner in cls.methods)
    return route


def _refusal(framework, items, candidates, by_path, launchers, others, route: FrameworkRoute, built: Dict[Def, str]):
    """Why the classes ``items`` of ``framework`` cannot get the GradScaler from the runner
    (None when they can; then the launcher's part is recorded in ``route``)."""
    for path, name in items:
        cls = candidates[(path, name)]
        methods = dict(cls.methods)
        if cls.role == RUNNER:
            made = built.get((path, name)) or _constructed_in(name, others)
            if made:
                return (
                    f"{name} ({by_path[path].shown}) is also constructed directly in {made}, not by "
                    f"{' / '.join(framework.builders)}: that runner would carry no GradScaler"
                )
        for site in by_path[path].amp_sites:
            if site.owner == name and site.member in SCALER_MEMBERS and (
                site.method not in methods or site.method == "__init__"
            ):
                where = f"{name}.{site.method}" if site.method else name
                return (
                    f"amp.{site.member} in {where}, which {framework.name} does not call with the runner "
                    f"({'its hook methods' if cls.role == 'hook' else 'a plain method'}): the GradScaler the "
                    "runner carries cannot reach it"
                )
    shown = ", ".join(sorted(f"{n} ({by_path[p].shown})" for p, n in items))
    runner_classes = {
        n for summary in by_path.values() for n, c in summary.framework.classes.items()
        if c.role == RUNNER and c.framework == framework.name
    }
    found = []
    for path in sorted(launchers):
        summary = by_path[path]
        inits = summary.training_inits
        if not inits:
            continue  # a model factory's caller: the factory made its GradScaler
        owner = inits[0].owner
        first = min(s.line for s in inits)
        for build in _runner_builds(framework, summary, runner_classes):
            if build.owner == owner and build.line > first:
                found.append((path, build))
    if not found:
        helper = _helper_caller_builds(framework, launchers, by_path, others, runner_classes)
        if helper is not None:
            return f"{shown} get the runner from {framework.name}, but {helper}"
    if not found or len({(path, build.owner) for path, build in found}) != 1:
        return (
            f"{shown} get the runner from {framework.name}, but "
            + ("no file with amp.initialize builds" if not found else "more than one place builds")
            + f" a runner ({' / '.join(framework.builders)} given the optimizer) after it to carry the GradScaler"
        )
    path, build = found[0]
    chosen = {(p, b.line) for p, b in found}  # the branches of one launcher: each carries it
    carried_names = [n for _p, n in items]
    for other_path, summary in sorted(by_path.items()):
        if _test_for_other_hooks(other_path, summary, carried_names):
            continue
        for build_other in _runner_builds(framework, summary, runner_classes):
            if (other_path, build_other.line) not in chosen:
                return (
                    f"a runner ({framework.name}) is also built at {summary.shown}:{build_other.line}, "
                    f"which would carry no GradScaler to {shown}"
                )
        for _owner, line in summary.framework.other_builds:
            return (
                f"a runner ({framework.name}) is also built at {summary.shown}:{line}, "
                f"which would carry no GradScaler to {shown}"
            )
    outside = _outside_builds(framework.builders, others, [n for _p, n in items])
    if outside:
        return (
            f"a runner ({framework.name}) may also be built in {outside[0]}, which would carry no GradScaler to {shown}"
        )
    switched = by_path[path].framework.switches.get(framework.name, [])
    switches = [line for owner, line in switched if owner == build.owner]
    if not switches:
        return (
            f"the losses {shown} handle come from forward passes {framework.name} runs, where no autocast can be "
            f"placed, and {build.owner}() sets no `.{framework.autocast_switch} = True` to have "
            f"{framework.name}'s @{framework.autocast_decorator} run them under autocast"
        )
    if not _decorated_somewhere(framework, by_path, others):
        return (
            f"the losses {shown} handle come from forward passes {framework.name} runs, and no file uses its "
            f"@{framework.autocast_decorator}, which puts them under autocast once `.{framework.autocast_switch} = "
            "True` is set: nothing proves them under autocast"
        )
    route.attach[path] = tuple((b.owner, b.target, b.line) for _p, b in found)
    route.autocast[path] = (
        f"the forward passes run in {framework.name}: its @{framework.autocast_decorator} puts the methods it "
        f"decorates under torch.cuda.amp.autocast on modules whose {framework.autocast_switch} is True, set at "
        f"line {switches[0]} (this needs {framework.name} >= {framework.autocast_since}; earlier releases only "
        "cast their inputs to float16). Only decorated forward methods run in float16"
    )
    return None


def _helper_caller_builds(framework, launchers, by_path, others, runner_classes) -> Optional[str]:
    """When the training ``amp.initialize`` is in a setup function that builds no runner and
    a file without apex.amp both calls that function and builds a runner: saying so (the
    GradScaler would have to be returned there, to a file no rule edits)."""
    for path in sorted(launchers):
        inits = by_path[path].training_inits
        if not inits or inits[0].owner == MODULE_LEVEL:
            continue
        owner = inits[0].owner
        calls = re.compile(rb"(?<!def )\b" + re.escape(owner.encode()) + rb"\s*\(")
        callers = [
            other.shown
            for other in by_path.values()
            if not other.amp_sites and owner in other.called_names and _runner_builds(framework, other, runner_classes)
        ]
        callers += [
            shown
            for shown in _outside_builds(framework.builders, others)
            if calls.search(next(src for _p, name, src in others if name == shown))
        ]
        if callers:
            return (
                f"amp.initialize is in {owner}() of {by_path[path].shown}, which builds no runner: "
                f"{callers[0]}, a file without apex.amp, calls {owner}() and builds the runner, so no GradScaler "
                "is there to put on it"
            )
    return None


def _constructed_in(name: str, others: Sequence[Tuple[str, str, bytes]]):
    """The first file without apex that calls ``name(`` (a runner class built directly)."""
    call = re.compile(rb"(?<!class )(?<!def )\b" + re.escape(name.encode()) + rb"\s*\(")
    return next((shown for _path, shown, source in others if call.search(source)), None)


def _decorated_somewhere(framework, by_path: Dict[str, ModuleSummary], others) -> bool:
    """Some file imports the framework's autocast decorator (the models that use it)."""
    decorator = framework.autocast_decorator
    if any(
        attr == decorator and module.split(".")[0] == framework.package
        for summary in by_path.values()
        for module, attr in summary.imports.values()
    ):
        return True
    return any(f"@{decorator}".encode() in source for _path, _shown, source in others)


def module_level_note(route: FrameworkRoute, launchers: Set[str], by_path) -> Dict[str, str]:
    """The note a launcher gets when the framework route refused its classes."""
    out: Dict[str, str] = {}
    if len(launchers) != 1:
        return out
    launcher = next(iter(launchers))
    for _path, notes in sorted(route.notes.items()):
        for _name, why in sorted(notes.items()):
            out.setdefault(launcher, f"no GradScaler can ride on the framework's runner: {why}")
    return out


__all__ = ["FrameworkRoute", "framework_route", "module_level_note", "MODULE_LEVEL"]
