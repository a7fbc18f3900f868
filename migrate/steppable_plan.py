"""Optimizer wrappers a file that scales a loss can hand its GradScaler to.

A class of another file without apex.amp whose ``step()`` steps the optimizer it holds once
(``optimizer_wrappers.scaler_steppable_attribute``) can take the GradScaler as a new
``scaler=None`` parameter (``wrapper_step_edit``): the file scaling a loss for that held
optimizer then calls ``wrapper.step(scaler)``.  This records, per file with an
``amp.scale_loss``, the local names under which it reaches such classes (``Optimizer`` from
``from optimizer import Optimizer``, ``commons.Adam`` through ``import commons``), where
no class of the walked files that derives from the wrapper redefines its ``step``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Tuple

from .repo_index import ModuleSummary
from .walk import imports_apex

Def = Tuple[str, str]


def with_steppable_wrappers(plan: Any, by_path: Dict[str, ModuleSummary], unindexed, definitions) -> Any:
    """``plan`` with ``FilePlan.scaler_steppable`` set for the files that name such classes."""
    from .repo_plan import FilePlan, derived_classes

    proven: Dict[Def, bool] = {}
    for path, summary in by_path.items():
        if not any(site.member == "scale_loss" for site in summary.amp_sites):
            continue
        found: List[Tuple[str, str, str, str]] = []
        for local, item in _candidates(path, summary, definitions):
            owner = definitions.summary(item[0])
            attr = owner.scaler_steppable.get(item[1]) if owner is not None else None
            if attr is None or item[0] == path or not _apex_free(item[0], owner, by_path, unindexed):
                continue
            if item not in proven:
                heirs = derived_classes(item, by_path, definitions) - {item}
                proven[item] = not any(
                    "step" in (definitions.summary(p) or ModuleSummary(p, p)).class_members.get(c, set())
                    for p, c in heirs
                )
            if proven[item]:
                found.append((local, attr, item[0], item[1]))
        if found:
            own = plan.files.get(path, FilePlan())
            plan.files[path] = replace(own, scaler_steppable=tuple(sorted(found)))
    return plan


def _candidates(path: str, summary: ModuleSummary, definitions) -> List[Tuple[str, Def]]:
    """(local name, definition) of every class a file may name: ``from m import C`` as ``C``,
    ``import m`` as ``m.C`` for each top-level class of ``m``."""
    found: List[Tuple[str, Def]] = []
    for local, (module, attr) in summary.imports.items():
        if attr:
            item = definitions.find(module, attr, path, anywhere=True)
            if item is not None:
                found.append((local, item))
            continue
        target = definitions.resolver.resolve(module, path)
        owner = definitions.summary(target) if target is not None else None
        for cls in sorted(owner.scaler_steppable) if owner is not None else ():
            found.append((f"{local}.{cls}", (target, cls)))
    return found


def _apex_free(path: str, summary: ModuleSummary, by_path: Dict[str, ModuleSummary], unindexed) -> bool:
    """Whether no rule will rewrite the wrapper's file (no apex.amp site, no apex import):
    its one edit is the wrapper's step."""
    if summary.amp_sites:
        return False
    if path in unindexed:
        return not imports_apex(unindexed[path][1])
    return path not in by_path or not by_path[path].amp_sites and not _imports_apex_module(summary)


def _imports_apex_module(summary: ModuleSummary) -> bool:
    return any(module == "apex" or module.startswith("apex.") for module, _attr in summary.imports.values())
