"""O1/O2 inference (``amp.initialize`` without optimizers) followed in its own function.

apex patched torch at the initialize: from there on, every forward pass of the process ran
in mixed precision.  Where the function that initializes goes on to use the model itself
(``evaluate(args, model, loader)``, ``out = model(x)`` in a loop), each statement that uses
the model after the initialize is put under ``torch.autocast``, switched like apex was: the
same result for the forward passes those statements run, wherever they run them.  The uses
either all follow the initialize in its own block (its ``if`` tests hold there: no switch)
or all come after that ``if`` (a switch variable set after it).  Only where every later use
of the model can be seen: the model is a plain name, the initialize runs once (no loop
around it, no other initialize in the function whose switch could share the name), and the
name is never handed on to code that could run it later (returned, stored, aliased,
captured by a nested function, lambda or generator expression); a use in a block that
already picks a precision context (``with amp_autocast():``) keeps the TODO.
"""

from __future__ import annotations

from typing import Any, FrozenSet, List, Optional, Set, Tuple

import libcst as cst

from ._amp_autocast import _NOT_FORWARD  # nn.Module methods that run no forward pass
from ._amp_sites import AmpFile, InitSite, walk
from ._default_flags import bound_once
from ._plain_alternative import bound_names
from ._tree import inside, loop_between

#: calls that only look at the model
_LOOKS_AT = frozenset({"isinstance", "hasattr", "getattr", "setattr", "print", "len", "id", "type", "repr", "str"})
#: what runs its body later, from wherever it is kept (a generator expression too)
_DEFERRED = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.GeneratorExp)
_TARGET_PARENTS = (cst.AssignTarget, cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr, cst.CompFor)


def autocast_levels(site: InitSite, level: Optional[str]) -> bool:
    """The opt level is O1 or O2, or chosen at run time among O0, O1 and O2 only (``'O2' if
    mixed_precision else 'O0'``, also through a name the function binds once to such a choice:
    ``amp_opt_level = 'O1' if fp16 else 'O0'``): autocast where it is not O0, never O3's half
    model."""
    if level in ("O1", "O2"):
        return True
    if level is not None:
        return False
    arg = next((a for a in site.call.args if a.keyword is not None and a.keyword.value == "opt_level"), None)
    choices: List[Any] = [arg.value] if arg is not None else []
    leaves: List[Any] = []
    resolved: Set[cst.Name] = set()
    while choices:
        node = choices.pop()
        if isinstance(node, cst.IfExp):
            choices.extend((node.body, node.orelse))
        elif isinstance(node, cst.Name) and site.func is not None and node not in resolved:
            resolved.add(node)
            value = bound_once(site.func, node.value)
            (choices if value is not None else leaves).append(value if value is not None else node)
        else:
            leaves.append(node)
    return bool(leaves) and all(
        isinstance(n, cst.SimpleString) and n.evaluated_value in ("O0", "O1", "O2") for n in leaves
    )


def model_names(site: InitSite) -> Optional[Set[str]]:
    """The names that hold the initialized models afterwards: the assignment's targets, else
    the models handed in; None unless all are plain names."""
    holder = site.stmt.body[0] if site.stmt.body else None
    if isinstance(holder, cst.Assign):
        names: Set[str] = set()
        for target in holder.targets:
            value = target.target
            items = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
            if not all(isinstance(item, cst.Name) for item in items):
                return None
            names.update(item.value for item in items)
        return names
    if isinstance(holder, cst.Expr) and site.models and all(isinstance(m, cst.Name) for m in site.models):
        return {m.value for m in site.models}  # type: ignore[attr-defined]
    return None


def inference_uses(
    rule: Any, site: InitSite, info: AmpFile
) -> Optional[Tuple[List[cst.BaseStatement], bool, Set[str]]]:
    """The statements after ``site`` that use the initialized model, outermost only, in
    source order, whether they all follow it in its own block (there the initialize has
    run: its ``if`` tests hold) rather than after its ``if`` (its anchor), and the context
    variables of the function some uses already run under (``with amp_autocast():``, left
    as they are: the caller decides whether that variable can be bound to autocast); None
    where some use cannot be followed, none is seen, or there are both kinds."""
    parents = rule.parents
    func = site.func
    names = model_names(site)
    if func is None or not names or site.old_api or site.options is not None or len(site.stmt.body) != 1:
        return None
    if any(other is not site and other.func is func for other in info.inits):
        return None  # another initialize's switch may share the name
    if isinstance(site.anchor, (cst.For, cst.While)) or loop_between(parents, site.anchor, func):
        return None
    block = parents.get(site.stmt)
    if not isinstance(block, cst.IndentedBlock):
        return None
    nodes = list(walk(func))
    index = {id(node): i for i, node in enumerate(nodes)}
    if id(site.anchor) not in index or id(site.stmt) not in index:
        return None
    anchor_end = index[id(site.anchor)] + len(list(walk(site.anchor)))
    site_end = index[id(site.stmt)] + len(list(walk(site.stmt)))
    following = list(block.body)[list(block.body).index(site.stmt) + 1 :]
    in_block = {id(n) for stmt in following for n in walk(stmt)}
    amp_nodes = {ref.expr for ref in info.refs}
    local = bound_names(func)
    found: List[cst.BaseStatement] = []
    contexts: Set[str] = set()
    kinds: Set[bool] = set()
    for i in range(site_end, len(nodes)):
        node = nodes[i]
        if not (isinstance(node, cst.Name) and node.value in names):
            continue
        verdict = _use(parents, node)
        if verdict is None:
            return None
        if not verdict:
            continue
        if i >= anchor_end:
            kinds.add(False)
        elif id(node) in in_block:
            kinds.add(True)
        else:
            return None  # inside the initialize's if, past its block: neither switch holds there
        stmt = rule.statement_of(node)
        variable = context_variable(parents, stmt, func, local)
        if variable:
            contexts.add(variable)
            continue
        if not _wrappable(rule, stmt, func, amp_nodes, local):
            return None
        if stmt not in found:
            found.append(stmt)
    if len(kinds) != 1:
        return None
    outer = [s for s in found if not any(inside(parents, s, other) for other in found if other is not s)]
    return outer, kinds.pop(), contexts


def consecutive_runs(parents: Any, statements: List[cst.BaseStatement]) -> List[List[cst.BaseStatement]]:
    """``statements`` (in source order) in runs of neighbours of one block: each run goes
    under one ``with``."""
    runs: List[List[cst.BaseStatement]] = []
    for stmt in statements:
        block = parents.get(stmt)
        body = list(block.body)
        if runs and parents.get(runs[-1][-1]) is block and body.index(runs[-1][-1]) + 1 == body.index(stmt):
            runs[-1].append(stmt)
        else:
            runs.append([stmt])
    return runs


def _use(parents: Any, name: cst.Name) -> Optional[bool]:
    """Whether ``name`` runs (or may run) the model: True; a look that runs nothing or a
    rebinding: False; a use that hands the model on out of sight: None."""
    parent = parents.get(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False  # ``x.model``: another object's attribute
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    cur: Any = name
    while cur is not None and not isinstance(cur, cst.BaseStatement):
        if isinstance(cur, _DEFERRED):
            return None  # runs later, from wherever it is kept
        cur = parents.get(cur)
    # the whole reach: ``model``, ``model.module``, ``model.heads[0]``
    top: Any = name
    method = ""
    while isinstance(parents.get(top), (cst.Attribute, cst.Subscript)) and parents[top].value is top:
        top = parents[top]
        method = top.attr.value if isinstance(top, cst.Attribute) else ""
    parent = parents.get(top)
    if isinstance(parent, cst.Call) and parent.func is top:
        return method not in _NOT_FORWARD if top is not name else True
    if _is_bound(parent, top) or isinstance(parent, cst.Element) and _is_target(parents, parent):
        return False  # rebound, deleted or an attribute set: what follows uses no model
    if isinstance(parent, cst.Arg):
        call = parents.get(parent)
        callee = _last_name(call.func) if isinstance(call, cst.Call) else ""
        if callee in _LOOKS_AT or "state_dict" in callee or "checkpoint" in callee.lower():
            return False  # looks at it, or loads / saves its weights
        if top is name and _rebinds(parents, call, name.value):
            return False  # ``model = DataParallel(model)``: the wrapper runs it later, seen there
        return True
    if isinstance(parent, (cst.Return, cst.Element, cst.DictElement, cst.Yield) + _TARGET_PARENTS + (cst.Assign,)):
        return None  # handed on (kept, aliased, iterated): whoever holds it may run it
    if top is not name:
        return False  # an attribute read inside an expression (``mel[:model.n_mel_channels]``)
    if isinstance(parent, (cst.Comparison, cst.ComparisonTarget, cst.If, cst.UnaryOperation, cst.BooleanOperation)):
        return False
    return None


def _last_name(func: Any) -> str:
    """The called name: ``f`` of ``f(...)``, ``load`` of ``ckpt.load(...)``."""
    if isinstance(func, cst.Name):
        return func.value
    return func.attr.value if isinstance(func, cst.Attribute) else ""


def _is_bound(parent: Any, node: Any) -> bool:
    """``node`` is what ``parent`` binds or unbinds (an assignment's, a loop's, a ``with``'s
    target, a ``del``)."""
    if isinstance(parent, cst.AssignTarget) or isinstance(parent, cst.Del) and parent.target is node:
        return True
    return isinstance(parent, _TARGET_PARENTS) and any(
        getattr(parent, field, None) is node for field in ("target", "name")
    )


def _is_target(parents: Any, element: cst.Element) -> bool:
    holder = parents.get(element)
    return isinstance(holder, (cst.Tuple, cst.List)) and _is_bound(parents.get(holder), holder)


def _rebinds(parents: Any, call: Any, name: str) -> bool:
    """``call`` is the whole value of an assignment to ``name`` itself."""
    holder = parents.get(call)
    return (
        isinstance(holder, cst.Assign)
        and holder.value is call
        and all(isinstance(t.target, cst.Name) and t.target.value == name for t in holder.targets)
    )


def _wrappable(
    rule: Any, stmt: Any, func: cst.FunctionDef, amp_nodes: Set[cst.CSTNode], local: FrozenSet[str]
) -> bool:
    """A statement of a plain block of ``func`` (which binds the names ``local``) that a
    ``with`` can hold as it is."""
    parents = rule.parents
    if stmt is None or not isinstance(parents.get(stmt), cst.IndentedBlock):
        return False
    if rule.edits.planned(stmt) or stmt in rule.edits.groups:
        return False
    if isinstance(stmt, cst.If) and isinstance(parents.get(stmt), cst.If):
        return False
    inner = list(walk(stmt))
    if any(isinstance(n, (cst.Yield, cst.Await)) or n in amp_nodes for n in inner):
        return False
    cur = parents.get(stmt)
    while cur is not None and cur is not func:
        if isinstance(cur, cst.With) and any(_chooses_precision(item.item, local) for item in cur.items):
            return False
        cur = parents.get(cur)
    return True


def context_variable(parents: Any, stmt: Any, func: cst.FunctionDef, local: FrozenSet[str]) -> str:
    """The name ``v`` of a function-bound context that ``stmt`` runs under (``with v():``, no
    arguments) when that is the only precision context around it; "" otherwise."""
    names: Set[str] = set()
    cur = parents.get(stmt)
    while cur is not None and cur is not func:
        if isinstance(cur, cst.With):
            for item in cur.items:
                if not _chooses_precision(item.item, local):
                    continue
                call = item.item
                plain = isinstance(call.func, cst.Name) and call.func.value in local and not call.args
                if not plain:
                    return ""
                names.add(call.func.value)
        cur = parents.get(cur)
    return names.pop() if len(names) == 1 else ""


def _chooses_precision(item: cst.BaseExpression, local: FrozenSet[str]) -> bool:
    """``with amp_autocast():`` (a context the function picks at run time, or one named so) or
    an autocast already; not ``with tqdm(...)``, ``with open(...)``."""
    if not isinstance(item, cst.Call):
        return False
    func = item.func
    if isinstance(func, cst.Name):
        return func.value in local or "autocast" in func.value or "amp" in func.value
    return isinstance(func, cst.Attribute) and func.attr.value == "autocast"
