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


def overridden_methods(by_path: Dict[str, ModuleSummary], definitions) -> Dict[str, Tuple[Override, ...]]:
    """Path -> the overrides of the methods of its classes that scale a loss, for every
    indexed file with an ``amp.scale_loss`` in a method (first overriding class, by path)."""
    from .repo_plan import derived_classes

    found: Dict[str, List[Override]] = {}
    for path, summary in by_path.items():
        owners = sorted({s.owner for s in summary.amp_sites if s.member == "scale_loss" and s.method})
        for owner in owners:
            members = summary.class_members.get(owner, set())
            # a superset is safe here: an override found only keeps the base's file on the shim
            family = derived_classes((path, owner), by_path, definitions, by_name=True)
            heirs = sorted(family - {(path, owner)})
            for method in sorted(members):
                for heir_path, heir in heirs:
                    heir_summary = definitions.summary(heir_path)
                    if heir_summary is not None and method in heir_summary.class_members.get(heir, set()):
                        found.setdefault(path, []).append((owner, method, f"{heir} in {heir_summary.shown}"))
                        break
    return {path: tuple(items) for path, items in found.items()}


def named_base(text: str, summary: ModuleSummary, family: Set[Def]) -> bool:
    """Whether the base written ``text`` in the file of ``summary`` names a class of
    ``family`` where the import cannot be resolved to a file (a package imported by its own
    name, ``from deepgnn.pytorch.training.trainer_fp16 import FP16Trainer``, measured from
    inside that package): the class's name, imported from a module whose last part is the
    defining file's name, or a class of that name in the same file written bare (a dotted
    ``torch.optim.Optimizer`` is an attribute of a module, whatever the file defines)."""
    name = text.rpartition(".")[2]
    module = summary.imports.get(name, ("", ""))[0] or text.rpartition(".")[0]
    for where, cls in family:
        if cls != name:
            continue
        if (where == summary.path and text == name) or module.rpartition(".")[2] == _stem(where):
            return True
    return False


def _stem(path: str) -> str:
    """The module name of a file (``trainer_fp16`` for ``.../trainer_fp16.py``; the package
    for an ``__init__.py``)."""
    folder, name = os.path.split(path)
    stem = os.path.splitext(name)[0]
    return os.path.basename(folder) if stem == "__init__" else stem
