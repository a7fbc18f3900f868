"""A forward span whose model calls all run without gradients, for a loss that reads a training
forward pass computed out of the span's reach.

rotom's policy update (``auto_filter_weight.py``)::

    log_prob = process_filter(model, policy, batch)   # the forward pass the gradient flows through
    ...                                                # other scaled backwards and steps
    with torch.no_grad():
        v_loss = model(batch).pow(2).mean()            # an evaluation: no gradient
    reward = log_prob * -v_loss
    with amp.scale_loss(reward, policy_optimizer) as scaled_loss:
        scaled_loss.backward()

The span search (``_forward_spans``) stops at the steps between and takes the gradient-off
evaluation for "the" forward pass: an autocast region over it and ``reward`` would leave
``log_prob``'s forward pass, the one the scaled loss trains, in float32 without a word.  A
model call under ``torch.no_grad()`` / ``torch.inference_mode()`` or inside what ``.detach()``
detaches feeds no gradient; when every model call of the span is such a one and the span reads
a name that a model call with gradients bound before it, out of its reach, the site is refused
(APX210) with that reason.  So is such a span whose loss reads a parameter of its function
outside the gradient-off parts (``def step(self, log_prob, batch)``): the forward pass that
parameter's gradient flows through ran in the caller, out of any region placed here.  A span
that holds a training forward pass (LightningDOT's teacher
under ``no_grad`` beside the student's forward pass) is left as it is.
"""

from __future__ import annotations

from typing import Any, List, Set

import libcst as cst

from ._amp_sites import assigned_names, code_of, enclosing, walk
from ._binding import param_names


def _grad_off_nodes(rule: Any, stmts: List[Any]) -> Set[int]:
    """Ids of the nodes of ``stmts`` that carry no gradient out: the bodies of gradient-off
    ``with`` blocks and the receivers of ``.detach()`` calls."""
    off: Set[int] = set()
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, cst.With) and rule._grad_off_items(node):
                off.update(id(n) for n in walk(node.body))
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value == "detach"
            ):
                off.update(id(n) for n in walk(node.func.value))
    return off


def _model_calls(rule: Any, stmts: List[Any], models: set) -> List[cst.Call]:
    """The calls in ``stmts`` that run the model, the model handed to a helper included."""
    return [
        node
        for stmt in stmts
        for node in walk(stmt)
        if isinstance(node, cst.Call) and rule._is_model_call(node, models, via_args=True)
    ]


def _trains(rule: Any, stmts: List[Any], models: set) -> bool:
    """Whether a model call of ``stmts`` runs with gradients: outside the gradient-off nodes,
    and holding no gradient-off model call (``loss(model(x).detach(), y)`` is found through the
    inner call, which is off)."""
    off = _grad_off_nodes(rule, stmts)
    calls = _model_calls(rule, stmts, models)
    off_calls = {id(c) for c in calls if id(c) in off}
    return any(
        id(call) not in off and not any(id(n) in off_calls for n in walk(call) if n is not call) for call in calls
    )


def _has_grad_off(rule: Any, stmts: List[Any]) -> bool:
    """Cheap first test: a gradient-off ``with`` or a ``.detach()`` call in ``stmts``."""
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, cst.With) and rule._grad_off_items(node):
                return True
            if isinstance(node, cst.Attribute) and node.attr.value == "detach":
                return True
    return False


def _read_data(stmts: List[Any], models: set) -> Set[str]:
    """The names and attributes ``stmts`` read as data: not what they call (``self.model`` of
    ``self.model(x)``) nor a model they hand to a call (``evaluate(model, batch)``); a statement
    binding those builds the model (``model = DDP(model)``) and runs no forward pass."""
    read: Set[str] = set()
    models_used: Set[str] = set()
    for stmt in stmts:
        for node in walk(stmt):
            if isinstance(node, (cst.Name, cst.Attribute)):
                read.add(code_of(node))
            elif isinstance(node, cst.Call):
                models_used.update(code_of(n) for n in walk(node.func) if isinstance(n, (cst.Name, cst.Attribute)))
                models_used.update(code_of(a.value) for a in node.args if code_of(a.value) in models)
    return read - models_used


def _parameters_read(rule: Any, members: List[Any], models: set, func: cst.FunctionDef) -> List[str]:
    """The parameters of ``func`` (not a method's instance) that ``members`` read as data
    outside their gradient-off parts: what such a loss trains came in through them."""
    params = param_names(func.params)
    if params and isinstance(enclosing(rule.parents, func, cst.ClassDef), cst.ClassDef):
        params = params[1:]  # ``self`` / ``cls``: the models it holds are found as models
    off = _grad_off_nodes(rule, members)
    live = [stmt for stmt in members if id(stmt) not in off]
    read = _read_data(live, models)
    return sorted(
        {
            node.value
            for stmt in live
            for node in walk(stmt)
            if isinstance(node, cst.Name) and id(node) not in off and node.value in params and node.value in read
        }
    )


def grad_off_span_reason(rule: Any, members: List[Any], models: set) -> str:
    """The words of the APX210 reason when span ``members`` (the statements from the first model
    call through the loss) runs the model only without gradients, and reads what a model call
    with gradients bound before it in the same function, or a parameter of that function; ""
    otherwise (the span stands)."""
    if not _has_grad_off(rule, members) or _trains(rule, members, models):
        return ""
    func = enclosing(rule.parents, members[0], cst.FunctionDef)
    if func is None:
        return ""
    read = _read_data(members, models)
    start = rule.line_of(members[0])
    off = _grad_off_nodes(rule, [func.body])
    for node in walk(func.body):
        if not isinstance(node, cst.SimpleStatementLine) or id(node) in off:
            continue
        names = assigned_names(node) & read
        if not names or rule.line_of(node) >= start or enclosing(rule.parents, node, cst.FunctionDef) is not func:
            continue
        if _trains(rule, [node], models):
            source = " ".join("; ".join(code_of(part) for part in node.body).split())
            return (
                f" (every model call found next to it runs without gradients, under torch.no_grad() or "
                f"torch.inference_mode() or detached: the loss reads {', '.join(sorted(names))}, computed by "
                f"`{source}` earlier in {func.name.value}(), the forward pass its gradient flows through, with "
                "statements between that no autocast region can span)"
            )
    params = _parameters_read(rule, members, models, func)
    if params:
        return (
            f" (every model call found next to it runs without gradients, under torch.no_grad() or "
            f"torch.inference_mode() or detached: the loss reads {', '.join(params)}, "
            f"{'a parameter' if len(params) == 1 else 'parameters'} of {func.name.value}(): the forward pass "
            "its gradient flows through runs in its caller, out of reach of any autocast region here)"
        )
    return ""
