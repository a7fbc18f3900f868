"""Autocast for a loss a method computes from the network outputs its callers hand it
(imaginaire's vid2vid trainer, APX253)::

    def gen_update(self, data):
        for t in range(self.sequence_length):
            net_G_output = self.net_G(data_t)              # region at the caller
            net_D_output, _ = self.net_D(data_t, net_G_output)
            self.get_gen_losses(data_t, net_G_output, net_D_output)

    def get_gen_losses(self, data_t, net_G_output, net_D_output):
        self.gen_losses["GAN"] = self.criteria["GAN"](net_D_output)   # region in the callee
        total_loss = ...
        with amp.scale_loss(total_loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        self.opt_G.step()

Under apex's O1 torch was patched from ``amp.initialize`` on, so the forward passes of the
caller and the loss computation of the callee (perceptual networks among the criteria) both
ran with its casts.  Natively both get ``torch.autocast``: in the callee every statement
before its ``amp.scale_loss`` (a block of the method's own body), at each caller every run of
statements that computes what it hands over, up to each call of a method that scales a loss,
through ``super()``, or of a method of the class family, in any walked file, that may reach a
backward or a step (``stepping_methods``: its backward must not run under autocast).
Taken only where proven: every call of the method in the repository is a call on ``self``
in a method of its class (or of a same-file subclass inheriting it) in this file, no class
overrides it, each argument is a name the caller computes itself (bound in a wrapped run, or
from a constant), and the method neither steps nor backpropagates before its
``amp.scale_loss``.  Otherwise the reason comes back for the APX210 TODO.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import libcst as cst

from ._amp_device import optimizer_device
from ._amp_sites import AmpFile, ScaleLossSite, assigned_names, class_of_method, code_of, enclosing, heirs
from ._amp_sites import self_name, walk
from ._tree import is_docstring

#: calls after which no autocast region goes on: they step an optimizer or backpropagate
_STEPS = frozenset({"step", "backward"})
#: a span and the function it is in
Span = Tuple[List[Any], Any]


def handed_output_spans(rule: Any, site: ScaleLossSite, info: AmpFile) -> Tuple[Optional[List[Span]], str]:
    """The regions of the module docstring for ``site``: ``(spans, "")``; ``(None, why)`` when
    the shape is there but not proven (``why``: the words for the TODO); ``(None, "")`` when
    the loss is not computed so."""
    func = site.func
    cls = class_of_method(rule.parents, func)
    if cls is None or func.name.value == "forward" or not isinstance(site.loss, cst.Name):
        return None, ""
    body = list(func.body.body) if isinstance(func.body, cst.IndentedBlock) else []
    if site.with_stmt not in body:
        return None, ""
    prefix = _loss_statements(body[: body.index(site.with_stmt)])
    params = [p.name.value for p in func.params.params][1:]
    name = site.loss.value
    if not prefix or name in params or not any(name in assigned_names(s) for s in prefix):
        return None, ""
    if not any(_reads(s, set(params)) for s in prefix):
        return None, ""
    method = f"{func.name.value}()"
    calls, stray = _calls_in_family(rule, cls, func)
    if not calls or any(_steps(s, frozenset()) for s in prefix):
        return None, ""  # no caller here to wrap, or a backward of its own before this one
    where = _override(info, cls.name.value, func.name.value)
    if where:
        return None, f"{method} computes the loss from what it is handed, and {where} overrides it"
    known = dict(info.plan.handed_calls).get(func.name.value) if info.plan is not None else None
    if stray or known is None or len(known) != len(calls):
        return None, (
            f"{method} computes the loss from what it is handed, and not every call of it in the repository is a "
            f"call on self in a method of {cls.name.value} or of a subclass of it in this file"
        )
    scaling = {s.func.name.value for s in info.scale_losses if s.func is not None} | {func.name.value}
    scaling |= set(info.plan.stepping_methods)  # those of the class family that may reach a backward
    spans: List[Span] = []
    by_caller: Dict[Any, Set[str]] = {}
    for call in calls:
        caller = enclosing(rule.parents, call, cst.FunctionDef)
        names, why = _handed_names(call, caller)
        if why:
            return None, f"{method} is handed {why}"
        by_caller.setdefault(caller, set()).update(names)
    for caller, names in by_caller.items():
        if any(isinstance(n, (cst.Yield, cst.Await)) for n in walk(caller.body)):
            return None, f"{caller.name.value}(), which calls {method}, is a generator or a coroutine"
        runs: List[List[Any]] = []
        _collect_runs(list(caller.body.body), frozenset(scaling), names, runs)
        loose = _loose_binding(caller, names, runs)
        if loose is not None:
            return None, (
                f"{caller.name.value}() binds what it hands {method} in `{_line_text(loose)}`, "
                "where no autocast region can hold it"
            )
        spans += [(run, caller) for run in runs if not rule._inside_autocast(run[0])]
    plan = info.plan
    if plan.module_reader:
        # a reader of the module-level GradScaler (APX252): the callers read its switch there too
        unread = [c for c in by_caller if c not in info.access]
        if unread and plan.reader_local:
            return None, (
                f"{unread[0].name.value}(), which calls {method}, would read the GradScaler of {plan.module_reader}, "
                "which this file imports only inside the functions with a site"
            )
        for caller in unread:
            info.access[caller] = f"{plan.reader_access}.{info.scaler_name}"
    opt = site.optimizers[0] if len(site.optimizers) == 1 else None
    if isinstance(opt, cst.Attribute) and isinstance(opt.value, cst.Name) and opt.value.value == self_name(func):
        # the callers run on the device of what that optimizer steps (``_amp_device``)
        devices = rule.__dict__.setdefault("handed_devices", {})
        for caller in by_caller:
            devices.setdefault(caller, optimizer_device(f"{self_name(caller)}.{opt.attr.value}"))
    if not rule._inside_autocast(prefix[0]):
        spans.append((prefix, func))
    return spans, ""


def _loss_statements(stmts: List[Any]) -> List[Any]:
    """The statements before the ``amp.scale_loss`` that compute the loss: without the
    docstring and the leading ``optimizer.zero_grad()`` lines."""
    out = [s for s in stmts if not is_docstring(s)]
    while out and _only_zero_grad(out[0]):
        out = out[1:]
    return out


def _only_zero_grad(stmt: Any) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    return all(
        isinstance(small, cst.Expr)
        and isinstance(small.value, cst.Call)
        and isinstance(small.value.func, cst.Attribute)
        and small.value.func.attr.value == "zero_grad"
        for small in stmt.body
    )


def _reads(stmt: Any, names: Set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in walk(stmt))


def _steps(stmt: Any, methods: frozenset) -> bool:
    """Whether ``stmt`` defines a function or class, yields, or calls a step, a backward,
    one of ``methods`` (the methods that scale a loss or may reach a backward or a step) or
    any method through ``super()`` (whose class may be outside the walked files) at any depth."""
    for node in walk(stmt):
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Yield)):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and _is_super(node.func.value):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, (cst.Attribute, cst.Name)):
            last = node.func.attr.value if isinstance(node.func, cst.Attribute) else node.func.value
            if last in _STEPS or last in methods:
                return True
    return False


def _is_super(node: Any) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "super"


def _override(info: AmpFile, cls: str, method: str) -> str:
    """Where a subclass (any file) overrides ``cls.method``, else ""."""
    overridden = info.plan.overridden if info.plan is not None else ()
    return next((where for owner, name, where in overridden if (owner, name) == (cls, method)), "")


def _calls_in_family(rule: Any, cls: cst.ClassDef, func: cst.FunctionDef) -> Tuple[List[cst.Call], bool]:
    """The calls ``self.<method>(...)`` in methods of ``cls`` and of its same-file subclasses
    that inherit it; and whether the file names the method anywhere else (another receiver,
    a reference without a call)."""
    family = [cls] + heirs(rule.parents, cls, func.name.value)
    calls: List[cst.Call] = []
    stray = False
    called = set()
    for node in walk(rule.tree):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            if node.func.attr.value != func.name.value:
                continue
            called.add(id(node.func))
            caller = enclosing(rule.parents, node, cst.FunctionDef)
            if class_of_method(rule.parents, caller) in family and code_of(node.func.value) == self_name(caller):
                calls.append(node)
            else:
                stray = True
    for node in walk(rule.tree):
        if isinstance(node, cst.Attribute) and node.attr.value == func.name.value and id(node) not in called:
            stray = True
    return calls, stray


def _handed_names(call: cst.Call, caller: cst.FunctionDef) -> Tuple[Set[str], str]:
    """The names ``call`` hands over, each one the caller binds itself; else the words of why
    not (a star, an expression, a parameter of the caller)."""
    names: Set[str] = set()
    own = {p.name.value for p in caller.params.params} | {p.name.value for p in caller.params.kwonly_params}
    for arg in call.args:
        if arg.star:
            return set(), f"`{code_of(arg.value)}` unpacked at {caller.name.value}()"
        if not isinstance(arg.value, cst.Name):
            return set(), f"`{code_of(arg.value)}` by {caller.name.value}(), no name it binds itself"
        if arg.value.value in own:
            return set(), f"{arg.value.value}, a parameter of {caller.name.value}(), computed by its callers"
        names.add(arg.value.value)
    return names, ""


def _collect_runs(stmts: List[Any], scaling: frozenset, names: Set[str], runs: List[List[Any]]) -> None:
    """The maximal runs of statements in ``stmts`` (and, through the compound statements that
    call a scaling method, in their blocks) without a step, backward or scaling call that bind
    one of ``names`` from a call: what autocast wraps at the caller."""
    run: List[Any] = []
    for stmt in stmts + [None]:
        if stmt is not None and not _steps(stmt, scaling):
            run.append(stmt)
            continue
        if any(assigned_names(s) & names and any(isinstance(n, cst.Call) for n in walk(s)) for s in run):
            runs.append(run)
        run = []
        if stmt is None or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        for block in _blocks(stmt):
            _collect_runs(block, scaling, names, runs)


def _blocks(stmt: Any) -> List[List[Any]]:
    """The statement lists of a compound statement's blocks (an ``elif`` with its own)."""
    parts: List[Any] = []
    if isinstance(stmt, cst.If):
        rest = _blocks(stmt.orelse) if isinstance(stmt.orelse, cst.If) else []
        parts = [stmt.body] + ([stmt.orelse.body] if isinstance(stmt.orelse, cst.Else) else [])
        return [list(p.body) for p in parts if isinstance(p, cst.IndentedBlock)] + rest
    elif isinstance(stmt, (cst.For, cst.While)):
        parts = [stmt.body] + ([stmt.orelse.body] if stmt.orelse is not None else [])
    elif isinstance(stmt, cst.With):
        parts = [stmt.body]
    elif isinstance(stmt, cst.Try):
        parts = [stmt.body] + [h.body for h in stmt.handlers]
        parts += [p.body for p in (stmt.orelse, stmt.finalbody) if p is not None]
    return [list(p.body) for p in parts if isinstance(p, cst.IndentedBlock)]


def _loose_binding(caller: cst.FunctionDef, names: Set[str], runs: List[List[Any]]) -> Optional[Any]:
    """A statement of ``caller`` outside every run that binds one of ``names`` from anything
    but a constant (``net_G_output = None`` is fine), or a loop, ``with`` or ``except`` target
    binding one; None when there is none."""
    inside = {id(n) for run in runs for s in run for n in walk(s)}
    for node in walk(caller.body):
        if id(node) in inside:
            continue
        if isinstance(node, cst.SimpleStatementLine) and assigned_names(node) & names:
            if any(isinstance(n, (cst.Call, cst.Attribute, cst.Subscript, cst.Await)) for n in walk(node)):
                return node
            if any(isinstance(n, cst.Name) and n.value not in ("None", "True", "False") and n.value not in
                   assigned_names(node) for n in walk(node)):
                return node  # ``a = b``: whatever b holds
        targets: List[Any] = []
        if isinstance(node, cst.For):
            targets = [node.target]
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            targets = [node.asname.name]
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            targets = [node.name.name]
        if any(isinstance(n, cst.Name) and n.value in names for t in targets for n in walk(t)):
            return node
    return None


def _line_text(node: Any) -> str:
    if isinstance(node, cst.SimpleStatementLine):
        return "; ".join(code_of(part).strip() for part in node.body)
    if isinstance(node, cst.For):
        return f"for {code_of(node.target)} in {code_of(node.iter)}"
    return code_of(node).strip().splitlines()[0]
