"""The autocast variable of timm-style launchers: ``amp_autocast = suppress`` before an
``if`` whose apex branch calls ``amp.initialize`` and creates a loss-scaler wrapper
(``loss_scaler = ApexScaler()``), while the native branch binds ``amp_autocast`` to
``torch.autocast``; the training loop runs ``with amp_autocast(): loss = ...`` and hands the
loss to ``loss_scaler(loss, optimizer)``.

On the apex branch the variable stays a no-op: apex's O1 cast the forward pass by patching
torch.  The native rewrite binds it to ``torch.autocast`` there, which is provable only when
every loss handed to the wrapper is computed under that variable: in the initialize's
function, or in a function of the same file given both the variable and the wrapper as
arguments (``train_one_epoch(..., amp_autocast=amp_autocast, loss_scaler=loss_scaler)``),
following closures of that function (``_forward()`` returning the loss, ``_backward(loss)``
calling the wrapper) and plain derivations (``loss = output["loss"]``).  At least one call of
the wrapper must be found; an instance handed to a function of another module (timm's
checkpoint saver) is taken as not calling it.

Also here: the installed library's wrappers (timm's ``ApexScaler``) that become their native
twin, and the TODO about the twin's checkpoint key."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import libcst as cst

from ._amp_sites import MODEL_CALL, InitSite, call_args, code_of, enclosing_function, walk
from ._tree import DEFINITIONS, children

#: context managers that do nothing when entered without arguments
NOOP_CONTEXTS = frozenset({"contextlib.suppress", "contextlib.nullcontext"})
#: how many derivations (``a = f(b)``, a closure's parameter or return) the proof follows
_DEPTH = 8


#: the nodes ``assignments`` reads a binding from
_BINDINGS = frozenset({cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor, cst.WithItem})


class _Proof:
    """Follows a value back to where it is computed, within one file.  A value counts as
    computed under the context when it is bound inside ``with <ctx>():`` or derived from
    such a value (any of the names of its expression, so ``loss = out["loss"]`` and
    ``scaled = k * loss`` are); every binding of a name must count."""

    def __init__(self, rule: Any) -> None:
        self.rule = rule
        self.parents = rule.parents
        #: why the last proof failed, when more precise than "not under the variable"
        self.why = ""
        #: (scope, name) pairs being followed: a binding that derives a name from itself
        #: (``loss = loss / accum``) adds nothing to what its other bindings prove
        self.visiting: Set[Tuple[Any, str]] = set()

    # --- scopes ---------------------------------------------------------------------------

    def body_nodes(self, scope: Any) -> List[Any]:
        """Nodes of ``scope`` (a function or the module) outside its nested definitions."""
        out = []
        stack = list(reversed(children(scope)))
        while stack:
            node = stack.pop()
            out.append(node)
            if type(node) in DEFINITIONS:
                continue
            stack.extend(reversed(children(node)))
        return out

    def scope_of(self, node: Any) -> Any:
        func = enclosing_function(self.parents, node)
        return func if func is not None else self.rule.tree

    def nested_defs(self, scope: Any) -> Dict[str, cst.FunctionDef]:
        return {n.name.value: n for n in self.body_nodes(scope) if isinstance(n, cst.FunctionDef)}

    def assignments(self, scope: Any, name: str) -> List[Tuple[Any, Any]]:
        """``(assignment, value)`` for each binding of ``name`` in ``scope``: plain or
        tuple targets (the value is then the element or None); augmented ones keep the value
        and are left out."""
        found: List[Tuple[Any, Any]] = []
        for node in self.body_nodes(scope):
            if type(node) not in _BINDINGS:
                continue
            if isinstance(node, cst.Assign):
                for assign_target in node.targets:
                    found += [(node, v) for v in _bound_values(assign_target.target, node.value, name)]
            elif isinstance(node, (cst.AnnAssign, cst.NamedExpr)) and _is_name(node.target, name):
                found.append((node, node.value))
            elif isinstance(node, (cst.For, cst.CompFor, cst.WithItem)):
                target: Any = node.target if not isinstance(node, cst.WithItem) else (
                    node.asname.name if node.asname is not None else None)
                if target is not None and name in {n.value for n in walk(target) if isinstance(n, cst.Name)}:
                    found.append((node, None))
        return found

    # --- the proof ------------------------------------------------------------------------

    def under(self, scope: Any, expr: Any, ctx: str, depth: int = 0) -> bool:
        """Whether ``expr`` (in ``scope``) is computed under ``with <ctx>():``."""
        if depth > _DEPTH or expr is None:
            return False
        if self.inside_context(expr, scope, ctx):
            return True
        names = [n.value for n in walk(expr) if isinstance(n, cst.Name)]
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            helper = self.nested_defs(scope).get(expr.func.value)
            if helper is not None:
                return self.returns_under(helper, ctx, None, depth + 1)
        return any(self.name_under(scope, n, ctx, depth + 1) for n in names)

    def name_under(self, scope: Any, name: str, ctx: str, depth: int) -> bool:
        key = (scope, name)
        if key in self.visiting:
            return True
        self.visiting.add(key)
        try:
            return self._name_under(scope, name, ctx, depth)
        finally:
            self.visiting.discard(key)

    def _name_under(self, scope: Any, name: str, ctx: str, depth: int) -> bool:
        if isinstance(scope, cst.FunctionDef) and name in [p.name.value for p in scope.params.params]:
            return self.argument_under(scope, name, ctx, depth)
        bound = self.assignments(scope, name)
        if not bound:
            return False
        for stmt, value in bound:
            if self.inside_context(stmt, scope, ctx):
                if value is not None and not isinstance(value, _Element) and self.forward_outside(scope, value, ctx):
                    return False
                continue
            if isinstance(value, _Element):
                helper = self.nested_defs(scope).get(value.call.func.value) if _calls_name(value.call) else None
                if helper is None or not self.returns_under(helper, ctx, value.index, depth + 1):
                    return False
                continue
            if value is None or not self.under(scope, value, ctx, depth):
                return False
        return True

    def forward_outside(self, scope: Any, value: Any, ctx: str) -> bool:
        """Whether ``value`` (bound under the context) reads a name that a model call binds
        outside it (``output = model(x)`` before ``with amp_autocast(): loss = crit(output, y)``):
        the forward pass would then run in float32 though the loss is under the variable."""
        for name in {n.value for n in walk(value) if isinstance(n, cst.Name)}:
            for stmt, bound in self.assignments(scope, name):
                if (
                    isinstance(bound, cst.Call)
                    and MODEL_CALL.search(code_of(bound.func))
                    and not self.inside_context(stmt, scope, ctx)
                ):
                    self.why = f"the forward pass `{code_of(stmt).strip()}` runs outside `with {ctx}():`"
                    return True
        return False

    def argument_under(self, func: cst.FunctionDef, name: str, ctx: str, depth: int) -> bool:
        """A parameter of a closure: every call of it in the enclosing function passes a
        value computed under ``ctx``."""
        outer = enclosing_function(self.parents, func)
        if outer is None:
            return False
        index = [p.name.value for p in func.params.params].index(name)
        calls = [n for n in self.body_nodes(outer) if isinstance(n, cst.Call) and _is_name(n.func, func.name.value)]
        if not calls:
            return False
        for call in calls:
            positional, keywords = call_args(call)
            arg = keywords.get(name) or (positional[index] if index < len(positional) else None)
            if arg is None or not self.under(outer, arg.value, ctx, depth):
                return False
        return True

    def returns_under(self, func: cst.FunctionDef, ctx: str, index: Optional[int], depth: int) -> bool:
        returns = [n for n in self.body_nodes(func) if isinstance(n, cst.Return)]
        if not returns:
            return False
        for ret in returns:
            value = ret.value
            if index is not None:
                if not isinstance(value, cst.Tuple) or index >= len(value.elements):
                    return False
                value = value.elements[index].value
            if not self.under(func, value, ctx, depth):
                return False
        return True

    def inside_context(self, node: Any, scope: Any, ctx: str) -> bool:
        cur = node
        while cur in self.parents and cur is not scope:
            parent = self.parents[cur]
            if isinstance(parent, cst.With) and cur is parent.body and any(
                isinstance(i.item, cst.Call) and _is_name(i.item.func, ctx) and not i.item.args for i in parent.items
            ):
                return True
            if isinstance(parent, (cst.FunctionDef, cst.Lambda)) and parent is not scope:
                return False
            cur = parent
        return False

    # --- following the variable and the wrapper into functions of the same file -----------

    def wrapper_calls(self, scope: Any, wrapper: str, ctx: str) -> Optional[List[Tuple[Any, cst.Call, str]]]:
        """``(scope, call, ctx there)`` for each call of ``wrapper`` reached from ``scope``,
        following it into same-file functions it is passed to (with ``ctx``); None when it is
        passed to one without ``ctx``."""
        found: List[Tuple[Any, cst.Call, str]] = []
        functions = {s.name.value: s for s in self.rule.tree.body if isinstance(s, cst.FunctionDef)}
        for node in self.body_nodes(scope):
            if not isinstance(node, cst.Call):
                continue
            if _is_name(node.func, wrapper):
                found.append((self.scope_of(node), node, ctx))
                continue
            callee = functions.get(node.func.value) if isinstance(node.func, cst.Name) else None
            if callee is None or callee is scope:
                continue
            wrapper_param = _param_given(callee, node, wrapper)
            if wrapper_param is None:
                continue
            ctx_param = _param_given(callee, node, ctx)
            if ctx_param is None:
                self.why = f"{wrapper} is passed to {callee.name.value}() without {ctx}"
                return None
            inner = self.wrapper_calls(callee, wrapper_param, ctx_param)
            if inner is None:
                return None
            found += inner
        # calls inside closures of ``scope`` see the same names
        for helper in self.nested_defs(scope).values():
            if not _rebinds(helper, (wrapper, ctx)):
                found += [
                    (self.scope_of(n), n, ctx)
                    for n in walk(helper.body)
                    if isinstance(n, cst.Call) and _is_name(n.func, wrapper)
                ]
        return found


class _Element:
    """The ``index``-th element of a tuple a call returns (``loss, out = _forward()``)."""

    def __init__(self, call: Any, index: int) -> None:
        self.call = call
        self.index = index


def _is_name(node: Any, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _calls_name(node: Any) -> bool:
    return isinstance(node, cst.Call) and isinstance(node.func, cst.Name)


def _bound_values(target: Any, value: Any, name: str) -> List[Any]:
    if _is_name(target, name):
        return [value]
    if isinstance(target, (cst.Tuple, cst.List)):
        out: List[Any] = []
        for i, element in enumerate(target.elements):
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(target.elements):
                out += _bound_values(element.value, value.elements[i].value, name)
            elif _is_name(element.value, name):
                out.append(_Element(value, i) if _calls_name(value) else None)
        return out
    return []


def _param_given(func: cst.FunctionDef, call: cst.Call, name: str) -> Optional[str]:
    """The parameter of ``func`` that ``call`` passes the variable ``name`` to."""
    positional, keywords = call_args(call)
    for keyword, arg in keywords.items():
        if _is_name(arg.value, name):
            return keyword
    params = [p.name.value for p in func.params.params]
    for i, arg in enumerate(positional):
        if _is_name(arg.value, name) and i < len(params):
            return params[i]
    return None


def _rebinds(func: cst.FunctionDef, names: Sequence[str]) -> bool:
    params = {p.name.value for p in func.params.params}
    return bool(params & set(names))


def autocast_variable(rule: Any, site: InitSite, constructors: Sequence[cst.Call]) -> Tuple[Optional[str], str]:
    """The no-op context variable to bind to torch.autocast beside ``site`` (the apex
    branch's ``amp.initialize``), given the wrapper constructor calls of that branch; else
    ``(None, why)``."""
    proof = _Proof(rule)
    block = rule.parents.get(site.stmt)
    scope = proof.scope_of(site.stmt)
    candidates = _noop_variables(rule, proof, scope)
    branch_binds: Set[str] = set()
    for node in walk(block):
        if isinstance(node, cst.Assign):
            branch_binds |= {n.value for t in node.targets for n in walk(t.target) if isinstance(n, cst.Name)}
    candidates = [c for c in candidates if c not in branch_binds and _bound_only_around(proof, scope, site, c)]
    if not candidates:
        return None, "no variable bound to a no-op context (suppress, nullcontext) is left as it is on this branch"
    wrappers = []
    for call in constructors:
        stmt = rule.statement_of(call)
        assign = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) else None
        if (
            not isinstance(assign, cst.Assign)
            or assign.value is not call
            or len(assign.targets) != 1
            or not isinstance(assign.targets[0].target, cst.Name)
            or rule.parents.get(stmt) is not block
        ):
            return None, f"{code_of(call)} is not assigned to a name beside amp.initialize"
        wrappers.append((assign.targets[0].target.value, code_of(call.func)))
    for ctx in candidates:
        if all(_losses_under(proof, scope, wrapper, ctx) for wrapper, _ in wrappers):
            return ctx, ""
    names = ", ".join(f"{text}()" for _, text in wrappers)
    return None, proof.why or f"the losses handed to {names} are not all computed under `with {candidates[0]}():`"


def _noop_variables(rule: Any, proof: _Proof, scope: Any) -> List[str]:
    out = []
    for node in proof.body_nodes(scope):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            if isinstance(node.value, (cst.Name, cst.Attribute)) and rule.qualified_names(node.value) & NOOP_CONTEXTS:
                out.append(node.targets[0].target.value)
    return list(dict.fromkeys(out))


def _bound_only_around(proof: _Proof, scope: Any, site: InitSite, name: str) -> bool:
    """Every other binding of ``name`` in ``scope`` is the no-op one, before the ``if`` of
    the initialize, or in another branch of that ``if``."""
    for stmt, value in proof.assignments(scope, name):
        if value is not None and not isinstance(value, _Element) and proof.rule.qualified_names(value) & NOOP_CONTEXTS:
            if proof.rule.line_of(stmt) < proof.rule.line_of(site.anchor):
                continue
            return False
        if not _in(proof.parents, stmt, site.anchor):
            return False
    return True


def inference_context_variable(rule: Any, site: InitSite, name: str) -> bool:
    """Whether ``name``, a context the forward passes after an inference initialize run under
    (``with amp_autocast():``), can be bound to torch.autocast in the initialize's place: a
    variable of its function (no parameter) bound to a no-op context (suppress) before the
    initialize's ``if`` and otherwise only in another branch of that ``if`` (timm's
    ``elif native_amp: amp_autocast = torch.cuda.amp.autocast``).  Then the binding holds on
    exactly the paths where apex cast the forward passes, and nowhere else."""
    proof = _Proof(rule)
    scope = proof.scope_of(site.stmt)
    if not isinstance(scope, cst.FunctionDef) or name in {p.name.value for p in scope.params.params}:
        return False
    if name not in _noop_variables(rule, proof, scope):
        return False
    for stmt, value in proof.assignments(scope, name):
        noop = value is not None and not isinstance(value, _Element) and rule.qualified_names(value) & NOOP_CONTEXTS
        if noop and rule.line_of(stmt) < rule.line_of(site.anchor) and not _in(proof.parents, stmt, site.anchor):
            continue
        if not isinstance(_common_ancestor(proof.parents, stmt, site.stmt), cst.If):
            return False  # it may run before or after the initialize on the same path
    return True


def _common_ancestor(parents: Any, a: Any, b: Any) -> Any:
    """The innermost node holding both ``a`` and ``b``."""
    above = set()
    cur = a
    while cur is not None:
        above.add(id(cur))
        cur = parents.get(cur)
    cur = b
    while cur is not None and id(cur) not in above:
        cur = parents.get(cur)
    return cur


def _in(parents: Any, node: Any, ancestor: Any) -> bool:
    cur = node
    while cur in parents:
        cur = parents[cur]
        if cur is ancestor:
            return True
    return False


def _losses_under(proof: _Proof, scope: Any, wrapper: str, ctx: str) -> bool:
    calls = proof.wrapper_calls(scope, wrapper, ctx)
    if not calls:
        return False
    for where, call, ctx_there in calls:
        positional, keywords = call_args(call)
        loss = keywords.get("loss") or (positional[0] if positional else None)
        if loss is None or not proof.under(where, loss.value, ctx_there):
            return False
    return True


#: loss-scaler wrappers of installed libraries -> their native twin (same calls, same
#: ``state_dict``/``load_state_dict``)
LIBRARY_WRAPPERS = {
    "timm.utils.ApexScaler": "NativeScaler",
    "timm.utils.cuda.ApexScaler": "NativeScaler",
}


def library_wrappers_beside(rule: Any, site: InitSite, info: Any) -> Optional[str]:
    """Fill ``info.library_wrappers`` and ``info.autocast_var`` when the initialize's branch
    creates an installed library's apex loss scaler whose losses are provably computed under
    the launcher's no-op autocast variable; else why not (None: they were filled)."""
    block = rule.parents.get(site.stmt)
    found = [
        n for n in walk(block)
        if isinstance(n, cst.Call) and rule.qualified_names(n.func) & set(LIBRARY_WRAPPERS)
    ]
    if not found:
        return "no amp.scale_loss in this file: the losses are scaled elsewhere"
    ctx, why = autocast_variable(rule, site, found)
    if ctx is None:
        return f"no amp.scale_loss in this file: {code_of(found[0].func)} scales the losses, but {why}"
    info.library_wrappers = found
    info.autocast_var = ctx
    return None


#: the fixed part of the APX216 TODO (reported again by later runs)
LIBRARY_CHECKPOINT_TODO = "which timm's resume_checkpoint no longer reads"


def library_checkpoint_todo(old: str, new: str) -> str:
    """The APX216 TODO: the native scaler's checkpoint entry is not the apex one."""
    return (
        f"{old}() became timm's {new}() (the same calls), which keeps its state under the checkpoint key "
        "'amp_scaler'; ApexScaler kept apex's under 'amp' ({'loss_scaler0': {'loss_scale': s, 'unskipped': n}}), "
        f"{LIBRARY_CHECKPOINT_TODO}: a run resumed from a checkpoint written before this migration restarts "
        "the loss scale at 65536 unless that entry is converted first: "
        "checkpoint['amp_scaler'] = dict(loss_scaler.state_dict(), scale=s, _growth_tracker=n)"
    )
