"""A scale_loss whose optimizer is held by a wrapper object that the function steps instead,
where the wrapper's class (another file, no apex.amp) can be handed the GradScaler
(``migrate.steppable_plan``): its step runs ``self.<attr>.step()`` once, amid work of its own
(a learning-rate warm-up, a step count) that apex ran on every step, overflowing or not.

Two shapes name the held optimizer:

* ``amp.scale_loss(loss, holder.<attr>)`` (glow-tts: ``optimizer_g._optim``);
* ``amp.scale_loss(loss, opt)`` after ``holder.<attr> = opt``, a statement of the function's
  own body before the block, ``opt`` bound nowhere after it (BiSeNet: ``net, opt =
  amp.initialize(net, optim.optim)`` then ``optim.optim = opt``).

The class of ``holder`` is proven where the function binds it once, in its own body before
the block, to ``Wrapper(...)``; or, for a parameter of a module-level function only this
file calls, where every caller passes a name that it binds so.  Nothing in the function
assigns ``holder.<attr>`` otherwise, and it steps ``holder`` once, in a loop around the block,
after it.  Then ``holder.step()`` becomes ``holder.step(scaler)`` and the wrapper's step
``scaler.step(self.<attr>)`` (``migrate.wrapper_step_edit``); the gradients are unscaled on
the held optimizer itself, the object that step is given.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import libcst as cst

from ._edits import code_of
from ._tree import walk


def steppable_holder(
    rule: Any, site: Any, opt: cst.BaseExpression, wrappers: Dict[str, str], entries: Tuple[str, ...]
) -> Optional[Tuple[str, str, cst.Call]]:
    """(the holder's expression, the wrapper's local name, its one step call) when ``opt``
    is held as above by an object of a class in ``wrappers`` (local name -> attribute);
    None otherwise.  ``entries``: functions of this file other files call."""
    func = site.func
    if func is None or not wrappers:
        return None
    held = _held(func, opt)
    if held is None:
        return None
    holder, attr, store = held
    if store is not None and not _stored_before(rule, func, site, store, code_of(opt)):
        return None
    assigned = [s for s in _binding_statements(func, f"{holder}.{attr}") if s is not store]
    if assigned:
        return None
    step = _one_step(rule, func, site, holder)
    if step is None:
        return None
    wrapper = _built_here(rule, func, holder, site.with_stmt)
    if wrapper is None and func.name.value not in entries:
        wrapper = _built_by_callers(rule, func, holder)
    if wrapper is None or wrappers.get(wrapper) != attr:
        return None
    return holder, wrapper, step


def _held(func: cst.FunctionDef, opt: cst.BaseExpression) -> Optional[Tuple[str, str, Optional[cst.CSTNode]]]:
    """(holder name, attribute, the statement storing ``opt`` in it or None)."""
    if isinstance(opt, cst.Attribute) and isinstance(opt.value, cst.Name):
        return opt.value.value, opt.attr.value, None
    if not isinstance(opt, cst.Name):
        return None
    stores = []
    for stmt in func.body.body:
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
        if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and code_of(small.value) == opt.value):
            continue
        target = small.targets[0].target
        if isinstance(target, cst.Attribute) and isinstance(target.value, cst.Name):
            stores.append((target.value.value, target.attr.value, small))
    return stores[0] if len(stores) == 1 else None


def _stored_before(rule: Any, func: cst.FunctionDef, site: Any, store: cst.CSTNode, opt: str) -> bool:
    """The store precedes the block and no binding of ``opt`` follows the store."""
    line = rule.line_of(store)
    if line >= rule.line_of(site.with_stmt):
        return False
    return all(rule.line_of(s) < line for s in _binding_statements(func, opt))


def _binding_statements(func: cst.FunctionDef, text: str) -> List[cst.CSTNode]:
    """Statements (and loop/with/global nodes) of ``func`` that bind the name or attribute
    ``text``; a parameter named ``text`` counts as the function itself."""
    found: List[cst.CSTNode] = []
    params = func.params
    if any(p.name.value == text for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        found.append(func)
    for node in walk(func.body):
        targets: List[cst.BaseExpression] = []
        if isinstance(node, cst.Assign):
            targets = [t.target for t in node.targets]
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets = [node.target]
        elif isinstance(node, cst.AsName):
            targets = [node.name]
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            if any(n.name.value == text.split(".")[0] for n in node.names):
                found.append(node)
            continue
        elif isinstance(node, cst.NamedExpr):
            targets = [node.target]
        if any(bound == text for t in targets for bound in _bound_texts(t)):
            found.append(node)
    return found


def _bound_texts(target: cst.BaseExpression) -> List[str]:
    """What an assignment target binds: itself, or each element it unpacks into."""
    if isinstance(target, (cst.Tuple, cst.List)):
        return [text for e in target.elements for text in _bound_texts(e.value)]
    if isinstance(target, cst.StarredElement):
        return _bound_texts(target.value)
    return [code_of(target)]


def _one_step(rule: Any, func: cst.FunctionDef, site: Any, holder: str) -> Optional[cst.Call]:
    """The one ``holder.step()`` of ``func``: a statement of its own, no arguments, after
    the block in a loop around both."""
    from ._amp_sites import step_calls

    calls = step_calls(func.body, holder)
    if len(calls) != 1:
        return None
    (call,) = calls
    if call.args or not isinstance(rule.parents.get(call), cst.Expr):
        return None
    if rule.line_of(call) <= rule.line_of(site.with_stmt):
        return None
    if not set(_loops(rule, call)) & set(_loops(rule, site.with_stmt)):
        return None
    return call


def _loops(rule: Any, node: Any) -> List[Any]:
    found, cur = [], node
    while cur in rule.parents:
        cur = rule.parents[cur]
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            break
        if isinstance(cur, (cst.For, cst.While)):
            found.append(cur)
    return found


def _built_here(rule: Any, func: cst.FunctionDef, name: str, before: cst.CSTNode) -> Optional[str]:
    """The class ``name`` is built from where ``func`` binds it once, in its own body,
    before ``before``: ``name = Wrapper(...)``."""
    bindings = _binding_statements(func, name)
    if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign):
        return None
    (assign,) = bindings
    stmt = rule.parents.get(assign)
    if stmt not in func.body.body or rule.line_of(stmt) >= rule.line_of(before):
        return None
    if len(assign.targets) != 1 or code_of(assign.targets[0].target) != name:
        return None
    return code_of(assign.value.func) if isinstance(assign.value, cst.Call) else None


def _built_by_callers(rule: Any, func: cst.FunctionDef, name: str) -> Optional[str]:
    """For a parameter ``name`` of a module-level ``func``: the class every call of it in
    this file passes an object of (a name the caller binds once to ``Wrapper(...)`` before
    the call), the same for all; None otherwise."""
    from ._amp_sites import _callers, arg_value, enclosing_function

    if not isinstance(rule.parents.get(func), cst.Module):
        return None
    params = func.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    if name not in positional:
        return None
    if len(_binding_statements(func, name)) != 1:
        return None  # the parameter itself, rebound nowhere
    calls = _callers(rule, func)
    if not calls:
        return None
    found = set()
    for call in calls:
        caller = enclosing_function(rule.parents, call)
        value = arg_value(call, positional.index(name), name)
        if caller is None or any(a.star for a in call.args) or not isinstance(value, cst.Name):
            return None
        found.add(_built_here(rule, caller, value.value, call))
    return found.pop() if len(found) == 1 else None
