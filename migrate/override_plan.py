"""Methods of the classes that scale a loss which a subclass, in any walked file, redefines.

A trainer may keep the optimizer step in a hook method of its own (``def _apex_step(self):
self.optimizer.step()``) called after the scaled backward, for subclasses to override: a
distributed trainer in another file redefines it (``with self.optimizer.skip_synchronize():
self.optimizer.step()``).  apex patched the optimizer's ``step`` itself, so every override
skipped an overflowing step and stepped unscaled gradients.  A native rewrite turns the
base's step into ``scaler.step(optimizer)``, but an override stays a plain
``optimizer.step()`` on the scaled gradients, and nothing updates the scale: the step rule
needs these overrides to keep such a file on the shim (``_amp_sites._check_steps``).
Pure data from the index.
"""

from __future__ import annotations

import os
from typing import Dict, List, Set, Tuple

from .repo_index import ModuleSummary

Def = Tuple[str, str]
#: (class, method, where the overriding class is: ``HVDTrainer in trainer/hvd.py``)
Override = Tuple[str, str, str]


def overridden_methods(by_path: Dict[str, ModuleSummary], unindexed, definitions) -> Dict[str, Tuple[Override, ...]]:
    """Path -> the overrides of the methods of its classes that scale a loss, for every
    indexed file with an ``amp.scale_loss`` in a method (first overriding class, by path)."""
    from .repo_plan import derived_classes

    found: Dict[str, List[Override]] = {}
    for path, summary in by_path.items():
        owners = sorted({s.owner for s in summary.amp_sites if s.member == "scale_loss" and s.method})
        for owner in owners:
            members = summary.class_members.get(owner, set())
            family = derived_classes((path, owner), by_path, unindexed, definitions)
            heirs = sorted((family | _heirs_by_name(path, owner, by_path, unindexed, definitions)) - {(path, owner)})
            for method in sorted(members):
                for heir_path, heir in heirs:
                    heir_summary = definitions.summary(heir_path)
                    if heir_summary is not None and method in heir_summary.class_members.get(heir, set()):
                        found.setdefault(path, []).append((owner, method, f"{heir} in {heir_summary.shown}"))
                        break
    return {path: tuple(items) for path, items in found.items()}


def _heirs_by_name(path: str, owner: str, by_path, unindexed, definitions) -> Set[Def]:
    """The classes deriving from ``owner`` of ``path``, directly or not, matched by names
    where the import cannot be resolved to a file (a package imported by its own name,
    ``from deepgnn.pytorch.training.trainer_fp16 import FP16Trainer``, measured from inside
    that package): a base written as the class's name, imported from a module whose last
    part is the defining file's name, or defined in the same file.  A superset is safe here:
    an override found only keeps the base's file on the shim."""
    family: Set[Def] = {(path, owner)}
    grew = True
    while grew:
        grew = False
        names = {cls: _stem(where) for where, cls in family}
        for other in list(by_path) + list(unindexed):
            if other not in by_path and not any(n.encode() in unindexed[other][1] for n in names):
                continue
            summary = definitions.summary(other)
            if summary is None:
                continue
            for cls, bases in summary.class_bases.items():
                if (other, cls) in family:
                    continue
                for base in bases:
                    name = base.rpartition(".")[2]
                    if name not in names:
                        continue
                    module = summary.imports.get(name, ("", ""))[0] or base.rpartition(".")[0]
                    same_file = name in summary.classes and (other, name) in family
                    if same_file or module.rpartition(".")[2] == names[name]:
                        family.add((other, cls))
                        grew = True
                        break
    return family


def _stem(path: str) -> str:
    """The module name of a file (``trainer_fp16`` for ``.../trainer_fp16.py``; the package
    for an ``__init__.py``)."""
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    return os.path.basename(folder) if stem == "__init__" else stem
