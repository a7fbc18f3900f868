"""The module-scaler route of the cross-file plan: which file may keep its GradScaler in a
module-level variable, and which other files set it.

apex's loss scalers are per process: ``amp.initialize`` sets them up and every
``amp.scale_loss`` of the process uses them.  Where one file of the repository initializes
apex in one top-level function and scales losses in others that no call chain from there
reaches (bonito's ``load_state`` and ``train``, called in turn by a command of another
module), the file (the *home*) can keep the GradScaler the same way: a module-level variable,
assigned where ``amp.initialize`` was and read by the sites at call time.

Every other file naming apex.amp must be a *guest*: it only initializes (no other apex.amp
use, so every loss of the process is scaled in the home), imports the home under one dotted
name, and calls the home's functions only after its initialize in the same top-level
definition (bonito's ``tune.py``).  Its initialize then assigns the home's variable
(``bonito.training.scaler = GradScaler(...)``), as apex's replaced the process's loss scaler.
The home and its guests are one component: migrated together or not at all.  A home run as a
script (a ``__main__`` guard) is left out: run that way it would be a second module object
with a variable of its own; a script the only file naming apex.amp is one, where no other
file imports it (``repo_plan`` checks that) and its guard runs the readers after the home, in
the same block (the per-file rule checks that).  The per-file rule proves the rest
(``rules/_amp_module_scaler``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from .repo_index import MODULE_LEVEL, ModuleSummary

#: names the module-level variable may take, in order of preference
VARIABLE_NAMES = ("scaler", "grad_scaler", "amp_scaler", "amp_grad_scaler")


@dataclass
class ModuleScalerRoute:
    """The home's path and variable, and each guest's path -> the home's dotted name there."""

    home: str
    variable: str
    guests: Dict[str, str] = field(default_factory=dict)
    #: why the route is not taken after all ("" when it is): another file naming apex.amp
    refusal: str = ""


def module_scaler_route(
    by_path: Dict[str, ModuleSummary], names_amp: Callable[[ModuleSummary], bool], resolve: Callable[[str, str], Optional[str]]
) -> Optional[ModuleScalerRoute]:
    """The route of the repository, if any (``resolve(module, importer)``: the indexed file a
    dotted module name denotes there); one with a ``refusal`` where another file naming
    apex.amp is no guest."""
    named = [path for path, summary in by_path.items() if names_amp(summary)]
    homes = [path for path in named if _home_shape(by_path[path], alone=len(named) == 1)]
    if len(homes) != 1:
        return None
    home = homes[0]
    summary = by_path[home]
    variable = next((n for n in VARIABLE_NAMES if n not in summary.identifiers), None)
    if variable is None:
        return None
    route = ModuleScalerRoute(home, variable)
    for path in named:
        if path == home:
            continue
        dotted, why = _guest_import(by_path[path], path, home, summary, resolve)
        if dotted is None:
            route.refusal = f"{by_path[path].shown} uses apex.amp too, and {why}"
            return route
        route.guests[path] = dotted
    return route


def _home_shape(summary: ModuleSummary, alone: bool = False) -> bool:
    """One training initialize with one loss scaler, in a top-level function the module does
    not call itself, and losses scaled in other top-level functions; no ``__main__`` guard
    unless the file is ``alone`` in naming apex.amp (UCSNet's ``train.py``)."""
    inits = summary.training_inits
    if len(inits) != 1 or (summary.main_guard and not alone) or inits[0].num_losses != 1:
        return False
    home = inits[0].owner
    if inits[0].method or home not in summary.functions:
        return False
    if home in summary.local_calls.get(MODULE_LEVEL, set()):
        return False  # the module runs its initializer on import: a script's shape, not followed
    scaled = {s.owner for s in summary.amp_sites if s.member == "scale_loss"}
    return bool(scaled - {home}) and scaled <= summary.functions


def _guest_import(
    guest: ModuleSummary, path: str, home: str, home_summary: ModuleSummary, resolve: Callable[[str, str], Optional[str]]
) -> Tuple[Optional[str], str]:
    """The dotted name ``guest`` imports the home's functions under, when it is a guest;
    else None and why not."""
    if guest.amp_values or guest.amp_arguments or guest.amp_stores or not guest.training_inits or any(
        not (site.member == "initialize" and site.training) for site in guest.amp_sites
    ):
        return None, "it does more with it than initialize for training, which a module-level GradScaler cannot follow"
    if any(site.num_losses != 1 for site in guest.training_inits):
        return None, "its amp.initialize keeps one loss scaler per loss id (num_losses), the initializing module's one"
    modules = {module for module, attr in guest.imports.values() if attr and resolve(module, path) == home}
    if len(modules) != 1:
        return None, "it does not import the initializing module's definitions under one module name"
    dotted = modules.pop()
    if dotted.split(".")[0] in guest.identifiers:
        return None, f"import {dotted} would bind a name it uses"
    imported = {local for local, (module, attr) in guest.imports.items() if module == dotted and attr}
    if imported & guest.escaping:
        return None, f"it hands a definition of {dotted} on as a value, which may run before its amp.initialize"
    first_init = {site.owner: site.line for site in sorted(guest.training_inits, key=lambda s: s.line, reverse=True)}
    for call in guest.calls:
        if call.module != dotted or call.name not in home_summary.functions:
            continue
        if call.owner not in first_init or call.line < first_init[call.owner]:
            where = "at its module level" if call.owner == MODULE_LEVEL else f"in {call.owner}()"
            return None, f"its call of {call.name}() {where} may run before its own amp.initialize would set that variable"
    return dotted, ""


#: the loss ids the readers may use where the home's num_losses is read from a dict at run
#: time (its list has as many GradScalers as that dict says; apex raised IndexError past them)
RUN_TIME_LOSSES = 2

#: the variable's names where it holds one GradScaler per loss id (``num_losses``)
LIST_NAMES = ("grad_scalers", "amp_grad_scalers", "loss_grad_scalers")


@dataclass
class ReaderRoute:
    """The second shape of the route: the one initializing file (the home, no
    ``scale_loss`` of its own) keeps the GradScaler(s) in ``variable``; each *reader* (a file
    with sites and no initialize) reads it through the home's dotted name at call time."""

    home: str
    variable: str
    losses: int
    #: reader path -> the dotted name it imports the home under (``import a.b.home``)
    readers: Dict[str, str] = field(default_factory=dict)
    #: the readers that import the home as ``from a.b import home`` and read it as ``home``
    #: (its name clashes with nothing of theirs): reader path -> that name
    bound: Dict[str, str] = field(default_factory=dict)
    #: the readers the home imports itself (through its imports, its packages' too): they
    #: import the home inside the functions that read it, where the import cycle cannot break
    local: Set[str] = field(default_factory=set)
    #: the home's num_losses comes in a ``**`` dict: its list is sized from that at run time
    losses_at_run_time: bool = False
    #: why the route is not taken after all ("" when it is)
    refusal: str = ""


def reader_route(
    by_path: Dict[str, ModuleSummary],
    names_amp: Callable[[ModuleSummary], bool],
    resolve: Callable[[str, str], Optional[str]],
    imported: Callable[[str], List[str]],
    files: Set[str],
) -> Optional[ReaderRoute]:
    """The reader route of the repository, if any: one training initialize in the whole
    repository (one amp instance per process), in a file that scales no loss, and every other
    file naming apex.amp has sites but no initialize (``imported(path)``: the repository's
    files the import statements of a file run, anywhere in it; ``files``: the repository's
    files).  One with a ``refusal`` where the shape is that but a condition fails; None where
    the shape is another one (a script's, the existing routes')."""
    # a file binding apex.amp that only reads ``amp._amp_state`` has no site the index records
    named = [path for path, summary in by_path.items() if names_amp(summary) or summary.module_amp_names]
    inits = [(p, site) for p in named for site in by_path[p].amp_sites if site.member in ("initialize", "init")]
    training = [(path, site) for path, site in inits if site.training]
    if len(training) != 1 or len(inits) != 1:
        return None
    home, init = training[0]
    summary = by_path[home]
    readers = [path for path in named if path != home]
    scaled = [path for path in readers if any(s.member == "scale_loss" for s in by_path[path].amp_sites)]
    if any(s.member == "scale_loss" for s in summary.amp_sites) or summary.scale_loss_named or not scaled:
        return None
    # num_losses in a ``**`` dict (mmgeneration's init_args): a list the home sizes from that
    # dict when it runs, read by loss ids below RUN_TIME_LOSSES (a higher one is refused)
    losses = RUN_TIME_LOSSES if init.losses_at_run_time else init.num_losses
    variable_names = LIST_NAMES if losses > 1 else VARIABLE_NAMES
    taken = set().union(*(by_path[p].identifiers for p in [home, *readers]))
    variable = next((n for n in variable_names if n not in taken), None)
    if variable is None:
        return None
    if init.owner == MODULE_LEVEL or summary.main_guard or init.member != "initialize":
        return None  # a script's shape (run as __main__ it would be a module of its own), or the old API
    if summary.local_calls.get(MODULE_LEVEL):
        return None  # it runs its own code on import: a script's shape too
    route = ReaderRoute(home, variable, losses, losses_at_run_time=init.losses_at_run_time)
    if set(summary.amp_values) - set(summary.amp_unset) or summary.amp_arguments or summary.amp_stores:
        route.refusal = f"{summary.shown} hands apex.amp on as a value, which a module-level GradScaler cannot follow"
        return route
    loads = [(p, s.line) for p in named for s in by_path[p].amp_sites if s.member == "load_state_dict"]
    if loads and not any(s.member == "state_dict" for p in named for s in by_path[p].amp_sites):
        # vissl: its task loads apex's state, and the base class of another package that
        # writes the checkpoint saves it (classy_vision's get_classy_state): that code would
        # still call apex.amp.state_dict() while the GradScaler holds the loss scale
        route.refusal = (
            f"{by_path[loads[0][0]].shown} loads amp's state (line {loads[0][1]}), but no file of the repository "
            "saves it: the checkpoint is written by code outside the repository (a base class or a framework of "
            "another package), which would still call apex.amp.state_dict() while a GradScaler holds the loss scale"
        )
        return route
    for path in readers:
        reader = by_path[path]
        if reader.amp_values or reader.amp_arguments or reader.amp_stores:
            route.refusal = (
                f"{reader.shown} uses apex.amp too, and hands it on as a value, which a module-level GradScaler "
                "cannot follow"
            )
            return route
        dotted = _dotted_name(home, path, resolve, files)
        if dotted is None:
            route.refusal = f"{reader.shown} uses apex.amp too, and cannot import {summary.shown} under one dotted name"
            return route
        package, _, name = dotted.rpartition(".")
        root = dotted.split(".")[0]
        if package and (name not in reader.identifiers or reader.imports.get(name) == (package, name)):
            route.bound[path] = name  # ``from a.b import home``: the sites read ``home.<variable>``
        elif root in reader.identifiers and reader.imports.get(root) != (root, ""):
            route.refusal = f"{reader.shown} uses apex.amp too, and import {dotted} would bind a name it uses"
            return route
        starts = [home, *(resolve(".".join(dotted.split(".")[:n]), home) for n in range(1, dotted.count(".") + 1))]
        if _imports_reach([s for s in starts if s is not None], path, imported):
            # an import at the reader's top could run while the home is half made (the reader
            # imported first): the functions that read the variable import the home when they run
            route.local.add(path)
        route.readers[path] = dotted
    return route


def _dotted_name(
    home: str, importer: str, resolve: Callable[[str, str], Optional[str]], files: Set[str]
) -> Optional[str]:
    """The longest dotted name (a tail of the home's path) that denotes the home for
    ``importer`` and for the home itself: the package-qualified one.  A bare module name
    only where both lie in one folder that is no package (a scripts' folder, on the path
    when they run)."""
    home = os.path.abspath(home)
    parts = home[: -len(".py")].split(os.sep) if home.endswith(".py") else []
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    folder = os.path.dirname(home)
    for start in range(len(parts)):
        dotted = ".".join(parts[start:])
        if not all(p.isidentifier() for p in parts[start:]):
            continue
        if start == len(parts) - 1 and (
            os.path.dirname(os.path.abspath(importer)) != folder or os.path.join(folder, "__init__.py") in files
        ):
            continue
        if resolve(dotted, importer) == home == resolve(dotted, home):
            return dotted
    return None


def _imports_reach(starts: List[str], target: str, imported: Callable[[str], List[str]]) -> bool:
    """Whether one of ``starts`` (a module and its packages) imports ``target``, directly or
    through other files of the repository."""
    seen = set(starts)
    queue = list(starts)
    while queue:
        for nxt in imported(queue.pop(0)):
            if nxt == target:
                return True
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return False


def imported_files(
    path: str, lines: Iterable[str], resolve: Callable[[str, str], Optional[str]], files: Set[str]
) -> List[str]:
    """The repository's files the import statements of ``path`` run (``lines``: the dotted
    names they import, as ``ModuleSummary.import_lines`` keys them: ``a.b``, ``pkg.*``,
    ``..util.x``), each package on the way included."""
    found: List[str] = []
    for line in lines:
        name = line[: -len(".*")] if line.endswith(".*") else line
        bare = name.lstrip(".")
        parts = bare.split(".") if bare else []
        if name.startswith("."):
            base = os.path.dirname(os.path.abspath(path))
            for _ in range(len(name) - len(bare) - 1):
                base = os.path.dirname(base)
            for end in range(len(parts) + 1):
                folder = os.path.join(base, *parts[:end])
                found += [c for c in (folder + ".py", os.path.join(folder, "__init__.py")) if c in files]
            continue
        for end in range(1, len(parts) + 1):
            target = resolve(".".join(parts[:end]), path)
            if target is not None:
                found.append(target)
    return list(dict.fromkeys(found))
