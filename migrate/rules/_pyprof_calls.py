"""apex.pyprof used only to switch its profiler annotations on: the statements that do it.

``from apex import pyprof`` then ``pyprof.nvtx.init()`` (or ``pyprof.init()``,
``pyprof.nvtx.wrap(module, "fn")``) patched torch's functions to push NVTX ranges naming
each op and its arguments, for nvprof / Nsight Systems.  That changes nothing a training
step computes, so the native rewrite may delete the import with those calls (the imports
rule does, with a warning saying what the profile loses and torch's equivalent).  Any other
use of the name (read as a value, called for a result, an argument that calls something)
keeps them all.
"""

from __future__ import annotations

from typing import Any, List, Optional

import libcst as cst

from ._amp_carrier import is_reference
from ._edits import code_of
from ._tree import walk

#: the attribute paths after the module's name whose calls only switch annotations on
_SWITCHES = {"init", "nvtx.init", "wrap", "nvtx.wrap"}

#: the warning the imports rule gives where it deletes them
PYPROF_REMOVED = (
    "apex.pyprof (no longer part of apex) only annotated the profiler's NVTX ranges, so its import and the calls "
    "switching it on are deleted: training is unchanged; a profile loses the per-op ranges with argument shapes "
    "it added: torch.autograd.profiler.emit_nvtx(record_shapes=True) around the profiled steps gives them natively"
)


def annotation_switches(scope: cst.CSTNode, parents: Any, binding: str, imports: List[cst.CSTNode]) -> Optional[List[cst.CSTNode]]:
    """The statement lines under ``scope`` that only call ``binding``'s annotation switches,
    when every other reference to ``binding`` there is one of ``imports``; else None."""
    inside_imports = {id(n) for imp in imports for n in walk(imp)}
    lines: List[cst.CSTNode] = []
    for node in walk(scope):
        if not isinstance(node, cst.Name) or node.value != binding or id(node) in inside_imports:
            continue
        if not is_reference(parents, node):
            continue
        line = _switch_line(node, parents)
        if line is None:
            return None
        lines.append(line)
    return lines


def _switch_line(name: cst.Name, parents: Any) -> Optional[cst.CSTNode]:
    """The line ``name.<switch>(...)`` that ``name`` starts, alone on its line, with
    arguments that call nothing; else None."""
    chain: cst.CSTNode = name
    while isinstance(parents.get(chain), cst.Attribute) and parents.get(chain).value is chain:
        chain = parents.get(chain)
    call = parents.get(chain)
    if chain is name or not isinstance(call, cst.Call) or call.func is not chain:
        return None
    if code_of(chain).split(".", 1)[1] not in _SWITCHES:
        return None
    if any(isinstance(n, (cst.Call, cst.Await, cst.NamedExpr, cst.Yield)) for a in call.args for n in walk(a)):
        return None
    expr = parents.get(call)
    line = parents.get(expr)
    if not isinstance(expr, cst.Expr) or not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
        return None
    return line
