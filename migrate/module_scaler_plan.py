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
with a variable of its own.  The per-file rule proves the rest (``rules/_amp_module_scaler``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Dict, Optional, Tuple

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
    homes = [path for path in named if _home_shape(by_path[path])]
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


def _home_shape(summary: ModuleSummary) -> bool:
    """One training initialize with one loss scaler, in a top-level function the module does
    not call itself, and losses scaled in other top-level functions; no ``__main__`` guard."""
    inits = summary.training_inits
    if len(inits) != 1 or summary.main_guard or inits[0].num_losses != 1:
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
