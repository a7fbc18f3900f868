"""A run-once guard around amp.initialize in a method: where the GradScaler can live.

``if not self.amp_ready: model, opt = amp.initialize(...); self.amp_ready = True`` runs the
initialize the first time only.  A GradScaler created after that ``if`` with its tests as
the switch would be created disabled (the flag has flipped by then), so the scaler is
created where the initialize was, inside the branch, enabled as apex was there.  Every
other path must still find one: the class's ``__init__`` creates a disabled scaler just
before it first sets the flag, the state in which apex had not initialized yet.  This
module proves that placement or says why not.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._edits import code_of
from ._tree import walk


def run_once_anchor(rule: Any, inits: List[Any], cls: cst.ClassDef) -> Tuple[Optional[cst.BaseStatement], str]:
    """The statement of ``cls.__init__`` before which a disabled scaler goes, for the one
    training initialize ``inits[0]`` under a run-once guard in a method of ``cls``; else
    None and why not."""
    from ._amp_sites import class_of_method, init_method, self_name, stale_flag

    if len(inits) != 1:
        return None, "amp.initialize is called for training more than once"
    site = inits[0]
    flag = stale_flag(rule.parents, site)
    method = site.func
    if flag is None or method is None:
        return None, ""
    me = self_name(method)
    if not (flag.startswith(f"{me}.") and flag[len(me) + 1 :].isidentifier()):
        return None, f"{flag} is not an attribute of {me}"
    attr = flag[len(me) + 1 :]
    init = init_method(cls)
    if init is None or class_of_method(rule.parents, init) is not cls:
        return None, f"{cls.name.value} has no __init__ that sets {flag}"
    body = list(init.body.body) if isinstance(init.body, cst.IndentedBlock) else []
    target = f"{self_name(init)}.{attr}"
    anchor = next((stmt for stmt in body if _sets(stmt, target)), None)
    if anchor is None:
        return None, f"{cls.name.value}.__init__ does not set {target} in its own body"
    for stmt in body[: body.index(anchor)]:
        for node in walk(stmt):
            if isinstance(node, cst.Return):
                return None, f"{cls.name.value}.__init__ may return before it sets {target}"
            if isinstance(node, cst.Call) and _on_self(node.func, self_name(init)):
                return None, f"{cls.name.value}.__init__ calls {code_of(node.func)}() before it sets {target}"
    return anchor, ""


def _sets(stmt: Any, target: str) -> bool:
    """``stmt`` is ``<target> = <value>`` on its own line."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Assign)
        and [code_of(t.target) for t in stmt.body[0].targets] == [target]
    )


def _on_self(func: cst.BaseExpression, me: str) -> bool:
    """A call of a method looked up on the instance (``self.build()``): it may reach a use
    of the scaler before the disabled one exists."""
    return isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == me
