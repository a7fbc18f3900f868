"""Calls through a submodule a file imports by name: ``from pkg import hooks``, then
``hooks.OptimizationHook(...)``.

Such a call is as resolvable as one through ``import pkg.hooks as hooks``, but only where
``from pkg import hooks`` is proven to bind the submodule ``pkg/hooks.py``: Python first
reads the attribute ``hooks`` of the package, so a package whose ``__init__.py`` binds that
name itself (a def, a class, an assignment, an import of something else, a star import
that may bind it to anything but the submodule) would hand over that instead.  The index records these calls apart
(``ModuleSummary.submodule_calls``); the plan reads the proven ones as calls (``calls``).
Pure data from the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, Optional

from .repo_index import ModuleResolver, ModuleSummary
from .star_imports import BINDS, NOT_BOUND, StarImports


def binds_submodule(
    dotted: str,
    importer: str,
    resolver: ModuleResolver,
    raw: Callable[[str], Optional[ModuleSummary]],
    stars: StarImports,
) -> bool:
    """Whether ``from <package> import <name>`` (``dotted`` = ``package.name``) in
    ``importer`` binds the repository's submodule ``package.name``."""
    package, _dot, name = dotted.rpartition(".")
    if not package or resolver.resolve(dotted, importer) is None:
        return False
    init = resolver.resolve(package, importer)
    if init is None:
        # no __init__.py among the walked files: a namespace package binds nothing itself,
        # but a package several files answer to is not known
        return not resolver.candidates(package, importer)
    if not _may_name_the_submodule(raw(init), package, name):
        return False
    kind, source = stars.binder(init, name)
    if kind == NOT_BOUND:
        return True
    if kind != BINDS:
        return False
    # ``from .runner import *`` where runner.py did ``from . import hooks``: the same submodule
    target = resolver.resolve(source, init)
    exporter = raw(target) if target is not None else None
    return _may_name_the_submodule(exporter, package, name) and exporter is not None and (
        exporter.imports.get(name) == (package, name)
    )


def _may_name_the_submodule(summary: Optional[ModuleSummary], package: str, name: str) -> bool:
    """``summary`` binds ``name`` by nothing but an import of the submodule ``package.name``."""
    if summary is None or name in summary.functions | summary.classes | summary.module_bound:
        return False
    # ``from .hooks import hooks`` binds something else
    return summary.imports.get(name, (package, name)) == (package, name)


def with_submodule_calls(
    summary: ModuleSummary,
    resolver: ModuleResolver,
    raw: Callable[[str], Optional[ModuleSummary]],
    stars: StarImports,
) -> ModuleSummary:
    """``summary`` with its calls through a proven submodule among its ``calls``."""
    proven = [c for c in summary.submodule_calls if binds_submodule(c.module, summary.path, resolver, raw, stars)]
    return replace(summary, calls=summary.calls + proven) if proven else summary


def module_locals(summary: ModuleSummary, definitions, path: str) -> Dict[str, str]:
    """The names ``summary`` (of the file ``path``) binds to a module of the repository:
    ``import pkg.hooks as hooks`` and a proven ``from pkg import hooks`` alike, -> the module."""
    found: Dict[str, str] = {}
    for local, (module, attr) in summary.imports.items():
        dotted = f"{module}.{attr}" if attr else module
        if attr and not binds_submodule(dotted, path, definitions.resolver, definitions.raw, definitions.stars):
            continue
        if definitions.resolver.resolve(dotted, path) is not None:
            found[local] = dotted
    return found


def read_as_value(summary: ModuleSummary, local: str, name: str) -> bool:
    """``local.name`` is read other than as a callee somewhere in ``summary`` (``register(
    hooks.OptimizationHook)``): handed on, so its calls cannot all be followed."""
    return name in summary.attribute_reads.get(local, ()) and name in summary.attribute_values
