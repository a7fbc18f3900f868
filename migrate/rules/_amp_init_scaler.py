"""A disabled GradScaler in ``__init__`` when another method of the class creates the real one.

The self-storage route writes ``self.scaler = torch.amp.GradScaler(..., enabled=use_amp)``
where ``amp.initialize`` was, and the class's other methods read ``self.scaler``.  When that
method is not ``__init__`` (``train()``), an instance whose first call is another method
(``evaluate()`` on a fresh trainer) would find no ``self.scaler``; through apex it ran in fp32,
as no initialize had run.  ``__init__`` therefore creates a disabled one first (autocast off,
``scale`` the identity, ``step`` a plain step: apex before initialize), which the creating
method replaces.  This module finds where in ``__init__`` it goes, or says there is no place.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from ._edits import code_of
from ._tree import is_docstring, walk

#: how many same-file base classes are followed to find the ``__init__`` instances run
_BASE_DEPTH = 4
#: bases whose ``__init__`` calls no method a subclass could override
_BASES_WITHOUT_HOOKS = frozenset({"object", "nn.Module", "torch.nn.Module"})


def init_scaler_place(rule: Any, cls: cst.ClassDef, creators: Set[str]) -> Optional[Tuple[cst.BaseStatement, bool]]:
    """``(statement, after)``: the disabled scaler goes after (or before) that statement of the
    ``__init__`` instances of ``cls`` run (its own, else a base class's of the same file): after
    its docstring and its ``super().__init__(...)`` line when every base is known, else first.
    None when there is no such ``__init__``, or when some ``__init__`` of the file calls a
    method named in ``creators`` (then the real scaler is made at construction, and a disabled
    one after it would replace it)."""
    if _creators_called_from_an_init(rule.tree, creators):
        return None
    init = _init_run(rule, cls)
    if init is None or not isinstance(init.body, cst.IndentedBlock) or not init.body.body:
        return None
    body: List[Any] = list(init.body.body)
    start = 1 if is_docstring(body[0]) else 0
    if start == len(body):
        return body[0], True
    me = init.params.params[0].name.value
    last_super = None
    for stmt in body[start:]:
        if _is_super_init(stmt, me):
            last_super = stmt
            continue
        if _may_reach_methods(stmt, me):
            break
    owner = rule.parents.get(rule.parents.get(init))
    if last_super is not None and _known_bases(owner, _classes(rule.tree)):
        return last_super, True
    # a base's __init__ this file does not show could call the creating method (a hook it
    # overrides): the real scaler made there then replaces the disabled one, not the reverse
    return body[start], False


def _classes(tree: cst.Module) -> Dict[str, cst.ClassDef]:
    return {s.name.value: s for s in tree.body if isinstance(s, cst.ClassDef)}


def _known_bases(cls: Any, classes: Dict[str, cst.ClassDef], depth: int = 0) -> bool:
    """Every base of ``cls``, up its chain, is ``object``, ``nn.Module`` or a class of this
    file: no ``__init__`` the file does not show runs on the instance."""
    if not isinstance(cls, cst.ClassDef) or depth > _BASE_DEPTH:
        return False
    for base in cls.bases:
        if base.keyword is not None or base.star:
            return False
        text = code_of(base.value)
        if text in _BASES_WITHOUT_HOOKS:
            continue
        if text not in classes or classes[text] is cls or not _known_bases(classes[text], classes, depth + 1):
            return False
    return True


def _init_run(rule: Any, cls: cst.ClassDef) -> Optional[cst.FunctionDef]:
    """The ``__init__`` an instance of ``cls`` runs, when it is in this file: the class's own,
    else the nearest one up the chain of single module-level base classes of the file."""
    from ._amp_sites import class_of_method, init_method, methods_of  # (a cycle at import time)

    classes = _classes(rule.tree)
    for _ in range(_BASE_DEPTH):
        init = init_method(cls)
        if init is not None and class_of_method(rule.parents, init) is cls:
            return init
        if any(m.name.value == "__init__" for m in methods_of(cls)):
            return None  # a decorated or odd __init__: not followed
        named = [b.value.value for b in cls.bases if b.keyword is None and isinstance(b.value, cst.Name)]
        if len(cls.bases) != 1 or len(named) != 1 or named[0] not in classes or classes[named[0]] is cls:
            return None
        cls = classes[named[0]]
    return None


def _creators_called_from_an_init(tree: cst.Module, creators: Set[str]) -> bool:
    """Some ``__init__`` of the file names ``self.<creator>``: the scaler may be made there."""
    for node in walk(tree):
        if isinstance(node, cst.FunctionDef) and node.name.value == "__init__" and node.params.params:
            me = node.params.params[0].name.value
            for inner in walk(node.body):
                if (
                    isinstance(inner, cst.Attribute)
                    and inner.attr.value in creators
                    and isinstance(inner.value, cst.Name)
                    and inner.value.value == me
                ):
                    return True
    return False


def _is_super_init(stmt: Any, me: str) -> bool:
    """``super().__init__(...)``, ``super(C, self).__init__(...)`` or ``Base.__init__(self, ...)``
    as a statement of its own."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr)):
        return False
    call = stmt.body[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value != "__init__":
        return False
    owner = call.func.value
    if isinstance(owner, cst.Call) and code_of(owner.func) == "super":
        return True
    first = call.args[0].value if call.args and call.args[0].keyword is None and not call.args[0].star else None
    return isinstance(first, cst.Name) and first.value == me and isinstance(owner, (cst.Name, cst.Attribute))


def _may_reach_methods(stmt: Any, me: str) -> bool:
    """``stmt`` returns, calls a method on the instance, or hands the instance to a call: a
    ``super().__init__`` after it no longer moves the disabled scaler past it."""
    for node in walk(stmt):
        if isinstance(node, cst.Return) or (isinstance(node, cst.Name) and node.value == me):
            return True
    return False
