"""The models as another class reads them: through the initializing object it keeps.

A trainer that keeps the object whose ``__init__`` runs ``amp.initialize([self.G, self.D],
...)`` as ``self.GAN`` (``_amp_holder``) runs its forward passes as ``self.GAN.G(...)``, and
through the modules that object builds around a model (``self.D_aug = AugWrapper(self.D)``,
``self.D_cl = ContrastiveLearner(self.D, ...)``: calling them runs ``self.D``).  Those texts
are models for the autocast search of that trainer's methods.

``wrapped_models``: the names a file binds to a wrapper built around a model
(``self.segmentor = engine.data_parallel(self.segmentor_on_one_gpu)``): calling them runs it.
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


def wrapped_models(tree: Any, texts: Set[str]) -> Set[str]:
    """The names and ``self`` attributes that ``tree`` assigns one of the models ``texts`` or a
    call handed one as its first argument (a data-parallel wrapper, ``DDP(model, ...)``), and
    those wrappers' wrappers; empty where there is none.  Only the autocast search's second look uses them
    (``_amp_autocast``), where the models' own names were not found called."""
    found: Set[str] = set()
    known = set(texts)
    while True:
        new = set()
        for node in walk(tree):
            if not isinstance(node, cst.Assign) or not _wraps(node.value, known):
                continue
            for target in node.targets:
                name = target.target
                if isinstance(name, cst.Name) or (
                    isinstance(name, cst.Attribute) and isinstance(name.value, cst.Name)
                ):
                    new.add(code_of(name))
        new -= known
        if not new:
            return found
        found |= new
        known |= new


def _wraps(value: Any, known: Set[str]) -> bool:
    """``model`` itself, or a call whose first argument (not a keyword, not starred) it is."""
    if isinstance(value, (cst.Name, cst.Attribute)):
        return code_of(value) in known
    if not isinstance(value, cst.Call) or not value.args:
        return False
    first = value.args[0]
    return first.keyword is None and not first.star and code_of(first.value) in known
