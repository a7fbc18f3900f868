"""Checkpoint functions that take the GradScaler as an optional parameter (``scaler=None``).

A function of another file that only saves or loads the amp state (``load_checkpoint`` in a
``utils.py`` beside the training script) gets the GradScaler from the launcher's calls.  When
it is also called from a script that has no GradScaler (an evaluation script, a conversion
tool), the plan used to give up on the whole component.  That caller is harmless when it runs
in a process of its own in which no training ``amp.initialize`` ever ran: there apex's
``amp.state_dict()`` / ``amp.load_state_dict()`` either raised (apex's amp state exists only
once ``amp.initialize`` ran) or, after an inference-only ``amp.initialize(model)``, saved or
loaded the state of a loss scaler no loss is ever scaled with.  So the function takes
``scaler=None`` and uses it only when given (the rule guards each site with ``scaler is not
None``): the launcher's calls pass it, the script's calls stay as they are.

The same holds for the methods of a class built in the launchers before amp.initialize
(``ProposalNetwork.loadFromFile(path, use_amp)`` in Enigmatisms/NeRF): the methods take the
GradScaler as ``scaler=None``; another file may build the class (building it hands nothing
on), and may call those methods where it runs alone (``methods_save_or_load_only`` here, the
calls proven by ``repo_plan._method_route``).

Proven here: the function is a top-level function whose own amp sites are only
``state_dict``/``load_state_dict`` and that calls nothing else needing the scaler; every
file that names it (but the launchers' and the reached definitions') runs only where no
training initialize runs: neither a run of it nor one of any file that may import it
(directly or through others; its name on an import line) reaches a definition holding one
(``reach``: what it calls, what importing the files it reaches runs).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from .reach import what_a_run_reaches
from .repo_index import ModuleSummary

Def = Tuple[str, str]  # (file path, top-level definition name)

#: the amp members a function with an optional GradScaler may use
STATE_MEMBERS = frozenset({"state_dict", "load_state_dict"})


def saves_or_loads_only(item: Def, by_path: Dict[str, ModuleSummary], edges: Dict[Def, Any], needy: Set[Def]) -> bool:
    """``item`` is a top-level function whose amp sites only save or load the amp state and
    that calls no other definition needing the GradScaler (in its file or another)."""
    path, name = item
    summary = by_path[path]
    members = {site.member for site in summary.amp_sites if site.owner == name}
    if name not in summary.functions or not members or not members <= STATE_MEMBERS:
        return False
    if any((path, callee) in needy for callee in summary.local_calls.get(name, set())):
        return False
    return not any(callee in needy for callee, _text in edges.get(item, []))


def runs_alone(path: str, definitions: Any, importers: Callable[[str], List[str]]) -> Optional[str]:
    """None when no run that may execute ``path``'s code runs a training amp.initialize: a
    run of ``path`` itself or of any file that may import it, directly or through others
    (``importers``: the files with the module's name on an import line), reaches no
    definition holding one; otherwise why not."""
    files, work = {path}, [path]
    while work:
        for importer in importers(work.pop()):
            if importer not in files:
                files.add(importer)
                work.append(importer)

    def no_file_check(_path: str, _summary: ModuleSummary) -> Optional[str]:
        return None

    def initializes(_path: str, summary: ModuleSummary, name: str) -> Optional[str]:
        if any(site.owner == name for site in summary.training_inits):
            return f"{name} of {summary.shown} initializes amp for training"
        return None

    for start in sorted(files):
        why = what_a_run_reaches(start, definitions, no_file_check, initializes, follow_stars=True)
        if why is not None:
            return why
    return None


def module_stem(path: str) -> str:
    """The name an import line uses for ``path``: its file name, a package's folder name."""
    folder, name = os.path.split(path)
    return os.path.basename(folder) if name == "__init__.py" else name[: -len(".py")]


def methods_save_or_load_only(
    item: Def, methods: Set[str], by_path: Dict[str, ModuleSummary], edges: Dict[Def, Any], needy: Set[Def]
) -> bool:
    """The amp sites of the class ``item`` are all in ``methods`` and only save or load the
    amp state, and the class calls no other definition needing the GradScaler: the optional
    route of a class built before the GradScaler (``ProposalNetwork.loadFromFile(path,
    use_amp)``), whose other files' calls of those methods may then pass nothing."""
    path, name = item
    summary = by_path[path]
    sites = [site for site in summary.amp_sites if site.owner == name]
    if not sites or any(site.method not in methods or site.member not in STATE_MEMBERS for site in sites):
        return False
    if any((path, callee) in needy for callee in summary.local_calls.get(name, set()) if callee != name):
        return False
    return not any(callee in needy for callee, _text in edges.get(item, []) if callee != item)
