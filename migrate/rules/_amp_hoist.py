"""The GradScaler created before the calls that are handed it, when they come before the
``amp.initialize`` of their function.

A trainer's constructor may build the objects that scale the losses first and initialize
apex afterwards (``step = TrainingStep(opts, env)`` in a loop, then ``amp.initialize(nets +
steps, optimizers)``): the objects are handed the GradScaler where they are built, so it must
exist there.  Its arguments are the opt level and switches of the initialize and the guard of
the ``if`` around it, nothing apex computes; when nothing between the first such call and the
initialize rebinds what those arguments read, the GradScaler made before that call is the
one the initialize would have made.  Else the calls keep their blocker, with the name that
stands in the way.
"""

from __future__ import annotations

from typing import Any, List, Optional, Set, Tuple

import libcst as cst

from ._amp_device import device_type_at
from ._amp_setup_loop import option_values
from ._edits import code_of
from ._tree import assignment_targets, walk


def hoist_target(rule: Any, init: Any, early: List[Any]) -> Tuple[Optional[Any], str]:
    """The statement of ``init.anchor``'s block that holds the first of ``early`` (calls
    handed the GradScaler before the initialize), when the GradScaler may be created just
    before it; else None and why not (a call lies outside that block, or a name the
    GradScaler's arguments read is bound between that statement and the initialize)."""
    block = rule.parents.get(init.anchor)
    body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    if init.anchor not in body:
        return None, ""
    at = body.index(init.anchor)
    holders = [_statement_in(rule.parents, node, body) for node in early]
    if any(h is None or body.index(h) >= at for h in holders):
        return None, ""
    first = min(body.index(h) for h in holders)
    reads = _reads(init.call, init, device_type_at(rule, init.anchor, map(code_of, init.models)))
    between = body[first:at] + [init.anchor]
    bound: Set[str] = set()
    for stmt in between:
        for node in walk(stmt):
            if node is init.stmt:
                continue
            bound |= _bound_texts(node)
    clash = sorted({read for read in reads for name in bound if _overlaps(read, name)})
    if clash:
        return None, f"the GradScaler made before it would read {', '.join(clash)}, bound after it"
    return body[first], ""


def _statement_in(parents: Any, node: Any, body: List[Any]) -> Optional[Any]:
    cur = node
    while cur is not None and cur not in body:
        cur = parents.get(cur)
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            return None
    return cur


def _reads(call: cst.Call, init: Any, device: str) -> Set[str]:
    """The dotted names (``opt``, ``self.device``) the GradScaler's arguments read."""
    nodes: List[Any] = list(option_values(call)) + list(init.guards)
    try:
        nodes.append(cst.parse_expression(device))
    except cst.ParserSyntaxError:
        return {"<unparsed>"}
    found: Set[str] = set()
    for root in nodes:
        inner = {id(n.value) for n in walk(root) if isinstance(n, cst.Attribute)}
        inner |= {id(n.attr) for n in walk(root) if isinstance(n, cst.Attribute)}
        for n in walk(root):
            if isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in inner:
                found.add(_dotted(n))
    return found


def _dotted(node: Any) -> str:
    """``self.device`` of an attribute chain over names; the chain's root name else."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return _dotted(node.func) if isinstance(node, cst.Call) else "<expression>"
    return ".".join([node.value] + parts[::-1])


def _bound_texts(node: Any) -> Set[str]:
    """What ``node`` binds or writes into: assignment, loop, ``with ... as``, ``del``,
    import and definition targets; a subscript target (``self.env["x"] = 1``) writes its
    container."""
    targets: List[Any] = assignment_targets(node)
    if isinstance(node, cst.Del):
        targets = [node.target]
    elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return {node.name.value}
    elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
        return {
            code_of(a.asname.name) if a.asname else code_of(a.name).split(".")[0] for a in node.names
        }
    out: Set[str] = set()
    for target in targets:
        out |= _target_texts(target)
    return out


def _target_texts(target: Any) -> Set[str]:
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(_target_texts(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return _target_texts(target.value)
    if isinstance(target, cst.Subscript):
        return _target_texts(target.value)
    if isinstance(target, (cst.Name, cst.Attribute)):
        return {_dotted(target)}
    return {"<expression>"}


def _overlaps(read: str, bound: str) -> bool:
    return read == bound or read.startswith(bound + ".") or bound.startswith(read + ".")
