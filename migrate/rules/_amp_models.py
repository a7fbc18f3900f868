"""The models as another class reads them: through the initializing object it keeps.

A trainer that keeps the object whose ``__init__`` runs ``amp.initialize([self.G, self.D],
...)`` as ``self.GAN`` (``_amp_holder``) runs its forward passes as ``self.GAN.G(...)``, and
through the modules that object builds around a model (``self.D_aug = AugWrapper(self.D)``,
``self.D_cl = ContrastiveLearner(self.D, ...)``: calling them runs ``self.D``).  Those texts
are models for the autocast search of that trainer's methods.
"""

from __future__ import annotations

from typing import Any, Set

import libcst as cst

from ._amp_holder import held_instance
from ._edits import code_of
from ._tree import walk


def held_model_texts(rule: Any, info: Any, texts: Set[str]) -> Set[str]:
    """``self.GAN.G``, ``self.GAN.D_aug``: the models of the initializing class (``self.G``)
    and the attributes it builds around one, read through the attribute another class of the
    file keeps its instance in.  Empty where no class keeps one."""
    from ._amp_sites import class_of_method, self_name

    found: Set[str] = set()
    for site in info.training_inits:
        home_cls = class_of_method(rule.parents, site.func)
        if home_cls is None:
            continue
        me = self_name(site.func)
        holders = [
            held
            for cls in walk(rule.tree)
            if isinstance(cls, cst.ClassDef)
            for held in [held_instance(rule, cls, home_cls)[0]]
            if held
        ]
        if not holders:
            continue
        own = {t for t in texts if t.startswith(me + ".")} | _wrappers(site.func, texts)
        for held in holders:
            found |= {f"self.{held}.{t[len(me) + 1:]}" for t in own}
    return found


def _wrappers(func: Any, texts: Set[str]) -> Set[str]:
    """``self.A`` assigned, in ``func``, a call handed one of the models ``texts`` by itself."""
    found = set()
    for node in walk(func):
        if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Call)):
            continue
        if not any(code_of(a.value) in texts for a in node.value.args):
            continue
        for target in node.targets:
            if isinstance(target.target, cst.Attribute) and isinstance(target.target.value, cst.Name):
                found.add(code_of(target.target))
    return found
