"""Apex availability probes stay where another file of the run still needs apex.

``try: from apex.normalization import FusedLayerNorm  # noqa`` then ``apex_avail = True``,
``except ImportError: apex_avail = False``: the import only asks whether apex is installed.
The imports rule folds such a guard to its "available" value, which is right once nothing
needs apex.  Where some file still imports apex for real after the run (a kernel with no
torch equivalent: ColossalAI's ``FusedRMSNorm`` wrapper, ``FastLayerNorm``), the flag may be
what keeps that file's apex path from running without apex (ColossalAI's
``enable_fused_normalization = apex_avail`` picks the apex RMSNorm for Qwen2): folded, a
machine without apex would crash there.  So the run migrates each file whose probe it
folded once more with the probe kept (APX105), naming the file that still needs apex.

A probe here is a ``try`` whose apex imports bind names that nothing in the module reads and
whose handlers set a name to a constant that something reads (the module, or another file of
the run for a module-level flag); one of apex.amp alone is none (what it asks about, autocast
and the GradScaler, the native code always has), nor one whose flag nothing reads.  An apex import "needed" by a migrated file is one
whose name the file reads (or a star import); an unread one is itself a probe.  Pure data
from the stdlib ``ast``.
"""

from __future__ import annotations

import ast
import re
from typing import Callable, Dict, Iterable, List, Optional, Set, Tuple

from . import stdlib_trees

#: the top-level modules that only an apex installation provides
APEX_MODULES = frozenset({"apex", "amp_C", "apex_C"})

#: the code of a folded guard (``rules.imports``)
FOLDED = "APX103"


def _apex_import(node: ast.AST) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.split(".")[0] in APEX_MODULES for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level == 0 and (node.module or "").split(".")[0] in APEX_MODULES
    return False


def _amp_import(node: ast.AST) -> bool:
    """``from apex import amp``, ``import apex.amp``, ``from apex.amp import ...``: a probe of
    apex.amp asks what the native code always has (autocast and the GradScaler)."""
    if isinstance(node, ast.Import):
        return all(alias.name == "apex.amp" or alias.name.startswith("apex.amp.") for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return module == "apex.amp" or module.startswith("apex.amp.") or (
            module == "apex" and all(alias.name == "amp" for alias in node.names))
    return False


def _bound(node: ast.AST) -> List[str]:
    """The names an apex import binds (``*`` for a star import)."""
    names = []
    for alias in node.names:  # type: ignore[attr-defined]
        if alias.name == "*":
            names.append("*")
        elif isinstance(node, ast.Import):
            names.append(alias.asname or alias.name.split(".")[0])
        else:
            names.append(alias.asname or alias.name)
    return names


def _read_names(tree: ast.Module) -> Set[str]:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}


def _flags(handler: ast.ExceptHandler) -> List[str]:
    """The names ``handler`` sets to a constant (``has_apex = False``)."""
    return [
        target.id
        for stmt in handler.body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Constant)
        for target in stmt.targets
        if isinstance(target, ast.Name)
    ]


def probe_lines(source: bytes, named_elsewhere: Callable[[str], bool] = lambda name: False) -> Tuple[int, ...]:
    """The lines of ``source``'s ``try`` statements that only probe for apex (see above) and
    whose flag something reads: the module, or (a module-level flag) another file that
    ``named_elsewhere`` says names it."""
    tree = stdlib_trees.parse(source)
    if tree is None:
        return ()
    read = _read_names(tree)
    top = {id(stmt) for stmt in tree.body}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not node.handlers:
            continue
        imports = [stmt for stmt in node.body if _apex_import(stmt)]
        if not imports or all(_amp_import(stmt) for stmt in imports):
            continue
        if any(name == "*" or name in read for stmt in imports for name in _bound(stmt)):
            continue
        flags = [flag for handler in node.handlers for flag in _flags(handler)]
        if any(flag in read or (id(node) in top and named_elsewhere(flag)) for flag in flags):
            lines.append(node.lineno)
    return tuple(lines)


def needed_apex_import(source: bytes) -> Optional[int]:
    """The line of the first apex import of ``source`` whose names the module reads; None
    where it has none (or cannot be parsed: the run reported that already)."""
    tree = stdlib_trees.parse(source)
    if tree is None:
        return None
    read = None
    for node in ast.walk(tree):
        if _apex_import(node):
            read = _read_names(tree) if read is None else read
            if any(name == "*" or name in read for name in _bound(node)):
                return node.lineno
    return None


def first_needing_apex(results: Iterable[Tuple[str, bytes]]) -> Optional[str]:
    """``path:line`` of the first migrated text (shown path, new bytes) that still needs
    apex, in the order given; None where none does."""
    for shown, new in results:
        if b"apex" in new or b"amp_C" in new:
            line = needed_apex_import(new)
            if line is not None:
                return f"{shown}:{line}"
    return None


def folded_probes(
    old: bytes, folded_lines: Iterable[int], named_elsewhere: Callable[[str], bool] = lambda name: False
) -> Tuple[int, ...]:
    """The probes of ``old`` that the run folded (an APX103 finding at their ``try``)."""
    folded = set(folded_lines)
    return tuple(line for line in probe_lines(old, named_elsewhere) if line in folded) if folded else ()


def _takes(source: bytes, name: str) -> bool:
    """Whether ``source`` may take module-level ``name`` from another module: an import line
    naming it, an attribute of that name, or the bare name beside a star import."""
    word = re.escape(name.encode())
    if re.search(rb"(?m)^[^#\n]*\bimport\b[^#\n]*\b" + word + rb"\b|\." + word + rb"\b", source):
        return True
    return re.search(rb"(?m)^[^#\n]*\bimport\s+\*", source) is not None and re.search(rb"\b" + word + rb"\b", source) is not None


def reruns(files: List[Tuple[str, bytes, bytes, List[int]]]) -> Dict[int, Tuple[Tuple[int, ...], str]]:
    """For the run's files (shown path, old bytes, new bytes, lines of their APX103
    findings): index -> (the probes to keep, where apex is still needed), for each file
    whose folded probe must stay; empty where no file still needs apex."""
    candidates = {}
    for i, (_shown, old, _new, folded) in enumerate(files):
        if not folded:
            continue

        def named_elsewhere(flag: str, i: int = i) -> bool:
            return any(_takes(other, flag) for j, (_s, other, _n, _f) in enumerate(files) if j != i)

        probes = folded_probes(old, folded, named_elsewhere)
        if probes:
            candidates[i] = probes
    if not candidates:
        return {}
    where = first_needing_apex((shown, new) for shown, _old, new, _folded in files)
    if where is None:
        return {}
    return {i: (probes, where) for i, probes in candidates.items()}
