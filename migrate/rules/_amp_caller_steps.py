"""The caller-step route in the files it joins (``caller_step_plan``).

In the helper's file: a backward helper of the plan's ``stepped_at_callers`` scales the loss
its launchers hand it, for the optimizer they hand it, and they step it.  The route is proven
here only for a helper whose body is that backward alone::

    def backward(loss, opt, half_prec):
        if half_prec:
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

(nothing after the backward may read the gradients, which a GradScaler keeps scaled until
the step).  The plain branch becomes ``scaler.scale(loss).backward()``: the launcher's step
goes through the GradScaler on every path, and a disabled GradScaler's ``scale`` is the
identity, so the branch trains as before whatever its switch is.

In a launcher: each call of such a helper is a statement of its own, followed by the step of
the optimizer it hands over, before any other statement but a gradient clip (which gets a
``scaler.unscale_(opt)`` before it), either right after it or first in the ``if`` right after
it (a gradient-accumulation boundary: several scaled backwards add up before one step, as
natively; nothing after that ``if`` in the block may use the gradients, which stay scaled on
the iterations that do not step).  Anything else between the call and the step may read the gradients or back
another loss; that call keeps the whole plan on the shim, saying so.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import libcst as cst

from ._clip_functions import CLIP_FUNCTIONS
from ._edits import code_of
from ._tree import walk

#: the words a refusal of the route starts with
ROUTE = "the GradScaler could reach {helper}() of {where}, which scales the loss {caller} hands it, but "


def stepped_helper(plan: Any, func: Any, parents: Any) -> Optional[Tuple[str, ...]]:
    """The launchers (shown paths) whose calls step after the top-level function ``func``,
    a helper of the plan's caller-step route; None when it is none."""
    if plan is None or not isinstance(func, cst.FunctionDef) or not isinstance(parents.get(func), cst.Module):
        return None
    return dict(plan.stepped_at_callers).get(func.name.value)


def helper_shape(site: Any) -> Union[str, Optional[cst.Call]]:
    """For a site of a ``stepped_helper``: why its body is not the backward alone (a str), or
    the plain ``<loss>.backward()`` of the branch that does not scale (None: no such branch)."""
    func = site.func
    body = [s for s in func.body.body if not _is_docstring(s)]
    words = (
        f"{func.name.value}() does more than that backward (the tool follows its callers' steps only for a helper "
        "whose body is `with amp.scale_loss(...)` alone or under `if <switch>:` with `else: <loss>.backward()`)"
    )
    if not _only_scaled_backward(site):
        return words
    if body == [site.with_stmt]:
        return None
    if len(body) != 1 or not isinstance(body[0], cst.If):
        return words
    branch = body[0]
    if list(branch.body.body) != [site.with_stmt]:
        return words
    if branch.orelse is None:
        return None
    plain = branch.orelse.body.body if isinstance(branch.orelse, cst.Else) else ()
    call = _plain_backward(plain[0]) if len(plain) == 1 else None
    if call is None or code_of(call.func.value) != code_of(site.loss):  # type: ignore[attr-defined]
        return words
    return call


def _is_docstring(stmt: Any) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _only_scaled_backward(site: Any) -> bool:
    """The block is one ``<as>.backward()`` with no arguments."""
    block = site.with_stmt.body
    body = block.body if isinstance(block, cst.IndentedBlock) else []
    if len(body) != 1:
        return False
    call = _plain_backward(body[0])
    return call is not None and site.as_name is not None and code_of(call.func) == f"{site.as_name}.backward"


def _plain_backward(stmt: Any) -> Optional[cst.Call]:
    """``x.backward()`` as a statement of its own (no arguments), else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return None
    call = stmt.body[0].value
    if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "backward":
        return call if not call.args else None
    return None


#: what ``launcher_step`` finds: the step, the clips before it, the accumulation boundary
#: (the ``if`` right after the call that holds the step) or None
LauncherStep = Tuple[cst.Call, List[cst.Call], Optional[cst.If]]


def launcher_step(rule: Any, call: cst.Call, optimizer: str) -> Union[str, LauncherStep]:
    """The step of ``optimizer`` that the helper call ``call`` (a launcher's) reaches, with
    the clips between them and the accumulation boundary holding it; or why none is proven
    (the words after ``ROUTE``)."""
    parents = rule.parents
    holder = parents.get(call)
    line = parents.get(holder)
    here = f"{code_of(call).strip()} "
    if not (isinstance(holder, cst.Expr) and isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
        return here + "is not a statement of its own, so the step after it cannot be followed"
    block = parents.get(line)
    body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    later = body[body.index(line) + 1:] if line in body else []
    boundary = None
    if later and isinstance(later[0], cst.If) and later[0].orelse is None:
        boundary = later[0]  # an accumulation boundary right after the backward
        reader = next((stmt for stmt in later[1:] if _may_use_gradients(rule, stmt)), None)
        if reader is not None:
            read = code_of(reader).strip().splitlines()[0]
            return (
                here + f"is followed by its step only inside the `if` after it, and `{read}` after that `if` may "
                "use the gradients, which on the iterations that do not step a GradScaler keeps scaled (apex had "
                "unscaled them at every backward)"
            )
        later = list(boundary.body.body)
    clips: List[cst.Call] = []
    unscaled = False  # ``scaler.unscale_(opt)`` an earlier rule put before a clip
    for stmt in later:
        step = _step_of(stmt, optimizer)
        if step is not None:
            return step, [] if unscaled else clips, boundary
        if _step_of(stmt, optimizer, "unscale_") is not None:
            unscaled = True
            continue
        clip = _clip_of(rule, stmt)
        if clip is None:
            return (
                here + f"is followed by `{code_of(stmt).strip().splitlines()[0]}` before {optimizer}.step(): it may "
                "read the gradients or back another loss, which apex had unscaled and a GradScaler keeps scaled "
                "until the step (the tool proves the step right after the call, or after gradient clips only)"
            )
        clips.append(clip)
    return here + f"is not followed by {optimizer}.step() in its block (nor first in the `if` right after it)"


def _may_use_gradients(rule: Any, stmt: Any) -> bool:
    """Whether ``stmt`` reads or changes a ``.grad``, clips, or backs another loss."""
    for node in walk(stmt):
        if isinstance(node, cst.Attribute) and node.attr.value in ("grad", "backward"):
            return True
        if isinstance(node, cst.Call) and rule.qualified_names(node.func) & CLIP_FUNCTIONS:
            return True
    return False


def _step_of(stmt: Any, optimizer: str, unscale: str = "") -> Optional[cst.Call]:
    """``<optimizer>.step()`` as a statement of its own, else None; with ``unscale`` (a
    method name), ``<scaler>.<unscale>(<optimizer>)`` instead."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1 or not isinstance(stmt.body[0], cst.Expr):
        return None
    call = stmt.body[0].value
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute):
        return None
    if unscale:
        given = [code_of(a.value) for a in call.args if a.keyword is None]
        return call if call.func.attr.value == unscale and given == [optimizer] and len(call.args) == 1 else None
    if not call.args and call.func.attr.value == "step" and code_of(call.func.value) == optimizer:
        return call
    return None


def _clip_of(rule: Any, stmt: Any) -> Optional[cst.Call]:
    """A statement that only calls a clipping function of torch.nn.utils (its value may be
    kept: ``norm = clip_grad_norm_(...)``), that call; else None."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    value = small.value if isinstance(small, (cst.Expr, cst.Assign)) else None
    if not isinstance(value, cst.Call) or not rule.qualified_names(value.func) & CLIP_FUNCTIONS:
        return None
    if any(isinstance(n, cst.Call) for arg in value.args for n in walk(arg) if not _reads_parameters(n)):
        return None  # an argument that calls something besides ``model.parameters()``
    return value


def _reads_parameters(call: Any) -> bool:
    return isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "parameters"
