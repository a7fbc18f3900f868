"""A training ``amp.initialize`` whose optimizers are never stepped and never leave its
function: no loss of it is scaled, wherever the process goes after it.

apex's ``amp.scale_loss(loss, optimizer)`` needs an optimizer an ``amp.initialize`` returned
(it reads the optimizer's amp stash), so the losses of an initialize are scaled only through
its optimizers.  When each of them is a local name of the function holding the initialize
(a fresh ``torch.optim`` optimizer, or one written inline in the call), and every other use
of that name there is ``name.zero_grad()``, nothing can scale a loss of it or step it: not
the function (the file has no ``amp.scale_loss``, else this is not asked), and no other code
(the name is no parameter, no global, no argument, not returned, not stored).

DeScarGAN's evaluation solvers have this shape: the training solver's setup copied into
``test()``, optimizers made, initialized, zeroed and dropped, the models only run forward.
Such an initialize needs no GradScaler: its models' forward passes get autocast, as the
route of a repository that scales nothing does (``_amp_sites._unscaled_refusal``).
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import libcst as cst

from ._binding import param_names
from ._edits import code_of
from ._tree import walk

#: the optimizer methods that neither step nor hand the optimizer on
HARMLESS_METHODS = frozenset({"zero_grad"})


def stepless_optimizers(rule: Any, init: Any) -> Tuple[List[str], str]:
    """The names of ``init``'s optimizers when it is proven that they are never stepped and
    never leave the function of the initialize (``init`` an ``_amp_sites.InitSite``), with
    an empty reason; else no names and why not."""
    func = init.func
    if init.old_api or not init.has_optimizers or func is None:
        return [], "the initialize is not in a function, or takes no optimizers"
    holder = init.stmt.body[0] if init.stmt.body else None
    if not (isinstance(holder, cst.Assign) and len(holder.targets) == 1 and holder.value is init.call):
        return [], "the initialize's results are not assigned to names"
    target = holder.targets[0].target
    if not (isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2):
        return [], "the initialize's results are not assigned to (models, optimizers)"
    given = target.elements[1].value
    outputs = list(given.elements) if isinstance(given, (cst.Tuple, cst.List)) else [given]
    outputs = [e.value if isinstance(e, cst.BaseElement) else e for e in outputs]
    if not outputs or not all(isinstance(o, cst.Name) for o in outputs):
        return [], f"the optimizers become {code_of(given)}, not local names"
    inputs = [o for o in init.optimizers if isinstance(o, cst.Name)]
    if len(inputs) + sum(_fresh_optimizer(rule, o) for o in init.optimizers) != len(init.optimizers):
        return [], "an optimizer given to the initialize is neither a local name nor made in the call"
    names = sorted({n.value for n in outputs + inputs})
    declared = set(param_names(func.params))
    for node in walk(func.body):
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            declared.update(n.name.value for n in node.names)
    shared = [n for n in names if n in declared]
    if shared:
        return [], f"{shared[0]} is a parameter or a global of {func.name.value}()"
    allowed = {id(n) for n in outputs + inputs}
    for node in walk(func.body):
        if isinstance(node, cst.Name) and node.value in names and id(node) not in allowed:
            why = _use_refusal(rule, node)
            if why:
                return [], why
    return [n.value for n in outputs], ""


def _fresh_optimizer(rule: Any, node: Any) -> bool:
    """``torch.optim.Adam(...)``: an optimizer made where it stands, held by nothing else."""
    return isinstance(node, cst.Call) and any(q.startswith("torch.optim.") for q in rule.qualified_names(node.func))


def _use_refusal(rule: Any, node: cst.Name) -> str:
    """Why this use of an optimizer's name may step it or hand it on ('' when it cannot)."""
    parent = rule.parents.get(node)
    if isinstance(parent, cst.Attribute) and parent.attr is node:
        return ""  # ``self.optimizer``: another name
    if isinstance(parent, cst.Arg) and parent.keyword is node:
        return ""  # ``f(optimizer=...)``: a keyword, not the name
    if isinstance(parent, cst.Attribute) and parent.value is node:
        call = rule.parents.get(parent)
        if parent.attr.value in HARMLESS_METHODS and isinstance(call, cst.Call) and call.func is parent:
            return ""
        return f"{node.value}.{parent.attr.value} is used"
    if isinstance(parent, cst.AssignTarget) and parent.target is node:
        assign = rule.parents.get(parent)
        if isinstance(assign, cst.Assign) and len(assign.targets) == 1 and _fresh_optimizer(rule, assign.value):
            return ""
        return f"{node.value} is assigned something other than a new torch.optim optimizer"
    return f"{node.value} is used other than by {'/'.join(sorted(HARMLESS_METHODS))}()"


def stepless_why(names: List[str], func_name: str) -> str:
    """The reason an initialize's losses are never scaled, for its finding."""
    these = ", ".join(names)
    return (f"the optimizer{'s' if len(names) > 1 else ''} {these} of this amp.initialize "
            f"{'are' if len(names) > 1 else 'is'} never stepped and never leave{'' if len(names) > 1 else 's'} "
            f"{func_name}() (apex scales a loss only through the optimizers an amp.initialize returned)")
