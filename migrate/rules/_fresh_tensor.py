"""Whether a local name of a function only ever holds tensors made there (``delta =
torch.zeros_like(embeds)``, ``delta = (delta + step).detach()``), never an optimizer's
parameter.

Neither apex nor GradScaler unscales the gradient of such a tensor: apex unscaled the
gradients of the optimizers handed to ``amp.scale_loss``, GradScaler unscales those of the
optimizer given to ``unscale_``/``step``.  Its ``.grad`` reads the scaled gradient either
way (adversarial training divides it by the scale itself), so reading it needs no
``unscale_``."""

from __future__ import annotations

from typing import Callable, Set

import libcst as cst

from ._binding import param_names, target_binds
from ._tree import walk

#: torch functions that return a new tensor of their own
_FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros",
        "zeros_like",
        "ones",
        "ones_like",
        "empty",
        "empty_like",
        "full",
        "full_like",
        "rand",
        "rand_like",
        "randn",
        "randn_like",
        "randint",
        "randint_like",
        "tensor",
    )
)
#: ``Variable(t, requires_grad=True)``: a tensor object of its own (sharing ``t``'s storage),
#: never the parameter ``t`` is, with a ``.grad`` of its own
_WRAPPERS = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})
#: methods whose result is a tensor distinct from any parameter, whatever they are called on
_DETACHING = frozenset({"detach"})
#: methods that return their receiver or a copy of it: fresh when the receiver is
_KEEPING = frozenset({"requires_grad_", "to", "cuda", "float", "half", "clone", "contiguous", "uniform_", "normal_"})


def _fresh(value: cst.BaseExpression, qualified: Callable[[cst.CSTNode], Set[str]]) -> bool:
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if qualified(func) & (_FACTORIES | _WRAPPERS):
        return True
    if isinstance(func, cst.Attribute):
        if func.attr.value in _DETACHING:
            return True
        if func.attr.value in _KEEPING:
            return _fresh(func.value, qualified)
    return False


def holds_fresh_tensors(func: cst.FunctionDef, name: str, qualified: Callable[[cst.CSTNode], Set[str]]) -> bool:
    """Whether every binding of ``name`` in ``func`` (nested scopes counted too) is a plain
    assignment of a tensor made there, with at least one such, ``name`` not a parameter,
    ``global`` or ``nonlocal``, and no ``add_param_group`` call in ``func`` that could hand
    it to an optimizer."""
    if name in param_names(func.params):
        return False
    assigned = False
    for node in walk(func.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)) and any(n.name.value == name for n in node.names):
            return False
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value == "add_param_group":
                return False
        if isinstance(node, cst.Assign) and any(target_binds(t.target, name) for t in node.targets):
            if not all(isinstance(t.target, cst.Name) for t in node.targets) or not _fresh(node.value, qualified):
                return False
            assigned = True
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)) and target_binds(node.target, name):
            return False
        elif isinstance(node, (cst.For, cst.CompFor)) and target_binds(node.target, name):
            return False
        elif isinstance(node, cst.AsName) and target_binds(node.name, name):
            return False
        elif isinstance(node, cst.NamedExpr) and target_binds(node.target, name):
            return False
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)) and node.name.value == name:
            return False
    return assigned

