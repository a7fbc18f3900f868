"""The plan's fact for the probe gate (``rules/_amp_probe_gate``): the top-level functions that
ask apex's global state whether ``amp.initialize`` has run, which no other walked file uses,
in a repository that enables no autocast of its own.

cvpods' ``apex_wrapper.is_amp_training()`` is ``hasattr(amp._amp_state, "loss_scalers")``;
its one use is the test of its ``float_function`` decorator (``if is_amp_training(): return
amp.float_function(func)(...)``).  Natively the decorator casts only while autocast is on, and
autocast is on only where the migrated code turns it on with its GradScaler, that is where apex
had been initialized: the test adds nothing, and the probe, which has no native answer, goes
with it.  That holds only when no walked file turns autocast on by itself (its text names no
``autocast``) and no other walked file names the probe but to re-export it (``from
.apex_wrapper import float_function, is_amp_training`` on one line of a package's
``__init__``): such an import loses the name, by the edit made here, once the probe's file
came out native (``pipeline``).  Pure data, from the walked files' text.
"""

from __future__ import annotations

import ast
import os
import re
from typing import Dict, List, Optional, Tuple

from . import stdlib_trees
from .holder_route import HolderEdit, physical_lines
from .walk import imports_apex

STATE = b"_amp_state"


def probe_gates(indexed: Dict[str, bytes], files: Dict[str, Tuple[str, bytes]]):
    """(path -> the names of its top-level functions reading ``_amp_state`` that may go, path
    -> the edits of the files re-exporting them); ``indexed``: the files with apex.amp,
    ``files``: every walked file (shown path, bytes)."""
    probing = {path: source for path, source in indexed.items() if STATE in source}
    if not probing or any(b"autocast" in source for _shown, source in files.values()):
        return {}, {}
    found: Dict[str, Tuple[str, ...]] = {}
    edits: Dict[str, List[HolderEdit]] = {}
    for path, source in sorted(probing.items()):
        tree = stdlib_trees.parse(source)
        if tree is None:
            continue
        names, mine = [], []
        for stmt in tree.body:
            if not isinstance(stmt, ast.FunctionDef) or not any(
                    isinstance(n, ast.Attribute) and n.attr == "_amp_state" for n in ast.walk(stmt)):
                continue
            word = re.compile(rb"\b" + re.escape(stmt.name.encode()) + rb"\b")
            naming = [other for other, (_shown, text) in files.items() if other != path and word.search(text)]
            reexports = [_reexport_edit(other, files[other], path, stmt.name) for other in naming]
            if all(e is not None for e in reexports):
                names.append(stmt.name)
                mine.extend(e for e in reexports if e is not None)
        if names:
            found[path] = tuple(names)
            edits[path] = mine
    return found, edits


def _reexport_edit(path: str, file: Tuple[str, bytes], probe_path: str, name: str) -> Optional[HolderEdit]:
    """The edit dropping ``name`` from the one module-level ``from <probe's module> import ...``
    of ``path`` that names it, on one line of its own with other names; None when ``path``
    names it otherwise."""
    shown, source = file
    tree = stdlib_trees.parse(source)
    text = stdlib_trees.decoded(source)
    if tree is None or text is None or imports_apex(source):
        return None
    word = re.compile(r"\b" + re.escape(name) + r"\b")
    lines = [line.rstrip("\r\n") for line in physical_lines(text)]
    hits = [i for i, line in enumerate(lines, 1) if word.search(line)]
    found = [s for s in tree.body if isinstance(s, ast.ImportFrom) and any(a.name == name for a in s.names)]
    if len(hits) != 1 or len(found) != 1 or found[0].lineno != hits[0] or found[0].end_lineno != hits[0]:
        return None
    stmt = found[0]
    line = lines[stmt.lineno - 1]
    if not _resolves(path, stmt, probe_path) or "#" in line or ";" in line or "(" in line \
            or line[: stmt.col_offset].strip() or line[stmt.end_col_offset :].strip():
        return None
    kept = [a for a in stmt.names if a.name != name]
    if not kept or any(a.asname == name for a in stmt.names):
        return None
    names = ", ".join(a.name if a.asname is None else f"{a.name} as {a.asname}" for a in kept)
    new = f"{line[: stmt.col_offset]}from {'.' * stmt.level}{stmt.module or ''} import {names}"
    return HolderEdit(path, shown, "", "", name, "", ((stmt.lineno, stmt.lineno, (new,)),))


def _resolves(path: str, stmt: ast.ImportFrom, probe_path: str) -> bool:
    """Whether ``from <module> import`` in ``path`` names the module of ``probe_path``."""
    tail = (stmt.module or "").replace(".", "/")
    if stmt.level:
        base = os.path.dirname(path)
        for _ in range(stmt.level - 1):
            base = os.path.dirname(base)
        wanted = os.path.normpath(os.path.join(base, tail))
        return os.path.normpath(probe_path) in (wanted + ".py", os.path.join(wanted, "__init__.py"))
    return bool(tail) and (probe_path.endswith("/" + tail + ".py") or probe_path == tail + ".py")


def reexport_message(edit: HolderEdit, probe: str) -> str:
    return (f"{edit.attribute} is no longer imported from {probe}, which removed it (it asked apex's global state "
            "whether amp.initialize had run, only to gate a cast)")
