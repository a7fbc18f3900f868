"""Calls between the scaled backward and the step that may read the gradients (APX325).

apex unscaled the gradients when the ``amp.scale_loss`` block exited, so whatever ran
between the block and ``optimizer.step()`` saw them unscaled: a callback fired there
(transform-and-tell's ``self.handler.fire_event(Events.BACKWARD)``, whose handlers may clip),
a regularizer that reads them (``self.regularizer.update()``).  A GradScaler keeps them
scaled until ``scaler.step``, so such a call needs ``scaler.unscale_(optimizer)`` before it:
the clipping rule treats it as a gradient use of its own kind (``opaque``) and puts one
there where the step surely follows every backward (an ``unscale_`` then changes nothing
else, ``scaler.step`` skips and steps the same way).

A call is left alone where it does not reach the gradients: a builtin, a logging, timing or
profiling call (any method of a logger, writer or progress bar), a learning-rate scheduler's
method or a function named for setting the rate (``adjust_learning_rate``), a tensor read of
a value (``loss.item()``), a metric or meter handed only plain values
(``meter.update(loss.item(), n)``; not the model, an optimizer or ``self``), or a function or
method of the file whose body makes only such calls and reads no ``.grad`` and no
parameters.  Anything else is opaque.  The names are a judgement, not a proof; a call
wrongly taken as harmless keeps what the tool did before (no ``unscale_``), and one wrongly
taken as opaque only adds an ``unscale_`` that changes nothing.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Set

import libcst as cst

from ._edits import code_of
from ._tree import walk

#: builtins that neither keep nor reach a module's gradients
_BUILTINS = frozenset(
    {
        "print", "len", "float", "int", "str", "bool", "round", "abs", "min", "max", "sum", "isinstance",
        "hasattr", "getattr", "range", "enumerate", "zip", "list", "dict", "tuple", "set", "format", "repr",
        "type", "sorted", "any", "all", "divmod", "pow", "id",
    }
)
#: modules whose functions only log, time, format or profile
_HARMLESS_MODULES = ("logging.", "time.", "math.", "json.", "os.path.", "warnings.", "torch.cuda.nvtx.", "datetime.")
#: single functions of that kind
_HARMLESS_FUNCTIONS = frozenset(
    {
        "torch.distributed.get_rank", "torch.distributed.get_world_size", "torch.distributed.is_initialized",
        "torch.distributed.is_available", "torch.cuda.synchronize", "torch.cuda.max_memory_allocated",
        "torch.cuda.memory_allocated", "torch.isfinite", "torch.isnan", "torch.isinf",
    }
)
#: methods that read a value (a tensor's number, a container's item) or record plain values
_VALUE_METHODS = frozenset(
    {
        "item", "detach", "cpu", "numpy", "tolist", "size", "numel", "dim", "mean", "sum", "float", "half",
        "clone", "to", "view", "reshape", "append", "extend", "keys", "values", "items", "get", "format",
        "join", "split", "startswith", "endswith", "backward", "zero_grad",
        # a module's listings and mode switches (what reads the gradients of what they list is
        # a gradient use of its own: p.grad, a clip)
        "parameters", "named_parameters", "modules", "named_modules", "children", "named_children", "buffers",
        "train", "eval",
    }
)
#: words in a name that says it holds the model, an optimizer or the trainer itself
_HOLDER_WORDS = ("model", "net", "optim", "module", "self", "trainer", "engine", "runner")


def may_read_gradients(rule: Any, call: cst.Call, callee: Callable[[cst.Call], Optional[Any]], seen: Set[Any]) -> bool:
    """Whether ``call`` is opaque (see the module docstring); ``callee`` resolves a call to
    the same-file function or method it runs (None when it does not)."""
    func = call.func
    names = rule.qualified_names(func)
    if any(n.startswith(_HARMLESS_MODULES) or n in _HARMLESS_FUNCTIONS for n in names):
        return False
    if any(n.startswith("apex") for n in names):
        return False  # amp's own calls are rewritten by their rules
    if isinstance(func, cst.Name) and func.value in _BUILTINS and not (names - {f"builtins.{func.value}"}):
        return False
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in _VALUE_METHODS or _names_a_logger(func.value) or _sets_the_rate(method):
            return False
        if "sched" in code_of(func.value).lower():
            return False  # a learning-rate scheduler sets the rate in the param groups
    elif isinstance(func, cst.Name) and _sets_the_rate(func.value):
        return False
    body = callee(call)
    if body is not None:
        return _body_may_read(rule, body, callee, seen)
    return not (call.args and all(_plain_value(a.value) for a in call.args)) or _holder(func)


def _body_may_read(rule: Any, function: Any, callee: Callable[[cst.Call], Optional[Any]], seen: Set[Any]) -> bool:
    """A same-file function: it may read gradients when its body reads ``.grad`` or the
    parameters, or makes an opaque call (recursion stops at a function seen already)."""
    if function in seen:
        return False
    seen.add(function)
    for node in walk(function.body):
        if isinstance(node, cst.Attribute) and node.attr.value in ("grad", "parameters", "named_parameters", "param_groups"):
            return True
        if isinstance(node, cst.Call) and may_read_gradients(rule, node, callee, seen):
            return True
    return False


def _sets_the_rate(name: str) -> bool:
    """``adjust_learning_rate``, ``set_lr``, ``warmup_linear``: a name that says it sets or
    computes the learning rate."""
    words = name.lower().split("_")
    return "lr" in words or "learning" in words or any(w.startswith("warmup") for w in words)


def _names_a_logger(receiver: cst.BaseExpression) -> bool:
    text = code_of(receiver).lower()
    return any(word in text for word in ("log", "writer", "tb", "wandb", "pbar", "tqdm", "bar", "summary"))


def _holder(func: cst.BaseExpression) -> bool:
    """A method of the model, an optimizer or the trainer (``self.x(...)``): opaque whatever
    it is handed."""
    if not isinstance(func, cst.Attribute):
        return False
    return any(word in code_of(func.value).lower() for word in _HOLDER_WORDS)


def _plain_value(node: cst.BaseExpression) -> bool:
    """A number, a string, a name or attribute that does not name the model, an optimizer or
    the trainer, a value read from one (``loss.item()``, ``len(x)``), or arithmetic of them."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(node, (cst.Name, cst.Attribute)):
        return not any(word in code_of(node).lower() for word in _HOLDER_WORDS)
    if isinstance(node, cst.BinaryOperation):
        return _plain_value(node.left) and _plain_value(node.right)
    if isinstance(node, cst.UnaryOperation):
        return _plain_value(node.expression)
    if isinstance(node, cst.Call):
        func = node.func
        if isinstance(func, cst.Name) and func.value in _BUILTINS:
            return all(_plain_value(a.value) for a in node.args)
        return isinstance(func, cst.Attribute) and func.attr.value in ("item", "size", "numel", "detach", "cpu")
    if isinstance(node, cst.Subscript):
        return _plain_value(node.value)
    return False


#: what a gradient use that may change the gradients says after its call (a pipeline that
#: finds it in a per-micro-step TODO keeps the file on the shim: as written the native
#: rewrite would change scaled gradients)
CHANGES_GRADIENTS = "which may change the gradients"


def gradient_access(call: cst.Call, callee: Callable[[cst.Call], Optional[Any]], readers: Set[str]) -> str:
    """How ``call`` surely reaches the gradients: ``"changes"`` when the same-file function or
    method it runs (or one that calls) writes ``.grad`` in place or assigns it, or when it
    calls through a name of ``readers`` (another file's function or class that reads
    ``.grad``: the cross-file plan's ``gradient_readers``, which does not tell reads from
    writes; yolov3-channel-and-layer-pruning's ``BNOptimizer.updateBN(...)`` adds the L1
    sparsity term to the BN weights' gradients); ``"reads"`` when it only reads ``.grad``;
    "" when neither is known (it may still be opaque).  Such a call is a gradient use, not
    merely an opaque one: where no ``unscale_`` can precede it, it needs a TODO."""
    root: Any = call.func
    while isinstance(root, cst.Attribute):
        root = root.value
    if isinstance(root, cst.Name) and root.value in readers:
        return "changes"
    return _access_in(callee(call), callee, set())


def _access_in(function: Any, callee: Callable[[cst.Call], Optional[Any]], seen: Set[Any]) -> str:
    if function is None or function in seen:
        return ""
    seen.add(function)
    found = ""
    for node in walk(function.body):
        if _writes_grad(node):
            return "changes"
        if isinstance(node, cst.Attribute) and node.attr.value == "grad" and not _is_autograd(node.value):
            found = found or "reads"
        elif isinstance(node, cst.Call):
            inner = _access_in(callee(node), callee, seen)
            if inner == "changes":
                return inner
            found = found or inner
    return found


def _is_autograd(node: Any) -> bool:
    """``torch.autograd`` (or ``autograd``): ``.grad`` off it is the function, no gradient."""
    return isinstance(node, (cst.Name, cst.Attribute)) and code_of(node).split(".")[-1] == "autograd"


def _is_grad(node: Any) -> bool:
    """``p.grad`` or ``p.grad.data`` (an item of either: ``p.grad[mask]``)."""
    while isinstance(node, cst.Subscript):
        node = node.value
    if isinstance(node, cst.Attribute) and node.attr.value == "data":
        node = node.value
    return isinstance(node, cst.Attribute) and node.attr.value == "grad" and not _is_autograd(node.value)


def _writes_grad(node: Any) -> bool:
    """An in-place method of a gradient (``p.grad.data.add_(...)``) or an assignment to one
    (``p.grad = ...``, ``p.grad[mask] *= 0``)."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        return method.endswith("_") and not method.startswith("_") and _is_grad(node.func.value)
    if isinstance(node, cst.AugAssign):
        return _is_grad(node.target)
    if isinstance(node, cst.Assign):
        return any(_is_grad(t.target) for t in node.targets)
    return False
