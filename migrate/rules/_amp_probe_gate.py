"""A probe of whether apex was initialized that only gates a casting decorator (cvpods'
``apex_wrapper``), with what ``probe_gate_plan`` proved across the repository.

The probe is a top-level function whose body is ``return hasattr(amp._amp_state, "...")``,
bare or as ``try: <that> except Exception: return False``; every use of it in its file is the
test of ``if probe(): return amp.float_function(fn)(*args, **kwargs) else: return
fn(*args, **kwargs)`` (``half_function`` alike).  Natively ``autocast_function`` casts only while
autocast is on, which in this repository only the migrated code turns on, with the GradScaler
that stands for the initialize: the gate's two branches agree wherever the test was false, so
the ``if`` becomes its first branch and the probe is removed.
"""

from __future__ import annotations

from typing import Any, List, Optional

import libcst as cst

from ._edits import code_of
from ._tree import walk

CASTERS = ("float_function", "half_function")


def probe_gate(parents: Any, module: cst.Module, state_ref: Any, refs: List[Any], plan: Any) -> Optional[Any]:
    """(the probe's def, the gating ifs) when ``state_ref`` (``amp._amp_state``) is read by such
    a probe the plan lets go, else None."""
    if plan is None or not plan.probe_gates:
        return None
    probe = state_ref
    while probe is not None and not isinstance(probe, cst.FunctionDef):
        probe = parents.get(probe)
    if probe is None or parents.get(probe) is not module or probe.name.value not in plan.probe_gates:
        return None
    if not _probe_body(probe, state_ref, parents):
        return None
    name = probe.name.value
    casters = {id(r.expr) for r in refs if r.member in CASTERS}
    gates = []
    for node in walk(module):
        if not isinstance(node, cst.Name) or node.value != name or node is probe.name:
            continue
        call = parents.get(node)
        gate = parents.get(call)
        if not (isinstance(call, cst.Call) and call.func is node and not call.args and isinstance(gate, cst.If)
                and gate.test is call and _gated(gate, casters)):
            return None
        gates.append(gate)
    return (probe, gates) if gates else None


def _probe_body(probe: cst.FunctionDef, state_ref: Any, parents: Any) -> bool:
    body = list(probe.body.body) if isinstance(probe.body, cst.IndentedBlock) else []
    if body and _docstring(body[0]):
        body = body[1:]
    if len(body) != 1:
        return False
    stmt = body[0]
    if isinstance(stmt, cst.Try):
        handlers = stmt.handlers
        if stmt.orelse is not None or stmt.finalbody is not None or len(handlers) != 1:
            return False
        caught = handlers[0]
        if caught.type is None or code_of(caught.type) != "Exception" or caught.name is not None:
            return False
        back = _only_return(caught.body)
        if back is None or code_of(back).strip() != "False":
            return False
        tried = list(stmt.body.body)
        if len(tried) != 1:
            return False
        stmt = tried[0]
    value = _only_return_line(stmt)
    if not (isinstance(value, cst.Call) and code_of(value.func) == "hasattr" and len(value.args) == 2):
        return False
    return value.args[0].value is state_ref and isinstance(value.args[1].value, cst.SimpleString)


def _gated(gate: cst.If, casters: set) -> bool:
    """``return <amp caster>(fn)(args) else: return fn(args)`` under ``gate``."""
    cast = _only_return(gate.body)
    orelse = gate.orelse
    plain = _only_return(orelse.body) if isinstance(orelse, cst.Else) else None
    if not (isinstance(cast, cst.Call) and isinstance(cast.func, cst.Call) and isinstance(plain, cst.Call)):
        return False
    wrap = cast.func
    if id(wrap.func) not in casters or len(wrap.args) != 1 or wrap.args[0].keyword is not None:
        return False
    fn = wrap.args[0].value
    return code_of(plain.func) == code_of(fn) and [code_of(a) for a in plain.args] == [code_of(a) for a in cast.args]


def _only_return(block: Any) -> Optional[Any]:
    stmts = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.SimpleStatementSuite)) else []
    if len(stmts) != 1:
        return None
    if isinstance(block, cst.SimpleStatementSuite):
        only = stmts[0]
        return only.value if isinstance(only, cst.Return) else None
    return _only_return_line(stmts[0])


def _only_return_line(stmt: Any) -> Optional[Any]:
    if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Return):
        return stmt.body[0].value
    return None


def _docstring(stmt: Any) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr) \
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
