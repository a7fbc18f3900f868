"""Classes built through a module imported by name at run time.

A trainer factory may pick its class from the configuration::

    trainer_lib = importlib.import_module(cfg.trainer.type)
    trainer = trainer_lib.Trainer(cfg, net_G, net_D, opt_G, opt_D)

Which ``Trainer`` that builds depends on a string known only when the script runs, so no
route of the plan can follow the GradScaler into it.  The class may also be taken from the
module by name, ``getattr(import_module('loss.adversarial'), 'Adversarial')(args, ...)``
(DeepDeblur's loss factory): a build no route follows either, even with the module named by
a literal.  The reasons for a class that scales its losses but is never called directly name
such a build when it uses the class's name or the name of a class deriving from it.  Pure
data from the source text.
"""

from __future__ import annotations

import ast
from typing import Iterable, List, Optional, Set, Tuple

from . import stdlib_trees

#: the calls that import a module named by a value
_IMPORTERS = frozenset({"importlib.import_module", "import_module", "__import__"})
#: text one of them needs in a file (files without it are not walked)
RUNTIME_IMPORT_MARKERS = (b"import_module", b"__import__")


def _importer_call(node: Optional[ast.AST]) -> bool:
    """``node`` is ``importlib.import_module(...)`` (or ``import_module(...)``, ``__import__(...)``)."""
    return isinstance(node, ast.Call) and ast.unparse(node.func) in _IMPORTERS


def _built_name(func: ast.AST) -> Optional[Tuple[ast.AST, str, str]]:
    """(the module expression, the name, how it is spelled) of a build's callee ``m.Attr`` or
    ``getattr(m, "Attr")``; None for any other callee."""
    if isinstance(func, ast.Attribute):
        return func.value, func.attr, f"`.{func.attr}(...)`"
    if (
        isinstance(func, ast.Call)
        and isinstance(func.func, ast.Name)
        and func.func.id == "getattr"
        and len(func.args) == 2
        and isinstance(func.args[1], ast.Constant)
        and isinstance(func.args[1].value, str)
    ):
        name = func.args[1].value
        return func.args[0], name, f"`getattr(..., {name!r})(...)`"
    return None


def runtime_builds(tree: ast.Module) -> List[Tuple[int, str, str, str]]:
    """(line, top-level definition, attribute, its spelling) of each ``m.Attr(...)`` or
    ``getattr(m, "Attr")(...)`` in ``tree`` whose ``m`` is an imported module chosen at run
    time: ``importlib.import_module(...)`` itself, or a name the same definition binds from
    one."""
    found: List[Tuple[int, str, str, str]] = []
    for top in tree.body:
        owner = getattr(top, "name", "<module>")
        modules: Set[str] = set()
        for node in ast.walk(top):
            if isinstance(node, ast.Assign) and _importer_call(node.value):
                modules.update(t.id for t in node.targets if isinstance(t, ast.Name))
        for node in ast.walk(top):
            built = _built_name(node.func) if isinstance(node, ast.Call) else None
            if built is None:
                continue
            receiver, attr, spelling = built
            if _importer_call(receiver) or (isinstance(receiver, ast.Name) and receiver.id in modules):
                found.append((node.lineno, owner, attr, spelling))
    return sorted(found)


def runtime_build_of(
    names: Set[str],
    indexed: Iterable[Tuple[str, List[Tuple[int, str, str, str]]]],
    others: Iterable[Tuple[str, bytes]],
) -> Optional[Tuple[str, int, str, str, str]]:
    """Where one of ``names`` is built from a module imported by name at run time: among the
    indexed files' ``runtime_builds`` ((shown path, builds)), then the unindexed ``others``
    ((shown path, text)): (shown, line, definition, the name, its spelling); None where
    nowhere."""
    for shown, builds in indexed:
        for line, owner, attr, spelling in builds:
            if attr in names:
                return shown, line, owner, attr, spelling
    for shown, source in others:
        if not any(n.encode() in source for n in names) or not any(m in source for m in RUNTIME_IMPORT_MARKERS):
            continue
        tree = stdlib_trees.parse(source)
        for line, owner, attr, spelling in runtime_builds(tree) if tree is not None else ():
            if attr in names:
                return shown, line, owner, attr, spelling
    return None
