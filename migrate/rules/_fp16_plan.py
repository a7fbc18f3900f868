"""The analysis half of the FP16_Optimizer rule: which ``FP16_Optimizer(...)`` constructions
can be rewritten (a ``_Plan`` each: where the wrapper lives, its loss-scale settings, the
calls and attributes that use it, the functions it is handed to) and the statement edits
scheduled for them; plus the fp16_utils names and TODO texts the rule shares."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, cast

import libcst as cst

from ._bool_switch import as_bool, scope_at
from ._metadata import ParentProvider
from ._edits import NO_GROWTH, StatementEdits, move_leading
from ._tree import walk
from ._with_wrap import wrapped_in_with
from ._neighbour_base import NeighbourRule, bind_args, code_of, literal_value
from .base import TODO_PREFIX

_MODULES = (
    "apex.fp16_utils",
    "apex.fp16_utils.fp16_optimizer",
    "apex.contrib.optimizers",
    "apex.contrib.optimizers.fp16_optimizer",
    "apex.optimizers",
    "apex.optimizers.fp16_optimizer",
)
FP16_OPTIMIZER = {f"{m}.FP16_Optimizer" for m in _MODULES}
_UTILS = (
    "apex.fp16_utils",
    "apex.fp16_utils.fp16util",
    "apex.fp16_utils.fp16_optimizer",
    "apex.fp16_utils.loss_scaler",
)


def _util(name: str) -> Set[str]:
    return {f"{m}.{name}" for m in _UTILS}


#: wrappers that only cast a model to fp16: with autocast the model stays fp32
CASTS = _util("network_to_half") | _util("FP16Model") | _util("BN_convert_float") | _util("convert_network")
TO_PYTHON_FLOAT = _util("to_python_float")
CLIP_GRAD_NORM = _util("clip_grad_norm")
MANUAL = {
    **{n: "prep_param_lists" for n in _util("prep_param_lists")},
    **{n: "model_grads_to_master_grads" for n in _util("model_grads_to_master_grads")},
    **{n: "master_params_to_model_params" for n in _util("master_params_to_model_params")},
    **{n: "LossScaler" for n in _util("LossScaler")},
    **{n: "DynamicLossScaler" for n in _util("DynamicLossScaler")},
    **{n: "tofp16" for n in _util("tofp16")},
}
STAR_NAMES = (
    "FP16_Optimizer",
    "network_to_half",
    "FP16Model",
    "BN_convert_float",
    "convert_network",
    "to_python_float",
    "clip_grad_norm",
    "prep_param_lists",
    "model_grads_to_master_grads",
    "master_params_to_model_params",
    "LossScaler",
    "DynamicLossScaler",
    "tofp16",
)

FP16_PARAMS = ("init_optimizer", "static_loss_scale", "dynamic_loss_scale", "dynamic_loss_args", "verbose")
DYNAMIC_ARGS = {"init_scale": "init_scale", "scale_window": "growth_interval", "scale_factor": "growth_factor"}

NOT_SIMPLE_TODO = (
    "FP16_Optimizer was removed from apex: keep the model in fp32, run the forward pass and loss under "
    'torch.autocast("cuda", dtype=torch.float16), create scaler = torch.amp.GradScaler("cuda"), and replace '
    "optimizer.backward(loss) with scaler.scale(loss).backward(), clip_master_grads(c) with scaler.unscale_(optimizer) "
    "+ torch.nn.utils.clip_grad_norm_(params, c), optimizer.step() with scaler.step(optimizer); scaler.update()"
)
STATIC_TODO = (
    "FP16_Optimizer used a static loss scale; GradScaler keeps this scale (growth_interval=10**9) but still "
    "skips steps whose gradients overflow and then halves the scale"
)
AUTOCAST_TODO = (
    "the model now stays in fp32: wrap its forward pass and the loss computation in "
    'with torch.autocast("cuda", dtype=torch.float16): to keep mixed precision'
)
LOAD_TODO = (
    'checkpoints written with FP16_Optimizer hold the optimizer state under ["optimizer_state_dict"]: '
    "load that entry when resuming from one written before the migration"
)
CAST_TODO = (
    '{name} was removed from apex: keep the model in fp32 and run its forward pass under torch.autocast("cuda", '
    "dtype=torch.float16)"
)
MANUAL_TODO = (
    "apex.fp16_utils.{name} was removed: replace the manual fp32 master-weight handling with an fp32 model, "
    "torch.autocast and torch.amp.GradScaler"
)


@dataclass
class _Plan:
    """One provable FP16_Optimizer rewrite."""

    target: str  # "optimizer" or "self.optimizer"
    statement: cst.SimpleStatementLine
    inner: str
    scaler: Optional[str]  # None: no loss scaling (static scale 1)
    scaler_args: Optional[List[str]] = None
    construction: Optional[cst.Call] = None
    guard: Optional[cst.If] = None
    params: Optional[str] = None
    model_calls: Set[str] = field(default_factory=set)
    calls: Dict[int, str] = field(default_factory=dict)  # id(Call) -> method
    attributes: Dict[int, str] = field(default_factory=dict)  # id(Attribute) -> what it becomes
    regions: List[cst.CSTNode] = field(default_factory=list)
    static: bool = False
    #: id(call) -> the name the wrapper has there (a parameter in a function it is passed to)
    targets: Dict[int, str] = field(default_factory=dict)
    #: functions of this file the wrapper is passed to: id(def) -> (def, parameter, model parameter)
    threads: Dict[int, Tuple[cst.FunctionDef, str, Optional[str]]] = field(default_factory=dict)
    #: call sites that pass the wrapper to such a function
    thread_calls: Set[int] = field(default_factory=set)


class FP16Planning(NeighbourRule):
    """Finds the provable FP16_Optimizer rewrites and schedules their statement edits."""

    # --- analysis ----------------------------------------------------------------------

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        super().visit_Module(node)
        # ``try: from apex.fp16_utils import * / except ImportError: raise ...`` (NVIDIA's
        # examples and their copies): the star's names resolve as at module level
        self._star_names.update(_guarded_star_names(node, self.STAR_EXPORTS))
        self._edits = StatementEdits()
        self._plans: List[_Plan] = []
        self._plan_calls: Dict[int, _Plan] = {}
        self._plan_attributes: Dict[int, _Plan] = {}
        self._half_calls: Set[int] = set()
        self._dtype_calls: Set[int] = set()
        self._casts_reported = False
        self._cast_calls: Set[int] = set()
        self._rejected: List[Tuple[cst.Call, str]] = []
        self._autocast_todos: Set[int] = set()
        collector = _Collector()
        node.visit(collector)
        self._collected = collector
        for call in collector.calls:
            if self.names_of(call.func) & FP16_OPTIMIZER:
                plan = self._plan(call)
                if plan is not None:
                    self._plans.append(plan)
        if self._plans and self._foreign_backward(collector):
            for plan in self._plans:
                construction = _construction_call(plan.statement)
                if construction is not None:
                    self._rejected.append((construction, NOT_SIMPLE_TODO))
            self._plans = []
        for plan in self._plans:
            self._schedule(plan)
        return True

    def _plan(self, call: cst.Call) -> Optional[_Plan]:
        def reject() -> Optional[_Plan]:
            self._rejected.append((call, NOT_SIMPLE_TODO))
            return None

        stmt = self.parent(self.parent(call))
        parent = self.parent(call)
        if not (
            isinstance(parent, cst.Assign)
            and isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
            and len(parent.targets) == 1
        ):
            return reject()
        target = code_of(parent.targets[0].target)
        bound = bind_args(call, FP16_PARAMS)
        if bound is None or "init_optimizer" not in bound or not set(bound) <= set(FP16_PARAMS):
            return reject()
        is_self = target.startswith("self.") and target.count(".") == 1
        if not (isinstance(parent.targets[0].target, cst.Name) or is_self):
            return reject()
        guard = self._guard(stmt)
        if guard is False:
            return reject()
        scaler_args = self._scaler_args(bound)
        if scaler_args is None:
            return reject()
        args, static = scaler_args
        region = self._region(stmt, is_self)
        used = {code_of(n) for n in self._collected.names_and_attributes}
        if is_self:
            scaler = "self.scaler" if "self.scaler" not in used else "self.grad_scaler"
        else:
            scaler = "scaler" if "scaler" not in used else "grad_scaler"
        if args is None:
            scaler_name: Optional[str] = None
        else:
            scaler_name = scaler
        plan = _Plan(
            target=target,
            statement=stmt,
            inner=code_of(bound["init_optimizer"].value),
            scaler=scaler_name,
            guard=guard or None,
            static=static,
            regions=[region],
        )
        plan.construction = call
        self._find_model(plan, region)
        if not self._uses(plan, region) or not self._thread(plan, region):
            return reject()
        plan.scaler_args = None if args is None else args + ([f"enabled={self._guard_switch(guard)}"] if guard else [])
        return plan

    def _thread(self, plan: _Plan, region: cst.CSTNode) -> bool:
        """The wrapper handed to a function of this file (``train(loader, model, optimizer)``):
        follow it when every call of that function is here and passes it the same way; the
        GradScaler then travels as a new ``scaler`` parameter.  False: not provable."""
        if plan.target.startswith("self."):
            return True
        functions = {stmt.name.value: stmt for stmt in self._module.body if isinstance(stmt, cst.FunctionDef)}
        for call in self._collected.calls:
            if not _inside(self, call, region) or not isinstance(call.func, cst.Name):
                continue
            passed = [a for a in call.args if code_of(a.value) == plan.target]
            if not passed:
                continue
            function = functions.get(call.func.value)
            if function is None or id(function) in plan.threads:
                continue  # not a function of this file (a wrong guess shows as a foreign backward)
            parameter = _parameter_for(function, call, passed[0])
            if parameter is None or "scaler" in _names_used(function) or function.params.star_kwarg is not None:
                return False
            callers = [
                c for c in self._collected.calls if isinstance(c.func, cst.Name) and c.func.value == function.name.value
            ]
            if any(
                not _inside(self, c, region) or _parameter_for(function, c, _arg_passing(c, plan.target)) != parameter
                for c in callers
            ):
                return False
            if not self._uses(plan, function, parameter):
                return False
            model = None
            for model_arg in call.args:
                if code_of(model_arg.value) in plan.model_calls or _is_parameters_owner(plan, model_arg):
                    model = _parameter_for(function, call, model_arg)
            plan.threads[id(function)] = (function, parameter, model)
            plan.regions.append(function)
            plan.thread_calls.update(id(c) for c in callers)
        return True

    def _thread_of(self, plan: _Plan, node: cst.CSTNode) -> Optional[Tuple[cst.FunctionDef, str, Optional[str]]]:
        current = self.parent(node)
        while current is not None:
            if isinstance(current, cst.FunctionDef):
                return plan.threads.get(id(current))
            current = self.parent(current)
        return None

    def _params_at(self, plan: _Plan, node: cst.CSTNode) -> Optional[str]:
        thread = self._thread_of(plan, node)
        if thread is None:
            return plan.params
        model = thread[2]
        return f"{model}.parameters()" if model else None

    def _guard_switch(self, guard: cst.If) -> str:
        """The on/off switch of the guard's test, a real bool (``bool(args.fp16)``)."""
        parents = self.context.wrapper.resolve(ParentProvider)  # type: ignore[union-attr]
        return as_bool(code_of(guard.test), scope_at(parents, guard))

    def _guard(self, stmt: cst.CSTNode):  # type: ignore[no-untyped-def]
        """None: the construction is unconditional; an If: it is the only thing the ``if``
        (without else) decides; False: any other nesting."""
        block = self.parent(stmt)
        owner = self.parent(block)
        if isinstance(block, cst.Module) or isinstance(owner, (cst.FunctionDef,)):
            return None
        if isinstance(owner, cst.If) and owner.orelse is None and isinstance(block, cst.IndentedBlock):
            outer = self.parent(self.parent(owner))
            if isinstance(self.parent(owner), cst.Module) or isinstance(outer, cst.FunctionDef):
                return owner
        return False

    def _scaler_args(self, bound: Dict[str, cst.Arg]) -> Optional[Tuple[Optional[List[str]], bool]]:
        """GradScaler keyword arguments for the wrapper's loss-scale settings; ``(None, _)``
        means no scaling at all; ``None`` means they cannot be read."""
        static = bound.get("static_loss_scale")
        dynamic = bound.get("dynamic_loss_scale")
        dynamic_value = literal_value(dynamic.value) if dynamic is not None else False
        dynamic_args: List[str] = []
        if "dynamic_loss_args" in bound:
            value = bound["dynamic_loss_args"].value
            if literal_value(value) is None:
                pass
            elif isinstance(value, cst.Dict):
                for element in value.elements:
                    if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                        return None
                    key = element.key.evaluated_value
                    if key not in DYNAMIC_ARGS:
                        return None
                    text = code_of(element.value)
                    if key == "scale_factor":
                        if literal_value(element.value) in (2, 2.0):
                            continue
                        dynamic_args += [f"growth_factor={text}", f"backoff_factor=1 / {text}"]
                    else:
                        dynamic_args.append(f"{DYNAMIC_ARGS[key]}={text}")
            else:
                return None
        if dynamic_value is True:
            return dynamic_args, False
        if dynamic is None or dynamic_value is False:
            if static is None or literal_value(static.value) in (1, 1.0):
                return None, False
            return [f"init_scale={code_of(static.value)}", f"growth_interval={NO_GROWTH}"], True
        if dynamic_args or static is None:
            return None
        # chosen at run time: GradScaler's dynamic defaults, or the static scale, kept from growing
        flag = code_of(dynamic.value)
        static_text = code_of(static.value)
        return [
            f"init_scale=2.0**16 if {flag} else {static_text}",
            f"growth_interval=2000 if {flag} else {NO_GROWTH}",
        ], True

    def _region(self, stmt: cst.CSTNode, is_self: bool) -> cst.CSTNode:
        node = self.parent(stmt)
        while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
            node = self.parent(node)
        if is_self:
            while node is not None and not isinstance(node, (cst.ClassDef, cst.Module)):
                node = self.parent(node)
        return cast(cst.CSTNode, node)  # the Module at the latest

    def _uses(self, plan: _Plan, region: cst.CSTNode, target: Optional[str] = None) -> bool:
        """Classify every use of the wrapper (``target`` in ``region``); False if one is not
        supported."""
        target = target or plan.target
        finder = _AttributeUses(target)
        region.visit(finder)
        construction = _construction_call(plan.statement)
        for attribute in finder.uses:
            parent = self.parent(attribute)
            name = attribute.attr.value
            if isinstance(parent, cst.Call) and parent.func is attribute:
                method = self._method_use(plan, parent, name)
                if method is None:
                    return False
                plan.calls[id(parent)] = method
                plan.targets[id(parent)] = target
            elif name == "optimizer":
                plan.attributes[id(attribute)] = target
            elif name in ("loss_scale", "cur_scale") and plan.scaler:
                plan.attributes[id(attribute)] = f"{plan.scaler}.get_scale()"
            elif name in ("param_groups", "state"):
                continue
            elif attribute is not getattr(construction, "func", None):
                return False
        return True

    def _method_use(self, plan: _Plan, call: cst.Call, method: str) -> Optional[str]:
        stmt = self.parent(self.parent(call))
        expression_statement = (
            isinstance(self.parent(call), cst.Expr)
            and isinstance(stmt, cst.SimpleStatementLine)
            and len(stmt.body) == 1
        )
        if method == "backward":
            bound = bind_args(call, ("loss", "update_master_grads", "retain_graph"))
            if not expression_statement or bound is None or "loss" not in bound:
                return None
            if "update_master_grads" in bound and literal_value(bound["update_master_grads"].value) is not True:
                return None
            return "backward"
        if method == "clip_master_grads":
            parent = self.parent(call)
            assigned = (
                isinstance(parent, cst.Assign) and isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1
            )
            if not (expression_statement or assigned) or any(a.star for a in call.args) or not call.args:
                return None
            return "clip"
        if method == "step":
            return "step" if expression_statement and not call.args else None
        if method == "zero_grad":
            return "zero_grad"
        if method == "state_dict":
            return "keep"
        if method == "load_state_dict":
            return "load"
        return None

    def _foreign_backward(self, collector: "_Collector") -> bool:
        """Some ``x.backward(loss)`` that is not one of the planned calls: the wrapper travels
        further than this rule can follow."""
        planned = {call_id for plan in self._plans for call_id in plan.calls}
        for call in collector.calls:
            func = call.func
            if not (isinstance(func, cst.Attribute) and func.attr.value == "backward"):
                continue
            if not any(a.keyword is None for a in call.args) or id(call) in planned:
                continue
            if any(name.startswith("torch") for name in self.names_of(func.value)):
                continue
            return True
        return False

    def _find_model(self, plan: _Plan, region: cst.CSTNode) -> None:
        """The model: whose ``.parameters()`` the wrapped optimizer got."""
        built = [a.value for a in self._collected.assigns if code_of(a.targets[0].target) == plan.inner]
        if plan.construction is not None:
            built.append(plan.construction.args[0].value)
        for value in built:
            first = value.args[0].value if isinstance(value, cst.Call) and value.args else None
            if (
                isinstance(first, cst.Call)
                and isinstance(first.func, cst.Attribute)
                and first.func.attr.value == "parameters"
                and not first.args
            ):
                plan.params = code_of(first)
                plan.model_calls.add(code_of(first.func.value))
                return

    def _schedule(self, plan: _Plan) -> None:
        """Plan the statement edits: the construction, unscale_/update around clip/step,
        autocast around the forward pass, and the fp16 casts that go."""
        new: List[cst.BaseStatement] = []
        if plan.target != plan.inner:
            new.append(cst.parse_statement(f"{plan.target} = {plan.inner}\n"))
        scaler_stmt = None
        if plan.scaler and plan.scaler_args is not None:
            modern = self.settings.torch_at_least(2, 3)
            func = code_of(
                self.torch_name("torch.amp.GradScaler" if modern else "torch.cuda.amp.GradScaler", plan.construction)
            )
            anchor = plan.guard if plan.guard is not None else plan.statement
            scaler_stmt = self.call_statement(
                f"{plan.scaler} = {func}", (['"cuda"'] if modern else []) + plan.scaler_args, anchor
            )
        if scaler_stmt is not None and plan.static and self.settings.code_enabled("APX703"):
            scaler_stmt = scaler_stmt.with_changes(
                leading_lines=[cst.EmptyLine(comment=cst.Comment(TODO_PREFIX + STATIC_TODO))]
            )
        if plan.guard is None:
            if scaler_stmt is not None:
                new.append(scaler_stmt)

            def construction(updated: cst.BaseStatement, new: List[cst.BaseStatement] = new) -> List[cst.BaseStatement]:
                return _keep_leading(updated, new)

            self._edits.replace(plan.statement, construction)
        else:
            self._edits.replace(plan.statement, new)
            others = [s for s in plan.guard.body.body if s is not plan.statement]
            remaining = [s for s in others if not self._removable_cast(s)]
            if scaler_stmt is not None:
                if remaining:
                    self._edits.insert_after(plan.guard, [scaler_stmt])
                else:
                    self._edits.replace(plan.guard, _keep_leading(plan.guard, [scaler_stmt]))
        for region in plan.regions:
            finder = _HalfCasts(self)
            region.visit(finder)
            for call in finder.half_calls:
                self._half_calls.add(id(call))
            for call in finder.cast_calls:
                self._cast_calls.add(id(call))
            for call in finder.dtype_calls:
                self._dtype_calls.add(id(call))
            for cast_stmt in finder.cast_statements:
                if cast_stmt is not plan.statement:
                    self._edits.replace(cast_stmt, [])
                    guard = self.parent(self.parent(cast_stmt))
                    if (
                        isinstance(guard, cst.If)
                        and guard.orelse is None
                        and guard is not plan.guard
                        and all(s in finder.cast_statements for s in guard.body.body)
                    ):
                        self._edits.replace(guard, [])
        for call_id in plan.calls:
            self._plan_calls[call_id] = plan
        for attribute_id in plan.attributes:
            self._plan_attributes[attribute_id] = plan
        for call in self._collected.calls:
            method = plan.calls.get(id(call))
            stmt = self.parent(self.parent(call))
            if stmt is None:
                continue
            if method == "clip" and plan.scaler:
                target = plan.targets.get(id(call), plan.target)
                self._edits.insert_before(stmt, [cst.parse_statement(f"{plan.scaler}.unscale_({target})\n")])
            elif method == "step" and plan.scaler:
                self._edits.insert_after(stmt, [cst.parse_statement(f"{plan.scaler}.update()\n")])
            elif method == "backward":
                self._schedule_autocast(plan, call, stmt)

    def _removable_cast(self, stmt: cst.CSTNode) -> bool:
        finder = _HalfCasts(self)
        stmt.visit(finder)
        return stmt in finder.cast_statements

    def _schedule_autocast(self, plan: _Plan, call: cst.Call, stmt: cst.CSTNode) -> None:
        loss_names = {code_of(n) for n in _names_in(call.args[0].value)}
        child: Any = stmt
        while True:
            block = self.parent(child)
            if isinstance(block, (cst.IndentedBlock, cst.Module)):
                body: List[Any] = list(block.body)
                index = body.index(child)
                span = self._forward_span(plan, body[:index], loss_names)
                if span is not None:
                    start, end = span
                    members = body[start : end + 1]
                    enabled = ""
                    if plan.guard is not None:
                        inside = self._thread_of(plan, call)
                        enabled = (
                            f", enabled={plan.scaler}.is_enabled()"
                            if inside
                            else f", enabled={self._guard_switch(plan.guard)}"
                        )
                    autocast = code_of(self.torch_name("torch.autocast", call))
                    float16 = code_of(self.torch_name("torch.float16", call))
                    header = f'with {autocast}("cuda", dtype={float16}{enabled}):\n    pass\n'

                    indent = self._default_indent
                    self._edits.wrap(members, lambda ups, header=header: wrapped_in_with(header, ups, indent))
                    return
            owner = self.parent(block)
            if isinstance(owner, (cst.If, cst.Else)) or isinstance(self.parent(owner), cst.If):
                child = owner if isinstance(owner, cst.If) else self.parent(owner)
                while isinstance(self.parent(child), cst.If):  # elif chains
                    child = self.parent(child)
                continue
            break
        self._autocast_todos.add(id(call))

    def _forward_span(self, plan: _Plan, before: List[cst.CSTNode], loss_names: Set[str]) -> Optional[Tuple[int, int]]:
        end = None
        for i in range(len(before) - 1, -1, -1):
            if loss_names & _assigned_names(before[i]):
                end = i
                break
        if end is None:
            return None
        for i in range(0, end + 1):
            if plan.model_calls & _called_names(before[i]) and not _has_with(before[i : end + 1]):
                return i, end
        return None


def _guarded_star_names(module: cst.Module, exports: Dict[str, Tuple[str, ...]]) -> Dict[str, str]:
    """Bare name -> qualified name for ``from <module> import *`` nested in a module-level
    ``try``/``if`` (a star import is only allowed at module level, so any one is)."""
    found: Dict[str, str] = {}
    for node in walk(module):
        if (
            isinstance(node, cst.ImportFrom)
            and isinstance(node.names, cst.ImportStar)
            and node.module is not None
            and not node.relative
        ):
            base = code_of(node.module)
            for name in exports.get(base, ()):
                found[name] = f"{base}.{name}"
    return found


def _construction_call(stmt: cst.SimpleStatementLine) -> Optional[cst.Call]:
    small = stmt.body[0]
    return small.value if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) else None


def _keep_leading(original: Any, new: List[Any]) -> List[Any]:
    if new and original.leading_lines:
        new = [move_leading(original, new[0])] + new[1:]
    return new


def _names_in(node: cst.CSTNode) -> List[cst.CSTNode]:
    return [n for n in walk(node) if isinstance(n, cst.Name)]


def _assigned_names(stmt: cst.CSTNode) -> Set[str]:
    names: Set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_AssignTarget(self, n: cst.AssignTarget) -> None:
            names.update(code_of(x) for x in _names_in(n.target))

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            names.add(code_of(n.target))

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            names.add(code_of(n.target))

    stmt.visit(_V())
    return names


def _called_names(stmt: cst.CSTNode) -> Set[str]:
    return {code_of(n.func) for n in walk(stmt) if isinstance(n, cst.Call)}


def _has_with(stmts: Sequence[cst.CSTNode]) -> bool:
    return any(isinstance(s, cst.With) for s in stmts)


class _Collector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.calls: List[cst.Call] = []
        self.assigns: List[cst.Assign] = []
        self.names_and_attributes: List[cst.CSTNode] = []

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1:
            self.assigns.append(node)

    def visit_Name(self, node: cst.Name) -> None:
        self.names_and_attributes.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.names_and_attributes.append(node)


class _AttributeUses(cst.CSTVisitor):
    """``<target>.<attr>`` nodes (``target`` is a name or ``self.x``)."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target
        self.uses: List[cst.Attribute] = []

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if code_of(node.value) == self.target:
            self.uses.append(node)


class _HalfCasts(cst.CSTVisitor):
    """``x.half()`` calls, apex fp16 model wrappers, and statements left with nothing to do
    once they are gone (``model.half()``, ``model = network_to_half(model)``)."""

    def __init__(self, rule: FP16Planning) -> None:
        super().__init__()
        self.rule = rule
        self.half_calls: List[cst.Call] = []
        self.cast_calls: List[cst.Call] = []
        self.cast_statements: List[cst.CSTNode] = []
        self.dtype_calls: List[cst.Call] = []

    def _half(self, arg: cst.Arg) -> bool:
        return bool(self.rule.names_of(arg.value) & {"torch.half", "torch.float16"})

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "half" and not node.args:
            self.half_calls.append(node)
        elif _is_method(func, "to") and len(node.args) == 1 and self._half(node.args[0]):
            if node.args[0].keyword is None or node.args[0].keyword.value == "dtype":
                self.half_calls.append(node)
        elif any(a.keyword is not None and a.keyword.value == "dtype" and self._half(a) for a in node.args):
            torch_factory = any(n.startswith("torch.") for n in self.rule.names_of(func))
            if torch_factory or _is_method(func, "to"):
                self.dtype_calls.append(node)
        elif self.rule.names_of(func) & CASTS and node.args and not node.args[0].keyword:
            converts_to = [a for a in node.args[1:]]
            if not converts_to or all(code_of(a.value).endswith(("half", "float16")) for a in converts_to):
                self.cast_calls.append(node)

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) != 1:
            return
        small = node.body[0]
        if isinstance(small, cst.Expr):
            stripped = _strip_casts(self.rule, small.value)
            if stripped is not small.value and isinstance(stripped, (cst.Name, cst.Attribute)):
                self.cast_statements.append(node)
        elif isinstance(small, cst.Assign) and len(small.targets) == 1:
            stripped = _strip_casts(self.rule, small.value)
            if stripped is not small.value and code_of(stripped) == code_of(small.targets[0].target):
                self.cast_statements.append(node)


def _inside(rule: NeighbourRule, node: cst.CSTNode, region: cst.CSTNode) -> bool:
    current: Optional[cst.CSTNode] = node
    while current is not None:
        if current is region:
            return True
        current = rule.parent(current)
    return False


def _arg_passing(call: cst.Call, value: str) -> Optional[cst.Arg]:
    return next((a for a in call.args if code_of(a.value) == value), None)


def _parameter_for(function: cst.FunctionDef, call: cst.Call, arg: Optional[cst.Arg]) -> Optional[str]:
    """The parameter of ``function`` that ``arg`` of ``call`` binds to."""
    if arg is None or arg.star:
        return None
    if arg.keyword is not None:
        names = [p.name.value for p in (*function.params.params, *function.params.kwonly_params)]
        return arg.keyword.value if arg.keyword.value in names else None
    index = [a for a in call.args if a.keyword is None].index(arg)
    positional = [*function.params.posonly_params, *function.params.params]
    return positional[index].name.value if index < len(positional) else None


def _names_used(node: cst.CSTNode) -> Set[str]:
    return {code_of(n) for n in _names_in(node)}


def _is_parameters_owner(plan: _Plan, arg: cst.Arg) -> bool:
    return plan.params is not None and plan.params == f"{code_of(arg.value)}.parameters()"


def _is_method(func: cst.BaseExpression, name: str) -> bool:
    return isinstance(func, cst.Attribute) and func.attr.value == name


def _strip_casts(rule: FP16Planning, node: cst.BaseExpression) -> cst.BaseExpression:
    while True:
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "half"
            and not node.args
        ):
            node = node.func.value
        elif isinstance(node, cst.Call) and rule.names_of(node.func) & CASTS and node.args:
            node = node.args[0].value
        else:
            return node
