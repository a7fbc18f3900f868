"""The cross-file plan's batch-processor route: autocast for the losses a framework hook
scales when the forward pass runs in the function the launcher hands the runner.

Old mmcv (``Runner(model, batch_processor, optimizer, ...)``, still accepted by 1.x's
runners) runs each batch through a function of the repository: the runner calls
``batch_processor(model, batch, train_mode=...)``, keeps what it returns as
``runner.outputs`` and then calls the hooks, whose ``after_train_iter(runner)`` scales
``runner.outputs["loss"]``.  The hook gets the GradScaler through its constructor (the
constructor route); the forward pass that made the loss is in the batch processor, where
apex's O1 patching had cast it.  That function gets a keyword parameter that switches a
``torch.autocast`` around its whole body (off by default: every other runner it is handed
to runs as before), and the runner the hook serves is handed
``functools.partial(batch_processor, <param>=scaler.is_enabled())``.  Proven only when

* every scaling site of the hook class is in a hook method the framework calls with the
  runner;
* every construction of the hook is in one function of a launcher, the function holding
  its training ``amp.initialize``;
* that function builds each of its framework runners by calling a runner class after the
  initialize, handing each the same top-level function of its own file, one a keyword
  parameter can be added to (no decorator, no ``*args``/``**kwargs``), calls no runner
  builder (a runner built from a config, whose forward pass is elsewhere) and constructs
  nothing else given ``optimizer=`` (a runner subclass of the repository, say).

Otherwise the hook's file is told why (``processor_refusals``): a loss it reads from the
runner's outputs keeps apex.amp with that reason.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Set, Tuple, Union

from .repo_index import ModuleSummary
from .runner_frameworks import HOOK

Def = Tuple[str, str]

#: names for the processor's new switch, the first its file does not use
SWITCH_NAMES = ("amp_enabled", "autocast_enabled", "apexcompat_amp_enabled")


def _launcher_function(
    item: Def, callers: Dict[Def, List[Tuple[Def, int]]], launchers: Set[str], by_path: Dict[str, ModuleSummary]
) -> Union[Def, str]:
    """The one launcher function every construction of the hook ``item`` is in, or why not."""
    sites = sorted({caller for caller, _line in callers.get(item, [])})
    if len(sites) != 1:
        where = ", ".join(f"{name}() in {by_path[path].shown}" for path, name in sites)
        return f"{item[1]} is constructed in more than one function ({where})"
    site = sites[0]
    if site[0] not in launchers:
        return f"{item[1]} is constructed in {site[1]}() of {by_path[site[0]].shown}, which holds no amp.initialize"
    return site


def _processor(summary: ModuleSummary, owner: str) -> Union[Tuple[str, Tuple[int, ...]], str]:
    """The batch processor ``owner`` hands every runner it builds after its initialize, with
    the lines of those runner calls; or why it is not one provable function."""
    inits = [s.line for s in summary.training_inits if s.owner == owner]
    facts = summary.framework
    if not inits:
        return f"{owner}() builds the hook but holds no amp.initialize"
    built = [line for o, line in facts.other_builds if o == owner] + [b.line for b in facts.builds if b.owner == owner]
    if built:
        return (
            f"{owner}() builds a runner from a config at line {min(built)}, whose forward pass runs in the "
            "framework (model.train_step), where no autocast can be placed"
        )
    handoffs = [h for h in facts.handoffs if h.owner == owner]
    if not handoffs:
        return (
            f"{owner}() hands no batch processor to a runner it builds: the forward pass runs in the framework "
            "(model.train_step), where no autocast can be placed"
        )
    names = {h.processor for h in handoffs}
    if len(names) != 1 or "" in names:
        return f"the runners {owner}() builds are not all handed one batch processor named there"
    lines = {h.line for h in handoffs}
    others = sorted(c.line for c in facts.constructions if c.owner == owner and c.line not in lines)
    if others:
        return (
            f"{owner}() also builds an object given the optimizer at line {others[0]}, which may be a runner "
            "whose forward pass this plan does not see"
        )
    early = [h.line for h in handoffs if h.line < min(inits)]
    if early:
        return f"{owner}() builds a runner at line {early[0]}, before its amp.initialize"
    name = names.pop()
    if name not in facts.open_functions:
        return (
            f"the batch processor {name} is not a top-level function of {summary.shown} that takes a new keyword "
            "parameter (it is imported, decorated, or takes *args or **kwargs)"
        )
    return name, tuple(h.line for h in handoffs)


def add_processor_routes(
    plan, by_path: Dict[str, ModuleSummary], launchers: Set[str], callers: Dict[Def, List[Tuple[Def, int]]]
) -> None:
    """Record in ``plan`` the batch processors that put the planned hooks' losses under
    autocast (see the module docstring)."""
    for path, file_plan in sorted(plan.files.items()):
        summary = by_path.get(path)
        if summary is None or file_plan.component is None:
            continue
        autocast: List[Tuple[str, str]] = []
        refused: List[Tuple[str, str]] = []
        for name in file_plan.entries:
            cls = summary.framework.classes.get(name)
            if cls is None or cls.role != HOOK:
                continue
            hook_methods = dict(cls.methods)
            if any(s.owner == name and s.member == "scale_loss" and s.method not in hook_methods
                   for s in summary.amp_sites):
                continue
            home = _launcher_function((path, name), callers, launchers, by_path)
            if isinstance(home, str):
                refused.append((name, home))
                continue
            launcher, owner = home
            found = _processor(by_path[launcher], owner)
            launcher_plan = plan.files.get(launcher)
            if isinstance(found, str):
                refused.append((name, found))
                continue
            if launcher_plan is None or launcher_plan.component != file_plan.component:
                continue
            processor, lines = found
            used = by_path[launcher].identifiers | set(by_path[launcher].framework.open_functions[processor])
            switch = next((n for n in SWITCH_NAMES if n not in used), SWITCH_NAMES[-1])
            planned = set(launcher_plan.processors) | {(owner, processor, line, switch) for line in lines}
            plan.files[launcher] = replace(launcher_plan, processors=tuple(sorted(planned)))
            autocast.append((
                name,
                f"{processor}() of {by_path[launcher].shown}, the batch processor {owner}() hands the runner "
                f"this hook is registered on, runs under torch.autocast while the GradScaler is enabled",
            ))
        if autocast or refused:
            plan.files[path] = replace(
                plan.files[path], processor_autocast=tuple(sorted(autocast)), processor_refusals=tuple(sorted(refused))
            )


__all__ = ["add_processor_routes", "SWITCH_NAMES"]
