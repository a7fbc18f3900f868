"""``x.step()`` calls that step no optimizer other than those a loss is scaled for.

``_plain_backward`` keeps the plain backward of the branch that does not scale plain (with a
warning, APX256) where its function also steps something else plainly: scaled, its gradients
could reach another optimizer's parameters, which that step would update with the loss scale
still in them.  A ``.step()`` whose receiver updates no such parameters does not count:

* an lr scheduler: the receiver's name says so (``scheduler``, ``self.lr_sched``), or it is a
  name its function binds once, to ``torch.optim.lr_scheduler.X(...)`` or to a call of a class
  or factory whose name says so (BiSeNet's ``lr_schdr = WarmupPolyLrScheduler(optim, ...)``,
  ``get_linear_schedule_with_warmup(...)``): its step sets learning rates.  A name is trusted
  here as the receiver's always was, not proven;
* an object its function builds once, from constants, of a plain class of this file (no base
  but ``object``, no decorator, no metaclass) whose code reads no variable of the module, handed
  nothing but constants and the parameters of the optimizers the loss is scaled for (DLE-BERT's
  ``gradClipper = GradientClipper(max_grad_norm=1.0)`` and ``gradClipper.step(amp.master_params(
  optimizer))``): it holds no parameters of its own, so its step reaches only those, which the
  scaled branch hands it the same way.

Anything else counts: a receiver bound more than once, a parameter, an attribute (any code may
set it), an object built from the model, a class from another file (DeepDeblur's
``self.criterion``, a loss module built with the model and the optimizer).
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Sequence, Set

import libcst as cst
from libcst.helpers import get_full_name_for_node

from ._amp_sites import optimizer_params
from ._binding import param_names
from ._edits import code_of, same_expression
from ._tree import assignment_targets, children, walk

#: where torch's lr schedulers live: their ``step()`` sets the learning rates of an optimizer
_TORCH_SCHEDULERS = "torch.optim.lr_scheduler."


def names_scheduler(text: str) -> bool:
    """Whether a receiver or callee text reads as an lr scheduler (``lr_scheduler``, ``sched``)."""
    return "sched" in text.lower()


def steps_no_other_optimizer(rule: Any, call: cst.Call, func: Any, optimizers: Sequence[str]) -> bool:
    """Whether ``call`` (``<receiver>.step(...)`` in ``func``) provably updates no parameters
    but those of ``optimizers`` (the texts of the optimizers the loss is scaled for)."""
    receiver = call.func.value  # type: ignore[attr-defined]
    if names_scheduler(code_of(receiver)):
        return True
    if not isinstance(receiver, cst.Name) or func is None:
        return False
    value = _single_value(func, receiver.value)
    if value is None:
        return False
    callee = get_full_name_for_node(value.func) or ""
    if names_scheduler(callee.rsplit(".", 1)[-1]):
        return True
    if any(q.startswith(_TORCH_SCHEDULERS) for q in rule.qualified_names(value.func)):
        return True
    return (
        isinstance(value.func, cst.Name)
        and _plain_class(rule.tree, value.func.value) is not None
        and all(_constant(arg.value) for arg in value.args)
        and not any(arg.star for arg in value.args)
        and all(not arg.star and _given(arg.value, optimizers) for arg in call.args)
    )


def _single_value(func: cst.FunctionDef, name: str) -> Optional[cst.Call]:
    """The call ``name`` is bound to where ``func`` binds it once, by ``name = <call>``, and
    it is no parameter; None otherwise."""
    if name in param_names(func.params):
        return None
    values: List[Optional[cst.BaseExpression]] = []
    for node in walk(func.body):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if _binds(target.target, name):
                    alone = isinstance(target.target, cst.Name) and len(node.targets) == 1
                    values.append(node.value if alone else None)
        elif _binds_otherwise(node, name):
            values.append(None)
    if len(values) != 1 or not isinstance(values[0], cst.Call):
        return None
    return values[0]


def _binds(target: Any, name: str) -> bool:
    return any(isinstance(n, cst.Name) and n.value == name for n in walk(target))


def _binds_otherwise(node: Any, name: str) -> bool:
    """Whether ``node`` binds ``name`` other than by a plain assignment."""
    if not isinstance(node, cst.Assign) and any(_binds(t, name) for t in assignment_targets(node)):
        return True
    if isinstance(node, cst.AsName):  # import ... as, except ... as
        return _binds(node.name, name)
    if isinstance(node, cst.ImportAlias) and node.asname is None:
        return (get_full_name_for_node(node.name) or "").split(".")[0] == name
    if isinstance(node, (cst.Global, cst.Nonlocal)):
        return any(item.name.value == name for item in node.names)
    if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
        return node.name.value == name
    if isinstance(node, cst.Del):
        return _binds(node.target, name)
    return False


def _plain_class(module: cst.Module, name: str) -> Optional[cst.ClassDef]:
    """The class ``name`` where the module defines it once at top level, binds the name no
    other way there, gives it no base but ``object``, no decorator, no metaclass, and its
    code reads no variable of the module (it can reach no model or optimizer of the script)."""
    found: List[cst.ClassDef] = []
    for stmt in module.body:
        if isinstance(stmt, cst.ClassDef) and stmt.name.value == name:
            found.append(stmt)
        elif any(_binds_otherwise(node, name) or _assigns(node, name) for node in walk(stmt)):
            return None
    if len(found) != 1:
        return None
    cls = found[0]
    if cls.decorators or cls.keywords or any(code_of(base.value).strip() != "object" for base in cls.bases):
        return None
    variables = _module_variables(module)
    if any(isinstance(node, cst.Name) and node.value in variables for node in walk(cls.body)):
        return None
    return cls


def _assigns(node: Any, name: str) -> bool:
    return isinstance(node, cst.Assign) and any(_binds(t.target, name) for t in node.targets)


def _module_variables(module: cst.Module) -> Set[str]:
    """The names the module's own code assigns (not those it binds by import, def or class)."""
    found: Set[str] = set()
    for node in _module_level(module):
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        else:
            targets = assignment_targets(node)
        found.update(n.value for t in targets for n in walk(t) if isinstance(n, cst.Name))
        if isinstance(node, cst.Global):  # a function that assigns a module name
            found.update(item.name.value for item in node.names)
    return found


def _module_level(module: cst.Module) -> Iterator[cst.CSTNode]:
    """The nodes of the module's own code: its statements, and what blocks hold, down to
    (not into) function and class bodies; ``global`` lines of functions too."""
    stack: List[cst.CSTNode] = list(reversed(module.body))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(n for n in walk(node) if isinstance(n, cst.Global))
            continue
        stack.extend(reversed(children(node)))


def _constant(node: Any) -> bool:
    """A literal: a number, a string, ``True``/``False``/``None``, a negated number."""
    if isinstance(node, (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString)):
        return True
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return isinstance(node.expression, (cst.Integer, cst.Float))
    return False


def _given(node: Any, optimizers: Sequence[str]) -> bool:
    """A constant, or the parameters of one of ``optimizers`` as the clipping rule writes them
    (or as apex read them, ``amp.master_params(opt)``)."""
    if _constant(node):
        return True
    text = code_of(node)
    return any(
        same_expression(text, optimizer_params(opt))
        or same_expression(text, f"amp.master_params({opt})")
        for opt in optimizers
    )
