"""The module-scaler route of the cross-file plan: which file may keep its GradScaler in a
module-level variable.

apex's loss scalers are per process: ``amp.initialize`` sets them up and every
``amp.scale_loss`` of the process uses them.  Where the one file of the repository that names
apex.amp initializes it in one top-level function and scales losses in others that no call
chain from there reaches (bonito's ``load_state`` and ``train``, called in turn by a command
of another module), the file can keep the GradScaler the same way: a module-level variable,
assigned where ``amp.initialize`` was and read by the sites at call time.  No other file can
then have set apex up for those sites, and a file run as a script (a ``__main__`` guard)
is left out: run that way it would be a second module object with a variable of its own.
The per-file rule proves the rest (``rules/_amp_module_scaler``).
"""

from __future__ import annotations

from typing import Callable, Dict, Set

from .repo_index import MODULE_LEVEL, ModuleSummary


def module_scaler_homes(by_path: Dict[str, ModuleSummary], names_amp: Callable[[ModuleSummary], bool]) -> Set[str]:
    """The files that may hold the module-level GradScaler (at most one: the only file of
    the repository ``names_amp`` is true of)."""
    named = [path for path, summary in by_path.items() if names_amp(summary)]
    if len(named) != 1:
        return set()
    path = named[0]
    summary = by_path[path]
    inits = summary.training_inits
    if len(inits) != 1 or summary.main_guard:
        return set()
    home = inits[0].owner
    if inits[0].method or home not in summary.functions:
        return set()
    if home in summary.local_calls.get(MODULE_LEVEL, set()):
        return set()  # the module runs its initializer on import: a script's shape, not followed
    scaled = {s.owner for s in summary.amp_sites if s.member == "scale_loss"}
    if not scaled - {home} or not scaled <= summary.functions:
        return set()
    return {path}
