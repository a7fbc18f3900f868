"""The GradScaler of an object another class keeps on ``self``.

stylegan2's ``Trainer`` keeps the ``StyleGAN2`` whose ``__init__`` runs ``amp.initialize`` as
``self.GAN`` (``self.GAN = StyleGAN2(...)`` in ``init_GAN()``) and steps ``self.GAN.D_opt``
in ``train()``.  Once the initialize keeps the GradScaler on that object (``self.scaler``),
the trainer's methods reach it as ``self.GAN.scaler``.  That attribute holds an instance of
the initializing class, or nothing at all, only when every assignment of the attribute in the
file is ``self.<attr> = Home(...)`` or ``self.<attr> = None`` in a method of that one class
(a ``del`` of it too), never a target of an unpacking, an augmented or annotated assignment, a
loop, a ``with``.  Anything else that lands there without a GradScaler (another file setting
``trainer.GAN = obj``) fails at ``.scaler`` with AttributeError: loudly, never training
unscaled.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._edits import code_of
from ._tree import assignment_targets, walk


def held_instance(rule: Any, cls: Any, home_cls: Any) -> Tuple[Optional[str], str]:
    """(``GAN`` when ``cls`` provably keeps an instance of ``home_cls`` in ``self.GAN``, else
    None; the reason it does not, "" when it keeps none at all)."""
    if cls is None or home_cls is None or cls is home_cls:
        return None, ""
    names = _kept_attributes(rule, cls, home_cls)
    if len(names) != 1:
        return None, "" if not names else f"{cls.name.value} keeps it in several attributes"
    attr = names.pop()
    for node in walk(rule.tree):
        if not (isinstance(node, cst.Attribute) and node.attr.value == attr):
            continue
        why = _store_refusal(rule, node, cls, home_cls)
        if why:
            return None, f"self.{attr} is also {why}"
    return attr, ""


def local_instance(rule: Any, func: Any, home: Any, home_cls: Any, sites: List[Any]) -> Optional[str]:
    """``trainer`` where the module-level function ``func`` binds it once, by ``trainer =
    Home(...)`` standing in its own body (no branch or loop around it), binds that name no
    other way, and every one of ``sites`` comes after it; ``home`` (where the GradScaler is
    made) is ``Home.__init__`` with no ``return``, so the instance holds it.  The launcher
    then reads the GradScaler as ``trainer.<scaler>`` (its amp.state_dict() for a
    checkpoint); None where that is not proven."""
    found = local_binding(rule, func, home, home_cls)
    if found is None or not sites or any(rule.line_of(site) <= found[1] for site in sites):
        return None
    return found[0]


def local_binding(rule: Any, func: Any, home: Any, home_cls: Any) -> Optional[Tuple[str, int]]:
    """``local_instance``'s binding, with its line, before any site is asked about."""
    if func is None or home is None or home_cls is None or home.name.value != "__init__":
        return None
    if not isinstance(rule.parents.get(func), cst.Module) or any(isinstance(n, cst.Return) for n in walk(home.body)):
        return None
    binding = [s for s in func.body.body if isinstance(s, cst.SimpleStatementLine) and len(s.body) == 1
               and isinstance(s.body[0], cst.Assign) and _builds(s.body[0].value, home_cls)
               and len(s.body[0].targets) == 1 and isinstance(s.body[0].targets[0].target, cst.Name)]
    if len(binding) != 1:
        return None
    stmt = binding[0]
    name = stmt.body[0].targets[0].target.value
    if name in {p.name.value for p in func.params.params}:
        return None
    if any(_binds_name(node, name) for node in walk(func.body) if node is not stmt.body[0]):
        return None
    return name, rule.line_of(stmt)


def _binds_name(node: Any, name: str) -> bool:
    """Whether ``node`` binds ``name`` (an assignment or loop target, ``with ... as``, an
    import, a nested definition) or may change what it is bound to (``del``, ``global``)."""
    if isinstance(node, (cst.Global, cst.Nonlocal, cst.Del)):
        return True
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node.name.value == name
    if isinstance(node, cst.ImportAlias):
        bound = node.asname.name if node.asname is not None else node.name
        return code_of(bound).split(".")[0] == name
    return any(isinstance(n, cst.Name) and n.value == name for t in assignment_targets(node) for n in walk(t))


def _kept_attributes(rule: Any, cls: Any, home_cls: Any) -> set:
    """The attributes ``self.<a> = Home(...)`` in the methods of ``cls`` sets."""
    found = set()
    for node in walk(cls):
        if isinstance(node, cst.Assign) and _builds(node.value, home_cls):
            for target in node.targets:
                if isinstance(target.target, cst.Attribute) and _on_self(rule, target.target, cls):
                    found.add(target.target.attr.value)
    return found


def _store_refusal(rule: Any, node: cst.Attribute, cls: Any, home_cls: Any) -> str:
    """Why the occurrence ``node`` of ``x.<attr>`` may put something other than an instance
    of ``home_cls`` (or None) there ("" for a read, a ``del``, a proven assignment)."""
    parents = rule.parents
    parent = parents.get(node)
    if isinstance(parent, cst.AssignTarget):
        assign = parents.get(parent)
        value = assign.value if isinstance(assign, cst.Assign) else None
        if not _on_self(rule, node, cls):
            return f"the name of an attribute {code_of(node)} set {_place(rule, node)}"
        if not (_builds(value, home_cls) or (isinstance(value, cst.Name) and value.value == "None")):
            return f"assigned `{code_of(value).strip() if value is not None else '...'}` {_place(rule, node)}"
        return ""
    if isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node:
        return "assigned another way"
    if isinstance(parent, (cst.Element, cst.StarredElement)):
        holder = parents.get(parent)
        if _in_target(parents, holder):
            return "a target of an unpacking"
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node:
        return "a loop target"
    if isinstance(parent, cst.AsName):
        return "bound by a with or except"
    return ""


def _place(rule: Any, node: Any) -> str:
    """``in Collector.__init__()``, ``in load()``, ``at module level``: where ``node`` is."""
    from ._amp_sites import class_of_method, enclosing_function

    func = enclosing_function(rule.parents, node)
    if func is None:
        return "at module level"
    owner = class_of_method(rule.parents, func)
    return f"in {owner.name.value + '.' if owner is not None else ''}{func.name.value}()"


def _in_target(parents: Any, node: Any) -> bool:
    cur = node
    while cur is not None and isinstance(cur, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
        cur = parents.get(cur)
    return isinstance(cur, (cst.AssignTarget, cst.For, cst.CompFor, cst.AsName))


def _builds(value: Any, home_cls: Any) -> bool:
    return isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == home_cls.name.value


def _on_self(rule: Any, target: cst.Attribute, cls: Any) -> bool:
    """``self.<attr>`` in a plain method of ``cls``, ``self`` its first parameter."""
    from ._amp_sites import class_of_method, enclosing_function, self_name

    func = enclosing_function(rule.parents, target)
    return (
        func is not None
        and class_of_method(rule.parents, func) is cls
        and isinstance(target.value, cst.Name)
        and target.value.value == self_name(func)
    )
