"""The device a script trains on, where it chooses it at run time.

``model.to(device)``, ``model = Net().to(args.device)``, inputs moved with
``x.to(device)``: then autocast and the GradScaler follow that device
(``torch.autocast(device.type, ...)``, ``GradScaler(device.type, ...)``), so the migrated
script trains with mixed precision on a CUDA machine and on the CPU alike, without "CUDA is
not available" warnings.  Where the device is not named (``.cuda()``, nothing), ``"cuda"``
stays, as apex only ran there.  A device expression is used only when its name is bound
whenever the new code runs (``_binding.bound_at``).
"""

from __future__ import annotations

from typing import Any, Iterable, List, Optional, cast

import libcst as cst
from libcst.metadata import ScopeProvider

from ._binding import bound_at, param_names
from ._edits import code_of
from ._tree import walk, walk_of

CUDA = '"cuda"'
#: a function parameter that names the device its caller chose
DEVICE_PARAM = "device"


def _simple(node: Any) -> bool:
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _root(node: Any) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value


def _to_target(call: Any) -> Optional[cst.BaseExpression]:
    """``X`` of ``something.to(X)`` / ``.to(device=X)`` when X is a name or attribute chain."""
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value == "to"):
        return None
    args = [a for a in call.args if a.keyword is None or a.keyword.value == "device"]
    if not args or args[0].star:
        return None
    value = args[0].value
    return value if _simple(value) else None


def _regions(rule: Any, node: Any) -> Iterable[Any]:
    """The functions around ``node``, innermost first, then the module."""
    cur = node
    while cur in rule.parents:
        cur = rule.parents[cur]
        if isinstance(cur, cst.FunctionDef):
            yield cur
    yield rule.tree


def _assigned_from_torch_device(rule: Any, region: Any, name: str) -> bool:
    for stmt in walk(region):
        if (
            isinstance(stmt, cst.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0].target, cst.Name)
            and stmt.targets[0].target.value == name
            and isinstance(stmt.value, cst.Call)
            and "torch.device" in rule.qualified_names(stmt.value.func)
        ):
            return True
    return False


def device_type_at(rule: Any, node: Any, model_texts: Iterable[str]) -> str:
    """The device-type expression for autocast or a GradScaler placed at ``node``: where
    the models (``model_texts``) are moved with ``.to(X)``, else where the function moves
    tensors to something named like a device; ``"cuda"`` when nothing is provable."""
    if not rule.settings.torch_at_least(2, 3):
        return CUDA  # no CPU GradScaler before torch 2.3: apex's CUDA it stays
    ordered = list(model_texts)
    models = set(ordered)
    scope = rule.get_metadata(ScopeProvider, node, None)
    if scope is None:
        return CUDA
    for region in _regions(rule, node):
        on_model, on_data = [], []
        for sub in walk_of(region, cst.Call):
            target = _to_target(sub)
            if target is None:
                continue
            receiver = code_of(cast(cst.Call, sub).func.value)  # type: ignore[attr-defined]
            holder = rule.parents.get(sub)
            assigned = (
                isinstance(holder, cst.Assign) and len(holder.targets) == 1 and code_of(holder.targets[0].target)
            )
            if receiver in models or assigned in models:
                on_model.append(target)
            elif "device" in code_of(target).lower():
                on_data.append(target)
        for target in on_model + on_data:
            root = _root(target)
            if not bound_at(root, node, rule.parents.get, scope):
                continue
            if _guarded_elsewhere(rule, target, node) or _unset_on_self(rule, target, node):
                continue
            text = code_of(target)
            if isinstance(target, cst.Name) and _assigned_from_torch_device(rule, region, text):
                return f"{text}.type"
            return f"torch.device({text}).type"
        if isinstance(region, cst.FunctionDef) and DEVICE_PARAM in param_names(region.params):
            # ``def do_train(model, loader, optimizer, device)``: the caller chose the device
            return f"torch.device({DEVICE_PARAM}).type"
    return (
        _module_method_device(rule, node)
        or _module_scaler_device(rule, node, ordered, scope)
        or _handed_device(rule, node)
        or CUDA
    )


def parameters_device(module: str) -> str:
    """The device type of the first parameter of ``module`` (an expression), ``"cuda"``
    where it has none (``next(module.parameters())`` would raise StopIteration there)."""
    return f"next((p.device.type for p in {module}.parameters()), {CUDA})"


def optimizer_device(optimizer: str) -> str:
    """The device type of the first parameter ``optimizer`` steps, ``"cuda"`` where it steps
    none (its first group may be empty: ``param_groups[0]["params"][0]`` would raise)."""
    return f'next((p.device.type for g in {optimizer}.param_groups for p in g["params"]), {CUDA})'


def switched_device(device: str, enabled: str) -> str:
    """``device`` for a GradScaler switched by ``enabled=``: where it reads the models
    (``parameters_device``), only while amp is on (``"cuda"`` off, where apex's initialize
    returned what it was given unchecked, which may be no module at all)."""
    literal = enabled in ("True", "False")
    if ".parameters()" not in device or not enabled or literal and enabled == "True":
        return device
    return CUDA if literal else f"{device} if {enabled} else {CUDA}"


def _handed_device(rule: Any, node: Any) -> Optional[str]:
    """In a caller of a method that computes its loss from the outputs it is handed (APX253,
    ``_amp_handed_outputs``): the device of the first parameter the optimizer that method
    scales for steps, read on ``self`` of the caller."""
    devices = getattr(rule, "handed_devices", None) or {}
    func = next((r for r in _regions(rule, node) if isinstance(r, cst.FunctionDef)), None)
    return devices.get(func)


def _guarded_elsewhere(rule: Any, target: Any, node: Any) -> bool:
    """``if self.accelerator is not None: teacher.to(self.accelerator.device)`` while ``node``
    is on the other branch: an attribute of an attribute (``self.accelerator.device``) moved
    to inside an ``if`` branch that does not also hold ``node`` may not exist where ``node``
    runs (its holder None there), so it names no device there."""
    if not isinstance(target, cst.Attribute) or not isinstance(target.value, cst.Attribute):
        return False
    cur = target
    while cur in rule.parents:
        parent = rule.parents[cur]
        if isinstance(parent, (cst.If, cst.Else)) and cur is parent.body:
            return not _is_within(rule, node, cur)
        if isinstance(parent, (cst.FunctionDef, cst.Module)):
            return False
        cur = parent
    return False


def _unset_on_self(rule: Any, target: Any, node: Any) -> bool:
    """``self.device`` (``self.device.x``) in a method whose ``self`` is not sure to have it
    when ``node`` runs: the class sets it, but not at the top level of its ``__init__`` nor
    before ``node`` on its path through its own method; or it sets it nowhere and names no
    base class that could.  The ``.to(self.device)`` that
    named it may be in another method, or in a branch (EfficientSegmentation sets it only
    for distributed training, one of its trainers nowhere): reading it at ``node`` could
    raise AttributeError where apex's code never read it."""
    first = target
    while isinstance(first, cst.Attribute) and isinstance(first.value, cst.Attribute):
        first = first.value
    if not (isinstance(first, cst.Attribute) and isinstance(first.value, cst.Name)):
        return False
    func = next((r for r in _regions(rule, node) if isinstance(r, cst.FunctionDef)), None)
    params = func.params.params if func is not None else ()
    me, attr = first.value.value, first.attr.value
    if not params or params[0].name.value != me:
        return False  # not the method's own object
    if _set_before(rule, func, node, me, attr):
        return False
    block = rule.parents.get(func)
    cls = rule.parents.get(block) if block is not None else None
    if not isinstance(cls, cst.ClassDef):
        return False
    methods = [m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.params.params]
    if not any(_sets(stmt, m.params.params[0].name.value, attr) for m in methods for stmt in walk(m)):
        # set nowhere in the class: by a base class it names (not seen here), else by nobody
        return not any(code_of(base.value) != "object" for base in cls.bases)
    for method in methods:
        if method.name.value == "__init__" and method is not func:
            own = method.params.params[0].name.value
            return not _block_sets(method.body, own, attr)
    return True


def _set_before(rule: Any, func: Any, node: Any, me: str, attr: str) -> bool:
    """A statement sets ``me.attr`` before ``node`` in its own block or an enclosing one of
    ``func`` (not in a sibling branch, not later)."""
    current = node
    parent = rule.parents.get(current)
    while parent is not None and current is not func:
        if isinstance(parent, cst.IndentedBlock):
            for stmt in parent.body:
                if stmt is current:
                    break
                if _sets_on_every_path(stmt, me, attr):
                    return True
        current, parent = parent, rule.parents.get(parent)
    return False


def _sets_on_every_path(stmt: Any, me: str, attr: str) -> bool:
    """``stmt`` sets ``me.attr``, or is an if/elif/else chain with an ``else`` each branch of
    which sets it or raises (simpletransformers: ``if use_cuda: ... self.device =
    torch.device("cuda") ... else: raise ...`` / ``else: self.device = "cpu"``)."""
    if isinstance(stmt, cst.If):
        branch: Any = stmt
        while isinstance(branch, cst.If):
            if not _block_sets(branch.body, me, attr):
                return False
            branch = branch.orelse
        return isinstance(branch, cst.Else) and _block_sets(branch.body, me, attr)
    return _sets(stmt, me, attr)


def _block_sets(block: Any, me: str, attr: str) -> bool:
    """A statement of ``block`` sets ``me.attr`` on every path, or the block ends raising."""
    body = list(block.body) if isinstance(block, cst.IndentedBlock) else []
    if any(_sets_on_every_path(stmt, me, attr) for stmt in body):
        return True
    last = body[-1] if body else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Raise) for s in last.body)


def _sets(stmt: Any, me: str, attr: str) -> bool:
    """``stmt`` is a simple statement line that assigns ``me.attr``."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
        if isinstance(small, cst.AnnAssign) and small.value is not None:
            targets = [small.target]
        for target in targets:
            parts = target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]
            for part in parts:
                value = part.value if isinstance(part, (cst.Element, cst.StarredElement)) else part
                if (
                    isinstance(value, cst.Attribute)
                    and isinstance(value.value, cst.Name)
                    and value.value.value == me
                    and value.attr.value == attr
                ):
                    return True
    return False


def _is_within(rule: Any, node: Any, block: Any) -> bool:
    cur = node
    while cur is not None and cur is not block:
        cur = rule.parents.get(cur)
    return cur is block


def _module_method_device(rule: Any, node: Any) -> Optional[str]:
    """In a method of a ``torch.nn.Module`` subclass that takes the GradScaler from another
    file (the cross-file plan's method entries: ``GAN.train_step``), the device the
    launcher moved the module to: that of its parameters."""
    plan = rule.repo_plan()
    if plan is None or not plan.method_entries:
        return None
    func: Any = next((r for r in _regions(rule, node) if isinstance(r, cst.FunctionDef)), None)
    block = rule.parents.get(func) if func is not None else None
    cls = rule.parents.get(block) if block is not None else None
    if not isinstance(cls, cst.ClassDef) or (cls.name.value, func.name.value) not in plan.method_entries:
        return None
    if not any("torch.nn.Module" in rule.qualified_names(base.value) for base in cls.bases):
        return None
    me = func.params.params[0].name.value
    return parameters_device(me)


def _module_scaler_device(rule: Any, node: Any, models: List[str], scope: Any) -> Optional[str]:
    """Where the module-scaler route's home initializes apex for models it is handed (a
    parameter of its function, in a list or as it is) or a reader scales a loss for an
    optimizer it holds (a name, an attribute, one literal key of a dict of them), and no
    ``.to(device)`` is in sight: the device of the first model's parameters, or of the first
    parameter that optimizer steps (apex ran where they are)."""
    plan = rule.repo_plan()
    if plan is None or not (plan.module_readers or plan.module_reader):
        return None
    func: Any = next((r for r in _regions(rule, node) if isinstance(r, cst.FunctionDef)), None)
    if func is None:
        return None
    if plan.module_readers:
        # only the networks of a list given to amp.initialize are surely modules (a name
        # may hold a list of them)
        params = param_names(func.params)
        listed = [
            code_of(e.value)
            for sub in walk(func.body)
            if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value == "initialize"
            and sub.args and isinstance(sub.args[0].value, (cst.List, cst.Tuple))
            for e in sub.args[0].value.elements
        ]
        first = next((m for m in models if m in params and m in listed), None)
        if first:
            return parameters_device(first)
        # a parameter handed to amp.initialize as it is: a module or a list of them, as apex
        # took (it raised on anything else)
        given = next((m for m in models if m in params and m in _handed_whole(func)), None)
        return parameters_device(f"({given}[0] if isinstance({given}, list) else {given})") if given else None
    nodes = list(walk(func.body))
    start = nodes.index(node) if node in nodes else 0
    # the optimizer of the scale_loss that follows ``node`` first (the loss computed there)
    for sub in nodes[start:] + nodes[:start]:
        callee = sub.func if isinstance(sub, cst.Call) else None
        if not (isinstance(callee, cst.Attribute) and callee.attr.value == "scale_loss" and len(sub.args) >= 2):
            continue
        opt = _keyed(sub.args[1].value)
        if sub.args[1].keyword is None and opt is not None and bound_at(_root(opt), node, rule.parents.get, scope):
            return optimizer_device(code_of(sub.args[1].value))
    return _helper_optimizer_device(rule, func, node, scope)


def _helper_optimizer_device(rule: Any, func: Any, node: Any, scope: Any) -> Optional[str]:
    """A reader's caller of the function that scales (vissl's ``self.run_backward(task,
    loss)``, its forward pass here): the scaled optimizer in the caller's names, where the
    helper's optimizer starts from a parameter the call passes a name for."""
    found: List[Any] = []
    for stmt in rule.tree.body:
        if isinstance(stmt, cst.FunctionDef):
            found.append(stmt)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            found += [m for m in stmt.body.body if isinstance(m, cst.FunctionDef)]
    names = [d.name.value for d in found]
    defined = {d.name.value: d for d in found if names.count(d.name.value) == 1}  # one definition only
    for call in walk(func.body):
        if not isinstance(call, cst.Call):
            continue
        name = call.func.attr.value if isinstance(call.func, cst.Attribute) else getattr(call.func, "value", None)
        helper = defined.get(name) if isinstance(name, str) else None
        if helper is None or helper is func:
            continue
        params = [p.name.value for p in helper.params.params]
        static = any(code_of(d.decorator) == "staticmethod" for d in helper.decorators)
        if isinstance(call.func, cst.Attribute) and not static and isinstance(rule.parents.get(rule.parents.get(helper)), cst.ClassDef):
            params = params[1:]
        passed = {
            params[i]: a.value.value for i, a in enumerate(call.args)
            if i < len(params) and a.keyword is None and not a.star and isinstance(a.value, cst.Name)
        }
        for sub in walk(helper.body):
            inner = sub.func if isinstance(sub, cst.Call) else None
            if not (isinstance(inner, cst.Attribute) and inner.attr.value == "scale_loss" and len(sub.args) >= 2):
                continue
            opt = sub.args[1].value
            if sub.args[1].keyword is not None or not _simple(opt) or _root(opt) not in passed:
                continue
            root = passed[_root(opt)]
            if bound_at(root, node, rule.parents.get, scope):
                text = root + code_of(opt)[len(_root(opt)):]
                return optimizer_device(text)
    return None


def _handed_whole(func: Any) -> List[str]:
    """The names ``func`` hands to ``amp.initialize`` as its first argument (not in a list)."""
    return [
        sub.args[0].value.value
        for sub in walk(func.body)
        if isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value == "initialize"
        and sub.args and sub.args[0].keyword is None and not sub.args[0].star and isinstance(sub.args[0].value, cst.Name)
    ]


def _keyed(node: Any) -> Optional[Any]:
    """The name or attribute chain of ``node`` (``opt``, ``self.opt_G``), also under one
    literal key (``optimizer["generator"]``, a dict of optimizers); else None."""
    if (
        isinstance(node, cst.Subscript)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
        and isinstance(node.slice[0].slice.value, (cst.SimpleString, cst.Integer))
    ):
        node = node.value
    return node if _simple(node) else None
