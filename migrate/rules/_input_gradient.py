"""A scaled backward run for the gradient of an input (adversarial training, APX268).

FGSM/PGD training backs the loss of a perturbed batch only to read the gradient of the
perturbation, a tensor the function makes itself (``delta = torch.zeros_like(X)``)::

    for _ in range(attack_iters):
        output = model(X + delta)
        loss = criterion(output, y)
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        grad = delta.grad.detach()
        delta.data = clamp(delta + alpha * torch.sign(grad), -epsilon, epsilon)
        delta.grad.zero_()
    ...
    opt.zero_grad()
    with amp.scale_loss(loss, opt) as scaled_loss:   # the training step's own backward
        scaled_loss.backward()
    opt.step()

apex never touched ``delta.grad`` (no parameter of the optimizer): it stays multiplied by
the loss scale, as after ``scaler.scale(loss).backward()``.  The parameters' gradients this
backward leaves are scaled by the GradScaler's current scale; the scale changes only at
``scaler.update()`` after a step, so the next ``scaler.step`` unscales them with the scale
they were made with, if a ``zero_grad`` has not dropped them first (apex had unscaled them at
the block's exit: the same values either way).

What differs is apex's dynamic scaler: it counted every ``amp.scale_loss`` exit (growth after
2000 of them, not 2000 steps) and, when this backward overflowed, halved the scale and
skipped the next ``optimizer.step()``; a GradScaler checks only at ``scaler.step``.  So the
scale runs another course: the sign of the gradient does not see it, its size does.  A
backward whose input gradients are only read through ``torch.sign`` is rewritten with a
warning (APX268); one whose gradient's size is used is refused (the file stays on the shim,
which keeps apex's course).  A backward the optimizer's step follows before any other
backward or ``zero_grad`` is an ordinary training backward (one exit per step, the same
course as apex), not this shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Set

import libcst as cst

from ._edits import code_of
from ._fresh_tensor import holds_fresh_tensors
from ._tree import walk, walk_of

#: the calls that read only the sign of a tensor
_SIGN_FUNCTIONS = frozenset({"torch.sign"})
#: methods that hand on the values of a tensor (its sign stays the sign of the gradient)
_KEEPING = frozenset({"detach", "clone", "data", "contiguous"})
#: methods of the gradient that only clear it
_CLEARING = frozenset({"zero_", "detach_"})


@dataclass(frozen=True)
class InputGradient:
    """What the tool knows of a scaled backward that backs an input's gradient."""

    #: the tensors made in the function whose ``.grad`` it reads (``("delta",)``)
    tensors: List[str]
    #: the optimizer's step follows before another backward or ``zero_grad``
    stepped: bool
    #: the first read of such a gradient beyond its sign (its code), "" when there is none
    magnitude: str


def input_gradient(rule: Any, site: Any) -> Optional[InputGradient]:
    """The shape above for ``site`` (a ``ScaleLossSite`` whose block only runs
    ``<scaled>.backward()``); None when its function reads no gradient of a tensor it
    makes."""
    func = site.func
    if not isinstance(func, cst.FunctionDef) or not _only_backward(site):
        return None
    tensors = sorted(
        {
            node.value.value
            for node in walk_of(func.body, cst.Attribute)
            if node.attr.value == "grad" and type(node.value) is cst.Name
        }
    )
    tensors = [t for t in tensors if holds_fresh_tensors(func, t, rule.qualified_names)]
    if not tensors:
        return None
    return InputGradient(
        tensors=tensors,
        stepped=_stepped_next(rule, site),
        magnitude=_magnitude_use(rule, func, set(tensors)),
    )


def input_gradient_refusal(shape: InputGradient) -> str:
    """Why a backward for an input's gradient whose size is used keeps apex.amp."""
    return (
        f"the gradient of {', '.join(shape.tensors)} this amp.scale_loss backs is used beyond its sign "
        f"({shape.magnitude}): it stays multiplied by the loss scale, and apex's dynamic scale counted this "
        "backward (no optimizer step follows it), a GradScaler's does not, so the two scales and the size it "
        "reads part ways"
    )


def _only_backward(site: Any) -> bool:
    """The block is one ``<as>.backward()`` with no arguments."""
    body = site.with_stmt.body.body if isinstance(site.with_stmt.body, cst.IndentedBlock) else []
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    expr = body[0].body[0]
    return (
        isinstance(expr, cst.Expr)
        and isinstance(expr.value, cst.Call)
        and not expr.value.args
        and code_of(expr.value.func) == f"{site.as_name}.backward"
    )


def _stepped_next(rule: Any, site: Any) -> bool:
    """Whether a step of the site's optimizers is the next gradient event after the block:
    before any other backward or ``zero_grad``, on the way out of the blocks that hold it; a
    loop holding the block and no step runs the block again first."""
    opts = {code_of(o) for o in site.optimizers}
    parents = rule.parents
    stmt: Any = site.with_stmt
    while stmt is not site.func:
        block = parents.get(stmt)
        owner = parents.get(block)
        if isinstance(owner, (cst.For, cst.While)) and not any(_is_step(n, opts) for n in walk(owner)):
            return False
        body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        for later in body[body.index(stmt) + 1:] if stmt in body else []:
            for node in walk(later):
                if _is_step(node, opts):
                    return True
                if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                    if node.func.attr.value in ("zero_grad", "backward", "scale_loss"):
                        return False
        stmt = owner
        while stmt is not None and stmt is not site.func and not isinstance(stmt, cst.BaseStatement):
            stmt = parents.get(stmt)
        if stmt is None:
            return False
    return False


def _is_step(node: cst.CSTNode, opts: Set[str]) -> bool:
    """``opt.step()``, or the ``scaler.step(opt)`` an earlier rule made of it."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute) or node.func.attr.value != "step":
        return False
    if code_of(node.func.value) in opts:
        return True
    return bool(node.args) and node.args[0].keyword is None and code_of(node.args[0].value) in opts


def _magnitude_use(rule: Any, func: cst.FunctionDef, tensors: Set[str]) -> str:
    """The first read (its code) of the gradient of one of ``tensors`` in ``func`` that is
    not only through its sign: ``torch.sign(grad)``, ``grad[idx].sign()``, a name given the
    gradient (``grad = delta.grad.detach()``) read only so, or a clearing of the gradient
    (``delta.grad.zero_()``); "" when every read is so."""
    tracked: Set[str] = set()
    grads = [
        n for n in walk(func.body)
        if isinstance(n, cst.Attribute) and n.attr.value == "grad" and isinstance(n.value, cst.Name)
        and n.value.value in tensors
    ]
    pending: List[cst.CSTNode] = list(grads)
    while pending:
        node = pending.pop()
        verdict = _sign_only(rule, node)
        if isinstance(verdict, str):
            if verdict in tracked:
                continue
            tracked.add(verdict)
            pending.extend(_loads(rule, func, verdict))
        elif not verdict:
            return _read_text(rule, node)
    return ""


def _read_text(rule: Any, node: cst.CSTNode) -> str:
    """The code of the small statement holding a read (``pert = fgsm(noise_batch.grad, 0.1)``),
    without the comments above it."""
    cur: Any = node
    while cur is not None and not isinstance(rule.parents.get(cur), cst.SimpleStatementLine):
        if isinstance(cur, cst.BaseCompoundStatement):
            break
        cur = rule.parents.get(cur)
    text = code_of(cur if cur is not None else node).strip()
    return text.splitlines()[0] if text else code_of(node)


def _widest(rule: Any, node: cst.CSTNode) -> cst.CSTNode:
    """``node`` with the value-keeping wrappers around it (``delta.grad.detach()``)."""
    while True:
        parent = rule.parents.get(node)
        if _keeps(rule, node, parent):
            node = rule.parents[parent] if isinstance(parent, cst.Attribute) and isinstance(
                rule.parents.get(parent), cst.Call) else parent
            continue
        return node


def _keeps(rule: Any, node: cst.CSTNode, parent: Any) -> bool:
    """``parent`` hands on the values of ``node``: ``node[idx]``, ``node.detach()``,
    ``node.data``."""
    if isinstance(parent, cst.Subscript) and parent.value is node:
        return True
    return isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _KEEPING


def _sign_only(rule: Any, node: cst.CSTNode) -> Any:
    """For a read ``node`` of the gradient: True when only its sign is used or it is cleared,
    the name (a str) when the whole read is assigned to a plain name, False otherwise."""
    parents = rule.parents
    if isinstance(parents.get(node), (cst.AssignTarget, cst.Del)):
        return True  # ``delta.grad = None``: clears it
    node = _widest(rule, node)
    parent = parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value in _CLEARING:
        call = parents.get(parent)
        if isinstance(call, cst.Call) and call.func is parent and not call.args:
            return True  # ``delta.grad.zero_()``
    if isinstance(parent, cst.Arg) and parent.keyword is None:
        call = parents.get(parent)
        if isinstance(call, cst.Call) and len(call.args) == 1 and rule.qualified_names(call.func) & _SIGN_FUNCTIONS:
            return True
    if isinstance(parent, cst.Attribute) and parent.value is node and parent.attr.value == "sign":
        call = parents.get(parent)
        return isinstance(call, cst.Call) and call.func is parent and not call.args
    if isinstance(parent, cst.Assign) and parent.value is node and len(parent.targets) == 1:
        target = parent.targets[0].target
        if isinstance(target, cst.Name):
            return target.value
    return False


def _loads(rule: Any, func: cst.FunctionDef, name: str) -> List[cst.Name]:
    """The reads of variable ``name`` in ``func`` (every one: another binding of the name is
    read the same way, which only errs towards a refusal)."""
    found: List[cst.Name] = []
    for node in walk(func.body):
        if not isinstance(node, cst.Name) or node.value != name:
            continue
        parent = rule.parents.get(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            continue  # ``delta.grad``: an attribute's name
        if isinstance(parent, cst.Arg) and parent.keyword is node:
            continue  # ``f(grad=...)``: a keyword
        if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For)) and parent.target is node:
            continue  # a binding, not a read
        found.append(node)
    return found
