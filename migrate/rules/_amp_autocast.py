"""Autocast placement for the initialize rule: find the forward pass and loss computation
that feed each ``amp.scale_loss`` (in the same block, or at the callers of a ``backward``
helper) and wrap them in ``torch.autocast``, switched on and off like the GradScaler
(APX209); say so where they cannot be found (APX210)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple, cast

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from ._amp_after_backward import plain_term_after, remember
from ._amp_context_var import autocast_variable
from ._amp_device import device_type_at
from ._amp_loss_loop import loss_loop_spans
from ._amp_partial import bound_offset
from ._amp_held import held_model_texts as held_route_models
from ._amp_grad_off_span import grad_off_span_reason
from ._amp_handed_outputs import handed_output_spans
from ._amp_models import held_model_texts, wrapped_models
from ._amp_module_scaler import first_body_statement
from ._amp_rule import AmpRule
from ._amp_caller_steps import stepped_helper
from ._amp_sites import (
    backs_loss_in,
    PRECISION_CONTEXTS,
    MODEL_CALL,
    AmpFile,
    _callers,
    InitSite,
    ScaleLossSite,
    assigned_names,
    find_steps,
    call_args,
    class_of_method,
    code_of,
    enclosing,
    heirs,
    is_nested_in,
    loss_of_call,
    self_name,
    walk,
)
from ._binding import param_names
from ._edits import expression, statement
from ._plain_step_callers import calls_on_other_objects
from ._tree import children, is_docstring
from ._with_wrap import wrapped_in_with
from ..forward_fed import forward_fed

_BARRIER_CALLS = ("step", "backward")
#: a context that only turns gradients on: the training forward pass may run inside it
_GRAD_ON = frozenset({"enable_grad"})
#: contexts that only turn gradients off: metrics or a teacher's forward pass inside the span
_GRAD_OFF = frozenset({"no_grad", "inference_mode"})
#: the native autocast context managers whose switch can be widened
_AUTOCAST_NAMES = frozenset({"torch.autocast", "torch.amp.autocast", "torch.amp.autocast_mode.autocast"})
#: calls into torch itself (``torch.Generator()``, ``torch.randn``) are data, not the model
_TORCH_API = ("torch.", "nn.", "F.")
#: methods that fill a container in place (what a loop of forward passes collects)
_FILLING_METHODS = frozenset({"append", "extend", "insert", "update", "add", "setdefault"})
#: nn.Module methods that are not the forward pass
_NOT_FORWARD = frozenset(
    "train eval zero_grad to cuda cpu half float double bfloat16 parameters named_parameters buffers "
    "named_buffers children modules named_modules state_dict load_state_dict apply requires_grad_ "
    "register_forward_hook register_forward_pre_hook register_backward_hook register_buffer".split()
)


#: the statements that leave a block
_JUMPS = (cst.Return, cst.Raise, cst.Continue, cst.Break)
#: what ``_nests_or_steps`` looks for, without and with ``nests``
_DEFINING = frozenset({cst.FunctionDef, cst.ClassDef, cst.Yield})
_NESTING = _DEFINING | {cst.For, cst.While, cst.With, cst.Try}
#: where what is written does not run in place
_OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _jumps(stmt: Any, raises: bool = True) -> bool:
    """Whether ``stmt`` holds a return, raise, continue or break that may leave it: at any
    depth, but a ``continue``/``break`` of a loop inside ``stmt`` stays in that loop, and
    nothing in a nested function or class runs where it is written.  With ``raises`` False a
    ``raise`` does not count (the last look, ``raise_stays``)."""
    pending = [(stmt, False)]
    while pending:
        node, in_loop = pending.pop()
        kind = type(node)  # (no LibCST node class is derived from those tested here)
        if kind is cst.Continue or kind is cst.Break:
            if not in_loop:
                return True
        elif kind is cst.Raise:
            if raises:
                return True
        elif kind is cst.Return:
            return True
        if node is not stmt and kind in _OWN_SCOPES:
            continue
        loop = kind is cst.For or kind is cst.While
        inner = in_loop or loop  # the loop's own continue/break stay in it, too
        for child in children(node):
            # a loop's else block runs after it: its continue/break belong to the outer loop
            loop_else = loop and child is node.orelse
            pending.append((child, in_loop if loop_else else inner))
    return False


def _is_plain_try(stmt: Any) -> bool:
    """``try: batch = next(extra)`` / ``except StopIteration: extra = iter(loader); batch =
    next(extra)``: a ``try`` without ``else`` or ``finally`` whose body and handlers hold only
    simple statements.  Inside an autocast region it catches what it caught before; what it
    lets escape closes the ``with`` on its way out."""
    if not isinstance(stmt, cst.Try) or stmt.orelse is not None or stmt.finalbody is not None:
        return False
    blocks = [stmt.body] + [handler.body for handler in stmt.handlers]
    return all(
        isinstance(block, cst.IndentedBlock) and all(isinstance(s, cst.SimpleStatementLine) for s in block.body)
        for block in blocks
    )


def _reads(stmt: Any, names: set) -> bool:
    """Whether ``stmt`` mentions one of ``names`` (``out``, ``self.out``)."""
    return any(isinstance(n, (cst.Name, cst.Attribute)) and code_of(n) in names for n in walk(stmt))


def _is_import_guard(stmt: Any) -> bool:
    """``try: from apex import amp`` / ``except ImportError: raise ImportError("...")``: a
    ``try`` whose body only imports and whose handlers only raise, log or pass (no ``else`` or
    ``finally``).  It neither computes nor touches the loss: the search for the forward pass
    goes on before it."""
    if not isinstance(stmt, cst.Try) or stmt.orelse is not None or stmt.finalbody is not None:
        return False
    body = list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else []
    imports = (cst.Import, cst.ImportFrom)
    if not body or not all(
        isinstance(line, cst.SimpleStatementLine) and all(isinstance(small, imports) for small in line.body)
        for line in body
    ):
        return False
    for handler in stmt.handlers:
        lines = list(handler.body.body) if isinstance(handler.body, cst.IndentedBlock) else []
        for line in lines:
            if not isinstance(line, cst.SimpleStatementLine):
                return False
            for small in line.body:
                if isinstance(small, (cst.Raise, cst.Pass)):
                    continue
                if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call):
                    continue  # ``print(...)``, ``logger.warning(...)``
                return False
    return True


def _only_adds_to(stmt: Any, loss_texts: set) -> bool:
    """Whether every assignment of the loss in ``stmt`` builds on the loss it had
    (``loss += w * extra``, ``loss = loss + extra``): the loss exists before ``stmt`` on every
    path, and ``stmt`` only adds a term to it."""
    for sub in walk(stmt):
        if isinstance(sub, cst.AugAssign) and code_of(sub.target) in loss_texts:
            continue
        if isinstance(sub, cst.Assign):
            hit = {code_of(n) for t in sub.targets for n in walk(t.target)} & loss_texts
            if hit and not _reads(sub.value, hit):
                return False
        elif isinstance(sub, (cst.AnnAssign, cst.For, cst.WithItem)):
            target = sub.target if not isinstance(sub, cst.WithItem) else sub.asname
            if target is not None and {code_of(n) for n in walk(target)} & loss_texts:
                return False
    return True


def _sets_on_every_branch(stmt: Any, loss_texts: set) -> bool:
    """``if aux: loss = 0; for p, w in zip(outs, ws): loss += w * crit(p, y)`` / ``else: loss =
    crit(outs, y)``: an if/elif/else chain with an ``else`` whose every branch assigns the
    loss, so the loss after it comes from it on every path (none from before it)."""
    branch: Any = stmt
    while isinstance(branch, cst.If):
        if not assigned_names(branch.body) & loss_texts:
            return False
        branch = branch.orelse
    return isinstance(branch, cst.Else) and bool(assigned_names(branch.body) & loss_texts)


def _origin_before(body: List[Any], start: int, end: int, loss_texts: set) -> bool:
    """Whether the loss the span ``body[start:end+1]`` ends with was computed before the span:
    every assignment of it there builds on the loss it had (``total_loss = total_loss /
    accum``), and no statement before the span in the block sets it from constants only
    (``loss = 0`` before ``for out in outs: loss += crit(out)``).  Then the forward pass that
    feeds it is elsewhere (an outer block, a loop the search stops at), and a region over this
    span alone would leave it in float32."""
    span = body[start : end + 1]
    if any(assigned_names(s) & loss_texts and not _builds_on(s, loss_texts) for s in span):
        return False
    for stmt in reversed(body[:start]):
        if assigned_names(stmt) & loss_texts:
            calls = [n for n in walk(stmt) if isinstance(n, cst.Call)]
            return not isinstance(stmt, cst.SimpleStatementLine) or any(
                not code_of(c.func).startswith(_TORCH_API) for c in calls
            )
    return True


def _builds_on(stmt: Any, loss_texts: set) -> bool:
    """Whether every assignment of the loss in simple statement ``stmt`` reads the loss it had
    (``loss = loss / accum``, ``loss += extra``); an attribute's name (``self.loss(...)``) is
    no read of ``loss``."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    for small in stmt.body:
        if isinstance(small, cst.AugAssign) and code_of(small.target) in loss_texts:
            continue
        if isinstance(small, cst.Assign):
            hit = {code_of(n) for t in small.targets for n in walk(t.target)} & loss_texts
            attrs = {id(n.attr) for n in walk(small.value) if isinstance(n, cst.Attribute)}
            read = {
                code_of(n)
                for n in walk(small.value)
                if isinstance(n, (cst.Name, cst.Attribute)) and id(n) not in attrs
            }
            if hit and not hit & read:
                return False
        elif assigned_names(small) & loss_texts:
            return False
    return True


def _fills(line: Any) -> set:
    """What a simple statement binds (``out = ...``) or fills in place (``outs.append(x)``,
    ``batch["x"] = ...``)."""
    bound = set(assigned_names(line))
    for sub in walk(line):
        if isinstance(sub, cst.Subscript) and isinstance(sub.value, cst.Name) and code_of(sub) in bound:
            bound.add(sub.value.value)
        elif (
            isinstance(sub, cst.Call)
            and isinstance(sub.func, cst.Attribute)
            and isinstance(sub.func.value, cst.Name)
            and sub.func.attr.value in _FILLING_METHODS
        ):
            bound.add(sub.func.value.value)
    return bound


def flat_texts(node: Any) -> List[str]:
    if isinstance(node, (cst.Tuple, cst.List)):
        return [t for e in node.elements for t in flat_texts(e.value)]
    return [code_of(node).strip()]



#: calls a glued helper may make with its parameters without running a model's forward pass
_NO_FORWARD_BUILTINS = frozenset({"sum", "len", "float", "int", "isinstance", "list", "tuple", "zip", "enumerate",
                                  "range", "min", "max", "abs", "print", "any", "all", "sorted"})
_NO_FORWARD_METHODS = frozenset({
    "mean", "sum", "item", "detach", "float", "half", "backward", "step", "zero_grad", "state_dict",
    "load_state_dict", "parameters", "named_parameters", "to", "cuda", "cpu", "size", "dim", "numel", "clone",
    "view", "reshape", "append", "get", "items", "keys", "values",
})
#: apex.amp's own calls (``amp.scale_loss(loss, optimizer)``), which the rules rewrite
_AMP_CALLS = frozenset({"scale_loss", "master_params"})


def _abstract(func: cst.FunctionDef) -> bool:
    """``def gen_forward(self, data): raise NotImplementedError`` (after a docstring): a
    method every subclass overrides."""
    body = [s for s in (func.body.body if isinstance(func.body, cst.IndentedBlock) else ()) if not is_docstring(s)]
    if len(body) != 1 or not isinstance(body[0], cst.SimpleStatementLine) or len(body[0].body) != 1:
        return False
    stmt = body[0].body[0]
    exc = stmt.exc.func if isinstance(stmt, cst.Raise) and isinstance(stmt.exc, cst.Call) else getattr(stmt, "exc", None)
    return isinstance(stmt, cst.Raise) and isinstance(exc, cst.Name) and exc.value == "NotImplementedError"


def _runs_no_forward(func: cst.FunctionDef) -> bool:
    """Whether the top-level function ``func`` (a helper the glue route hands the GradScaler,
    whose caller wraps the forward passes feeding it) calls none of its parameters, no method
    of them but a tensor's or an optimizer's, and hands them only to builtins and torch:
    then no model it is given runs a forward pass inside it, outside its caller's autocast."""
    params = set(param_names(func.params))
    for node in walk(func.body):
        if not isinstance(node, cst.Call):
            continue
        callee = node.func
        text = code_of(callee)
        root = callee
        while isinstance(root, cst.Attribute):
            root = root.value
        if isinstance(callee, cst.Name) and callee.value in params:
            return False
        if isinstance(callee, cst.Attribute) and isinstance(root, cst.Name) and root.value in params:
            if callee.attr.value not in _NO_FORWARD_METHODS:
                return False
        passed = {a.value.value for a in node.args if isinstance(a.value, cst.Name)}
        if passed & params and not (
            text in _NO_FORWARD_BUILTINS
            or text.startswith("torch.")
            or (isinstance(callee, cst.Attribute) and callee.attr.value in _NO_FORWARD_METHODS | _AMP_CALLS)
        ):
            return False
    return True

#: calls on ``self`` a scaling method of the step-heir route may make: reading the losses
#: its subclasses stored, and the backward itself
_LOSS_READS = frozenset({"values", "get", "items", "keys", "backward", "item", "detach"})


class AutocastPlacement(AmpRule):
    """Wraps the forward pass of each scaled loss in torch.autocast."""

    #: initialize site -> the ``enabled=`` switch text of its scaler (None: always on)
    switches: Dict[InitSite, Optional[str]]
    #: backward helpers (``loss_backward(opt, loss, optimizer)``) whose callers are being
    #: searched for forward passes: a call of one steps, so no autocast region crosses it
    helpers: frozenset = frozenset()
    #: the spans found so far for the calls of one backward helper (not yet wrapped)
    pending: Tuple[List[Any], ...] = ()
    #: the statement next to the scale_loss that only rescales a loss computed before its
    #: block, where no forward span was found (said in the APX210 reason)
    rescale_only: Optional[cst.BaseStatement] = None
    #: the statement that computes the loss where no model call was found before it in its
    #: block (said in the APX210 reason when it follows another scaled backward)
    lone_loss: Optional[cst.BaseStatement] = None
    #: why a loss summed in a loop of an outer block got no regions (``loss_loop_spans``), or ""
    loss_loop_reason: str = ""
    #: why a span whose model calls all run without gradients got no region
    #: (``grad_off_span_reason``: the loss reads a training forward pass out of its reach), or ""
    grad_off_reason: str = ""
    #: why a backward helper's loss from a call on another object than ``self`` got no region
    #: (``_outside_caller``): that caller's forward pass is not followed, or ""
    caller_reason: str = ""
    #: the second look for a forward pass, where the first found none: the wrappers built
    #: around the models count as models (``wrapped_models``) and a gradient-off block may hold
    #: plain loops (``_is_grad_off_block``)
    second_look: bool = False
    #: gradient-off blocks an autocast region starts after (``_is_data_block``; APX264 when a
    #: region is placed after one)
    data_blocks: Tuple[Any, ...] = ()
    #: the last look, where both others found none and the site would be refused: a ``raise``
    #: (cSNGAN-AC's ``else: raise NotImplementedError(...)`` among the branches computing the
    #: discriminator's loss) does not end the region.  An exception leaving a ``with
    #: torch.autocast`` block restores the autocast state on its way out, and nothing after
    #: the raise runs on that path, so the region's statements run as they did
    raise_stays: bool = False

    def _leaves(self, stmt: Any) -> bool:
        """``_jumps`` as this look counts them (a ``raise`` stays in the region on the last look)."""
        return _jumps(stmt, raises=not self.raise_stays)

    def _model_texts(self, info: AmpFile) -> set:
        texts = set()
        for site in info.inits:
            for m in site.models:
                texts.add(code_of(m))
            holder = site.stmt.body[0]
            if isinstance(holder, cst.Assign):
                target: Any = holder.targets[0].target
                if site.has_optimizers and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2:
                    target = target.elements[0].value
                if not site.has_optimizers or target is not holder.targets[0].target:
                    texts.update(flat_texts(target))
        for assign in info.received.values():
            # what a model factory of another file returned (the models among them)
            texts.update(flat_texts(assign.targets[0].target))
        if info.plan is not None:  # the launcher's models, handed in (``amp_value_plan``)
            given = {f.name.value for f in info.given_by_launchers}
            texts.update(param for func, param in info.plan.amp_value_models if func in given)
        texts |= held_model_texts(self, info, texts)
        texts |= held_route_models(self, info)
        if self.second_look:
            texts |= wrapped_models(self.tree, texts)
        return texts | {t.split(".")[-1] for t in texts}

    def _is_model_call(self, node: cst.CSTNode, models: set, via_args: bool = False) -> bool:
        """Whether ``node`` calls the model; with ``via_args`` also when it hands the model
        to a helper (only asked of the statement that computes the loss)."""
        for sub in walk(node):
            func = sub.func if isinstance(sub, cst.Call) else None
            while isinstance(func, cst.Subscript):
                func = func.value  # ``self.encoder[0](x)``: one model of a list of them
            if isinstance(sub, cst.Call) and isinstance(func, (cst.Name, cst.Attribute)):
                text = code_of(func)
                last = text.split(".")[-1]
                if last in _NOT_FORWARD or text.startswith(_TORCH_API):
                    continue
                if text in models or last in models or any(text.startswith(m + ".") for m in models):
                    return True
                if MODEL_CALL.search(last):
                    return True
                if last == "forward" and MODEL_CALL.search(text[: -len(".forward")]) and self._reads_home():
                    return True  # FARM's ``self.model.forward(**batch)`` in a reader of the module's GradScaler
                # `loss = compute_loss(model, x)`, `self._step(model, xis, xjs)`: the model is
                # handed to a helper, so its forward runs inside this call
                if via_args and any(code_of(a.value) in models for a in sub.args):
                    return True
                if via_args and self._own_method_runs_model(sub, text, models):
                    return True
                if via_args and self._nested_function_runs_model(sub, text, models):
                    return True
            if isinstance(sub, (cst.FunctionDef, cst.Lambda)):
                return False
        return False

    def _nested_function_runs_model(self, call: cst.Call, text: str, models: set) -> bool:
        """``loss, img_loss = run(use_ref_nerf)``: a function defined once in the calling
        function's own body (Enigmatisms/NeRF's ``def run(is_ref_model=False)`` in the loop),
        its name bound nowhere else there, whose own statements call the model: the forward
        pass runs in this call."""
        func = enclosing(self.parents, call, cst.FunctionDef)
        if func is None or "." in text:
            return False
        nested = [
            d for d in walk(func.body)
            if isinstance(d, cst.FunctionDef) and d.name.value == text
            and enclosing(self.parents, d, cst.FunctionDef) is func
        ]
        if len(nested) != 1 or text in assigned_names(func.body):
            return False
        body = nested[0].body.body if isinstance(nested[0].body, cst.IndentedBlock) else ()
        return any(self._is_model_call(stmt, models) for stmt in body)

    def _trains_model(self, stmt: Any, models: set) -> bool:
        """Whether ``stmt`` calls the model outside its gradient-off blocks: a forward pass that
        trains.  ``if distill: with torch.no_grad(): soft = teacher_model(x)`` / ``loss = ce +
        kd(out, soft)`` / ``else: loss = ce`` (LightningDOT's pretrain.py) only reads a teacher's
        outputs: the loss comes from the training forward pass before the ``if`` on every path,
        and the teacher rides in the region (``_rides_in_span``)."""
        off = {id(n) for w in walk(stmt) if isinstance(w, cst.With) and self._grad_off_items(w) for n in walk(w.body)}
        return any(
            isinstance(node, cst.Call) and id(node) not in off and self._is_model_call(node, models)
            for node in walk(stmt)
        )

    def _reads_home(self) -> bool:
        """Whether this file reads the module-level GradScaler of another (APX252)."""
        return bool(getattr(self.repo_plan(), "module_reader", ""))

    def _own_method_runs_model(self, call: cst.Call, text: str, models: set, depth: int = 0) -> bool:
        """``loss = self._calc_loss(batch)``: a plain method of the same class whose own body
        (not a function nested in it) calls the model, so the forward pass runs in this call;
        also through a chain of such methods (``self.train_forward(x)`` returning
        ``self.common_forward(x)``, which calls the model), at most three deep."""
        func = enclosing(self.parents, call, cst.FunctionDef)
        cls = class_of_method(self.parents, func)
        receiver, _, method = text.partition(".")
        if cls is None or not method or "." in method or receiver != self_name(func):
            return False
        target = next(
            (d for d in cls.body.body if isinstance(d, cst.FunctionDef) and d.name.value == method), None
        )
        if target is None or class_of_method(self.parents, target) is not cls:
            return False
        if depth == 0 and _abstract(target) and self._reads_home():
            # a reader of the module-level GradScaler (APX252): the subclasses, which may be
            # in files without apex, implement it, and the forward pass runs in this call
            return True
        if any(self._is_model_call(stmt, models) for stmt in target.body.body):
            return True
        if depth >= 2:
            return False
        return any(
            isinstance(sub, cst.Call)
            and isinstance(sub.func, cst.Attribute)
            and self._own_method_runs_model(sub, code_of(sub.func), models, depth + 1)
            for sub in walk(target.body)
        )

    def _is_plain_with(self, stmt: Any) -> bool:
        """``with Nvtx("forward"):``, ``with timer:``: a ``with`` that changes nothing about
        precision and leaves gradients on (``with torch.enable_grad(), ctx:`` too), around
        statements the autocast may extend over."""
        if not isinstance(stmt, cst.With) or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        for item in stmt.items:
            call = item.item.func if isinstance(item.item, cst.Call) else item.item
            if code_of(call).split(".")[-1] in PRECISION_CONTEXTS - _GRAD_ON:
                return False
        return all(not self._is_barrier(inner) for inner in stmt.body.body)

    def _is_barrier(self, stmt: cst.BaseStatement) -> bool:
        """Statements the autocast region does not extend over: loops and other compound
        statements (a plain ``if`` or ``with`` is fine), steps, backwards, jumps."""
        if self._is_plain_with(stmt):
            return False
        if not isinstance(stmt, (cst.SimpleStatementLine, cst.If)):
            return True
        return self._nests_or_steps(stmt) or self._leaves(stmt)

    def _accumulates_loss(self, stmt: cst.BaseStatement, loss_texts: set) -> bool:
        """``for i in range(len(outputs)): ... loss += w[i] * crit(outputs[i], y[i])``: a plain
        ``for`` loop (``_is_plain_loop``) that computes the loss from the outputs: part of the
        forward pass autocast covers."""
        return self._is_plain_loop(stmt) and bool(assigned_names(stmt) & loss_texts)

    def _is_plain_loop(self, stmt: Any) -> bool:
        """A synchronous ``for`` loop without ``else`` whose body is simple statements, ifs,
        plain loops again (``for layer in layers: arch.append(sample(layer))`` before the
        forward pass of a sampled architecture; no ``match`` or ``try`` there; no ``while``,
        ``with``, ``try`` or definition at any depth, no loop inside an ``if``) and gradient-off
        blocks (``_is_grad_off_block``: swav's per-crop ``with torch.no_grad(): q =
        sinkhorn(out)`` before the crop's loss term), with no step, backward, backward helper
        or jump: autocast may span it whole."""
        if not isinstance(stmt, cst.For) or stmt.asynchronous is not None or stmt.orelse is not None:
            return False
        inner: List[Any] = list(stmt.body.body) if isinstance(stmt.body, cst.IndentedBlock) else []
        if not all(
            isinstance(s, (cst.SimpleStatementLine, cst.If)) or self._is_plain_loop(s) or self._is_grad_off_block(s)
            for s in inner
        ):
            return False
        rest = [s for s in inner if not isinstance(s, (cst.For, cst.With)) and not self._plain_if_on_second_look(s)]
        return not self._leaves(stmt) and not any(self._nests_or_steps(s) for s in rest) and not any(
            self._nests_or_steps(s, nests=False) for s in inner
        )

    def _plain_if_on_second_look(self, stmt: Any) -> bool:
        """On the second look for a forward pass, an ``if`` in a loop whose nested blocks are
        plain (``_branches_with_plain_blocks``: STEP's ``if not args.no_context: ... for p in
        range(n): feat[p] = context[...]`` in its per-step loss loop) does not stop the loop
        from being plain."""
        return self.second_look and isinstance(stmt, cst.If) and self._branches_with_plain_blocks(stmt)

    def _nests_or_steps(self, stmt: cst.BaseStatement, nests: bool = True) -> bool:
        """Whether ``stmt`` holds a definition or ``yield``, or calls a step or a backward (or
        a backward helper whose callers are being searched: it steps), or (with ``nests``)
        holds a loop, ``with`` or ``try``."""
        kinds = _NESTING if nests else _DEFINING  # (no LibCST node class is derived from these)
        return any(type(sub) in kinds or self._is_step_call(sub) for sub in walk(stmt))

    def _is_step_call(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` calls a step or a backward, or a backward helper whose callers are
        being searched (it steps)."""
        if not isinstance(node, cst.Call):
            return False
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in _BARRIER_CALLS:
            return True
        return isinstance(node.func, cst.Name) and node.func.value in self.helpers

    def _steps_or_yields(self, stmt: cst.BaseStatement) -> bool:
        """``_nests_or_steps(stmt, nests=False)`` less the definitions that run nothing where
        they are written: a function or class defined in ``stmt`` counts only through a step
        or backward it calls (a ``yield`` in it is its own).  Bengali.AI's cutmix branch
        defines ``def rand_bbox(size, lam): ... return bbx1, ...`` before its forward pass."""
        nested = [sub for sub in walk(stmt) if sub is not stmt and isinstance(sub, (cst.FunctionDef, cst.ClassDef))]
        own_yields = {id(sub) for d in nested for sub in walk(d) if isinstance(sub, cst.Yield)}
        return any(
            self._is_step_call(sub) or (isinstance(sub, cst.Yield) and id(sub) not in own_yields) for sub in walk(stmt)
        )

    def _is_bystander(self, stmt: cst.BaseStatement, loss_texts: set) -> bool:
        """A statement between the loss and its scale_loss that leaves both alone: metrics
        under ``torch.no_grad()``, a logging loop.  It binds none of the loss (no assignment,
        loop or ``with ... as`` target, ``del``), steps nothing, calls no backward, defines
        nothing and never leaves (no return, raise, continue, break); it stays where it is,
        outside the autocast region."""
        if self._nests_or_steps(stmt, nests=False) or self._leaves(stmt):
            return False
        bound = set(assigned_names(stmt))
        for sub in walk(stmt):
            targets: List[Any] = []
            if isinstance(sub, cst.For):
                targets = [sub.target]
            elif isinstance(sub, cst.WithItem) and sub.asname is not None:
                targets = [sub.asname.name]
            elif isinstance(sub, cst.Del):
                targets = [sub.target]
            bound.update(code_of(n) for t in targets for n in walk(t) if isinstance(n, (cst.Name, cst.Attribute)))
        return not bound & loss_texts

    def _is_exit_guard(self, stmt: cst.BaseStatement, loss_texts: set) -> bool:
        """``if not torch.isfinite(loss): return``, ``if loss is None: continue``: an ``if``
        without ``else`` that only leaves (its last statement returns, raises, continues or
        breaks), calls no step or backward and assigns none of the loss.  It may stand between
        the loss computation and its scale_loss (it stays outside the autocast region), or
        between the forward pass and the last statement that changes the loss (it goes inside:
        leaving a ``with`` closes the autocast); either way the scale_loss is skipped on that
        path, as under apex."""
        if not isinstance(stmt, cst.If) or stmt.orelse is not None or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        last = stmt.body.body[-1] if stmt.body.body else None
        if not isinstance(last, cst.SimpleStatementLine) or not isinstance(last.body[-1], _JUMPS):
            return False
        return not assigned_names(stmt) & loss_texts and not self._nests_or_steps(stmt)

    def _rides_in_span(self, stmt: cst.BaseStatement) -> bool:
        """A compound statement between the forward pass and the loss that the autocast
        region covers with them: an ``if`` (``if only_valid: out = out[keep]; if not len(out):
        continue``; leaving a ``with`` closes the autocast) or a ``with torch.no_grad():``
        block (metrics on the outputs, a teacher's forward pass), neither holding a loop, a
        nested ``with`` or ``try``, a definition, a step or a backward; or an ``if`` that
        never leaves whose nested blocks are only such plain ones
        (``_branches_with_plain_blocks``).  apex's O1 ran them with its casts too."""
        if isinstance(stmt, cst.If):
            return not self._nests_or_steps(stmt) or self._branches_with_plain_blocks(stmt)
        return self._is_grad_off_block(stmt) or self._is_guarded_forward(stmt)

    def _is_guarded_forward(self, stmt: Any) -> bool:
        """``try: stats = self.task(egs)`` / ``except RuntimeError as err: if "out of memory" in
        str(err): return False`` / ``raise``: a ``try`` whose body, handlers, ``else`` and
        ``finally`` hold only simple statements and ``if``s of them (no loop, ``with``, nested
        ``try`` or definition) and no step, backward or backward helper.  The autocast region
        holds it whole: its handlers catch what they caught before (a forward pass one of them
        runs again is under autocast too), and whatever leaves it closes the ``with`` on its
        way out."""
        if not isinstance(stmt, cst.Try):
            return False
        blocks = [stmt.body] + [handler.body for handler in stmt.handlers]
        blocks += [part.body for part in (stmt.orelse, stmt.finalbody) if part is not None]
        return all(
            isinstance(block, cst.IndentedBlock)
            and all(isinstance(s, (cst.SimpleStatementLine, cst.If)) and not self._nests_or_steps(s) for s in block.body)
            for block in blocks
        )

    def _is_grad_off_block(self, stmt: Any) -> bool:
        """``with torch.no_grad(): ...`` holding no loop, nested ``with``, ``try``, definition,
        step or backward (metrics on the outputs, a teacher's forward pass); on the second look
        also plain loops (``_is_plain_loop``: HR-VITON's ``for i in range(len(labels)): for label
        in labels[i][1]: parse[:, i] += old_parse[:, label]`` after the warping network's
        forward pass)."""
        if not isinstance(stmt, cst.With) or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        inner = [s for s in stmt.body.body if not (self.second_look and self._is_plain_loop(s))]
        return self._grad_off_items(stmt) and not any(self._nests_or_steps(s) for s in inner)

    def _branches_with_plain_blocks(self, stmt: cst.If) -> bool:
        """``if sync_now: out = model(x)`` / ``else: with model.no_sync(): out = model(x)``;
        ``if teacher is not None: with torch.no_grad(): soft = teacher(x)``; ``if multi: for
        name, part in parts: log(name, part.item())``: an ``if`` that never leaves and whose
        only nested blocks are plain ``with`` statements (``_is_plain_with``: no precision or
        gradient switch, no loop, step or backward inside), gradient-off ``with`` blocks
        (``_is_grad_off_block``) and plain loops (``_is_plain_loop``: simple statements and
        ifs, no jump, step or backward)."""
        if self._leaves(stmt) or self._nests_or_steps(stmt, nests=False):
            return False
        for sub in walk(stmt):
            if isinstance(sub, cst.Try) and not _is_plain_try(sub):
                return False
            if isinstance(sub, cst.While):
                return False
            if isinstance(sub, cst.For) and not self._is_plain_loop(sub):
                return False
            if isinstance(sub, cst.With) and not (
                self._is_plain_with(sub) or self._is_grad_off_block(sub) or self._is_autocast_block(sub)
            ):
                return False
        return True

    def _is_data_block(self, stmt: Any) -> bool:
        """``with torch.no_grad(): for step in range(n): value, logit = model(states[step]);
        obs, reward, done, _ = env.step(...)`` (an RL rollout, the returns computed after it):
        a gradient-off block too big for the region to span (``_rides_in_span``).  What it
        computes reaches the loss as data without gradients, so the region starts after it,
        at the training forward pass; its forward passes run in float32, where apex's O1 ran
        them in float16 (numerics only, APX264).  A block holding a definition, a ``yield`` or
        a backward is no such block."""
        if not isinstance(stmt, cst.With) or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        if not self._grad_off_items(stmt):
            return False
        return not any(
            isinstance(sub, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Yield))
            or (isinstance(sub, cst.Call) and isinstance(sub.func, cst.Attribute) and sub.func.attr.value == "backward")
            for sub in walk(stmt.body)
        )

    def _starts_after(self, body: List[Any], index: int, models: set) -> bool:
        """Whether the region starts after the gradient-off block ``body[index]`` that feeds it
        (``_is_data_block``): on the second look only, where that block could not ride in the
        region (``_is_grad_off_block``; HR-VITON's frozen warping network rides, as apex's O1 ran
        it with its casts), and where no model call before it made what it reads."""
        return (
            self.second_look
            and self._is_data_block(body[index])
            and not self._runs_model_before(body, index, models)
        )

    def _runs_model_before(self, body: List[Any], index: int, models: set) -> bool:
        """Whether a statement before ``body[index]``, after the barrier before it, calls the
        model: a forward pass whose outputs a gradient-off block after it reads (V-trace's
        importance weights from ``logit.detach()``) is the training forward pass, which the
        region must hold, so that block is no place to start it."""
        for k in range(index - 1, -1, -1):
            if self._is_barrier(body[k]) and not self._rides_in_span(body[k]):
                return False
            if self._is_model_call(body[k], models):
                return True
        return False

    def _is_autocast_block(self, stmt: Any) -> bool:
        """``with torch.cuda.amp.autocast(enabled=True): out = model(x)`` in the branch of
        another backend (fairscale's, beside apex's): a ``with`` of autocasts only, around no
        loop, nested ``with``, ``try``, definition, step or backward.  An autocast spanning its
        ``if`` leaves it as it was: the inner one decides inside it."""
        if not isinstance(stmt, cst.With) or not isinstance(stmt.body, cst.IndentedBlock):
            return False
        contexts = {code_of(i.item.func if isinstance(i.item, cst.Call) else i.item).split(".")[-1] for i in stmt.items}
        return contexts == {"autocast"} and not any(self._nests_or_steps(inner) for inner in stmt.body.body)

    @staticmethod
    def _is_plain_with_block(stmt: cst.With) -> bool:
        """A ``with`` one may leave to look for the forward pass before it."""
        return not any(
            code_of(i.item.func if isinstance(i.item, cst.Call) else i.item).split(".")[-1] in PRECISION_CONTEXTS
            for i in stmt.items
        )

    def _inside_autocast(self, node: cst.CSTNode) -> bool:
        cur = node
        while cur in self.parents:
            cur = self.parents[cur]
            if isinstance(cur, cst.With) and any(
                isinstance(i.item, cst.Call) and code_of(i.item.func).split(".")[-1] == "autocast" for i in cur.items
            ):
                return True
        return False

    def _inherited(self, site: ScaleLossSite) -> bool:
        """Whether the plan's inheritance route reaches ``site`` (its method's forward pass
        is its own, not a framework's)."""
        plan = self.repo_plan()
        cls = class_of_method(self.parents, site.func)
        if plan is None or cls is None or site.func is None:
            return False
        key = (cls.name.value, site.func.name.value)
        return key in plan.heir_methods or key in plan.built_methods or key in plan.attached_methods

    def _forward_in_step_heirs(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """The plan's step-heir route: this scaling method of the launcher's class is called
        by subclasses of files without apex.amp, whose loops the pipeline puts under
        autocast (``step_heir_route``)."""
        plan = info.plan
        cls = class_of_method(self.parents, site.func)
        if plan is None or cls is None or site.func is None or cls.name.value != plan.heir_base:
            return False
        if not any(m == site.func.name.value for m, _a in plan.step_heirs):
            return False
        if self._runs_forward_itself(site.func):
            return False  # its own forward pass would run outside the subclasses' autocast
        self.report(
            site.with_stmt,
            "APX226",
            f"{site.func.name.value}() is called by subclasses of {cls.name.value} in files without apex.amp, which "
            "step its optimizers: their forward passes go under torch.autocast there",
            fixed=True,
            severity="info",
        )
        return True

    def _forward_in_runner_step(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """The plan's runner-hook route (``runner_hook_plan``): this hook method scales the
        loss its runner's step stored, whose forward pass the pipeline's edit of that step
        puts under autocast (``runner_step_route``)."""
        plan = info.plan
        cls = class_of_method(self.parents, site.func)
        if plan is None or cls is None or site.func is None or not plan.runner_step_autocast:
            return False
        where = {(c, m): w for c, m, w in plan.runner_step_autocast}.get((cls.name.value, site.func.name.value))
        if where is None:
            return False
        self.report(
            site.with_stmt,
            "APX254",
            f"the loss is the one the runner's step stored: {where} runs its forward pass under torch.autocast while "
            "the runner carries an enabled GradScaler",
            fixed=True,
            severity="info",
        )
        return True

    def _runs_forward_itself(self, func: cst.FunctionDef) -> bool:
        """Whether the scaling method ``func`` may run a forward pass: it calls something on
        ``self`` other than reading stored losses (``sum(self.d_losses.values())``,
        ``self.ac_losses.get(k)``) and backward, or hands an attribute of ``self`` to a call
        (context managers of its ``with`` items, ``freeze(self.gen)``, aside)."""
        me = self_name(func)
        items = {id(n) for item in walk(func.body) if isinstance(item, cst.WithItem) for n in walk(item)}
        for node in walk(func.body):
            if not isinstance(node, cst.Call) or id(node) in items:
                continue
            root = node.func
            while isinstance(root, (cst.Attribute, cst.Subscript)):
                root = root.value
            last = node.func.attr.value if isinstance(node.func, cst.Attribute) else ""
            if isinstance(root, cst.Name) and root.value == me and last not in _LOSS_READS:
                return True
            for arg in node.args:
                value = arg.value
                while isinstance(value, cst.Attribute):
                    value = value.value
                if isinstance(arg.value, cst.Attribute) and isinstance(value, cst.Name) and value.value == me:
                    return True
        return False

    def _last_look(self, site: ScaleLossSite, loss_texts: set, info: AmpFile) -> Optional[Tuple[list, list]]:
        """The regions and their switches found where a ``raise`` does not end a region
        (``raise_stays``, kept on for the rest of the site), or None (the earlier looks'
        reasons kept for the finding)."""
        saved = (self.rescale_only, self.lone_loss, self.loss_loop_reason, self.grad_off_reason, self.second_look)
        self.rescale_only = self.lone_loss = None
        self.loss_loop_reason, self.grad_off_reason, self.second_look, self.raise_stays = "", "", False, True
        found = self._forward_spans(site.with_stmt, loss_texts, info)
        spans: List[Tuple[Any, Any]] = [(members, site.func) for members in found] if found else []
        switches = [self._switch_in(func, info) for _, func in spans]
        if spans and not any(sw is False for sw in switches):
            return spans, switches
        self.rescale_only, self.lone_loss, self.loss_loop_reason, self.grad_off_reason, self.second_look = saved
        self.raise_stays = False
        return None

    def _place_autocast(self, site: ScaleLossSite, info: AmpFile) -> None:
        self.second_look = self.raise_stays = False
        if self._inside_autocast(site.with_stmt):
            return
        if self._loss_from_processor(site, info):  # type: ignore[attr-defined]
            return
        if self._forward_in_step_heirs(site, info):
            return
        if self._forward_in_runner_step(site, info):
            return
        if site.func in info.carried_functions and info.plan is not None and site.func.name.value in \
                info.plan.bound_functions and class_of_method(self.parents, site.func) is None:
            self.report(
                site.with_stmt,
                "APX260",
                f"{site.func.name.value}() is bound as a method of an object that carries the GradScaler: the loss it "
                "is handed comes from that object's forward pass, which the edit of its class puts under autocast",
                fixed=True,
                severity="info",
            )
            return
        if site.func in info.carried_functions and not self._inherited(site):
            self.report(
                site.with_stmt,
                "APX226",
                "the loss comes from the framework's runner, computed by the forward pass the framework runs: "
                "the launcher's finding says what puts it under autocast",
                fixed=True,
                severity="info",
            )
            return
        loss_texts = {code_of(n) for n in walk(site.loss) if isinstance(n, (cst.Name, cst.Attribute))}
        self.rescale_only = self.lone_loss = None
        self.loss_loop_reason = self.grad_off_reason = self.caller_reason = ""
        found = self._forward_spans(site.with_stmt, loss_texts, info)
        if found is None and self._wider_models(info):
            # ``self.segmentor = engine.data_parallel(self.segmentor_on_one_gpu)``: the forward
            # pass calls the wrapper, not the initialized model
            self.second_look = True
            self.rescale_only = self.lone_loss = None
            self.loss_loop_reason = self.grad_off_reason = ""
            found = self._forward_spans(site.with_stmt, loss_texts, info)
            if found is None:
                self.second_look = False
        if found:
            found[-1] = self._with_later_losses(site, found[-1], info)
        spans: List[Tuple[Any, Any]] = [(members, site.func) for members in found] if found else [(None, site.func)]
        if spans[0][0] is None:
            spans = self._spans_at_callers(site, info)
        switches = [self._switch_in(func, info) for _, func in spans]
        if not spans:
            own = self._loss_from_own_forward(site, info)
            if own == ():
                return
            if own is not None:
                spans, switches = [own[0]], [own[1]]
        if not spans and self._under_callers_autocast(site, info):
            return
        if not spans and self._at_callers_in_launcher(site, info):
            return
        if not spans and self._at_stepping_callers(site, info):
            return
        if not spans and self._at_outside_callers(site, info):
            return
        handed_why = ""
        if not spans and site.func is not None:
            handed_spans, handed_why = handed_output_spans(self, site, info)
            if handed_spans is not None:
                self._report_handed(site)
                spans = handed_spans
                switches = [self._switch_in(func, info) for _, func in spans]
                if not spans:
                    return  # every region runs under an autocast already
        if (not spans or any(span is None for span, _ in spans)) and not any(sw is False for sw in switches):
            spans, switches = self._last_look(site, loss_texts, info) or (spans, switches)
        if not spans or any(span is None for span, _ in spans) or any(sw is False for sw in switches):
            if self._plain_term(site, info):
                return
            # manual work: without it the migrated script trains in float32 with a GradScaler
            self.todo(
                site.with_stmt,
                "APX210",
                "the forward pass and loss are not next to this amp.scale_loss"
                + (
                    self._why_not_own_forward(site) or self._why_handed_callable(site) or self._why_read_off(site)
                    or (f" ({handed_why})" if handed_why else "")
                    if not spans
                    else ""
                )
                + (self.caller_reason or self.grad_off_reason or self.loss_loop_reason or self._why_rescale_only())
                + self._why_after_backward(site, info)
                + f': wrap them in `with torch.autocast("cuda", dtype=torch.{self.settings.dtype}):` by hand',
            )
            return
        handed = self._handed_forward_results(site, info)
        if handed and site.func is not None:
            fed = self._fed_forward(site, info)
            if fed is None:
                self.todo(
                    site.with_stmt,
                    "APX210",
                    f"the forward pass and loss are not next to this amp.scale_loss: {site.func.name.value}() is "
                    f"handed {', '.join(handed[:3]) + (', ...' if len(handed) > 3 else '')}, which the class's own "
                    "forward() computes with the models, called from elsewhere: wrap that forward pass in "
                    f'`with torch.autocast("cuda", dtype=torch.{self.settings.dtype}):` by hand',
                )
                return
            if fed:
                spans, switches = spans + [fed[0]], switches + [fed[1]]
        self._wrap_spans(spans, switches, info)

    def _with_later_losses(self, site: ScaleLossSite, members: List[Any], info: AmpFile) -> List[Any]:
        """``members`` (``site``'s span) and the statements after it, before ``site``, through
        the last that computes the loss of a scale_loss right after ``site`` (``loss_b``
        computed from the same forward pass, backed in the next block): that loss is then
        computed under the same autocast, and that scale_loss finds its loss in this span.
        Only plain statements that back no loss join."""
        block = self.parents.get(members[-1])
        body = list(getattr(block, "body", ()))
        if site.with_stmt not in body or members[-1] not in body:
            return members
        at = body.index(site.with_stmt)
        between = body[body.index(members[-1]) + 1 : at]
        blocks = {s.with_stmt: s for s in info.scale_losses}
        later: Set[str] = set()
        for stmt in body[at + 1 :]:
            following = blocks.get(stmt)
            if following is None:
                break
            later |= {code_of(n) for n in walk(following.loss) if isinstance(n, (cst.Name, cst.Attribute))}
        last = max((i for i, stmt in enumerate(between) if later & assigned_names(stmt)), default=None)
        if last is None:
            return members
        extra = between[: last + 1]
        if any(not isinstance(stmt, cst.SimpleStatementLine) or backs_loss_in(stmt) for stmt in extra):
            return members
        return [*members, *extra]

    def _wider_models(self, info: AmpFile) -> bool:
        """Whether a second look for a forward pass may find more: the file binds a wrapper
        around one of the models (``wrapped_models``) or holds a gradient-off block."""
        if self.second_look:
            return False
        if wrapped_models(self.tree, self._model_texts(info)):
            return True
        return any(isinstance(node, cst.With) and self._grad_off_items(node) for node in walk(self.tree))

    @staticmethod
    def _grad_off_items(stmt: cst.With) -> bool:
        contexts = {code_of(i.item.func if isinstance(i.item, cst.Call) else i.item).split(".")[-1] for i in stmt.items}
        return contexts <= _GRAD_OFF

    def _report_handed(self, site: ScaleLossSite) -> None:
        name = site.func.name.value
        self.report(
            site.with_stmt,
            "APX253",
            f"{name}() computes the loss from what its callers hand it (every call of it in the repository is on "
            f"self in this file): autocast wraps their forward passes there and the loss computation here",
            fixed=True,
            severity="info",
        )

    def _fed_forward(self, site: ScaleLossSite, info: AmpFile) -> Optional[Tuple[Any, ...]]:
        """``forward()`` of the class whose outputs ``site``'s method is handed, when every call
        of that method in the repository hands it what the receiver's ``forward()`` returned
        (``forward_fed``): its whole body is a span, ``((statements, forward), switch)``; ``()``
        when it runs under an autocast already; None when not proven (no plan, a call that
        hands something else, a generator, the scaler out of reach there)."""
        func, cls = site.func, class_of_method(self.parents, site.func)
        if func is None or cls is None or info.plan is None:
            return None
        handed = set(self._handed_forward_results(site, info))
        params = [p.name.value for p in func.params.params][1:]
        positions = [(index, name) for index, name in enumerate(params) if name in handed]
        calls = dict(info.plan.handed_calls).get(func.name.value)
        if not positions or len(positions) != len(handed) or not forward_fed(positions, list(calls or ())):
            return None
        return self._forward_body_span(cls, info)

    def _loss_from_own_forward(self, site: ScaleLossSite, info: AmpFile) -> Optional[Tuple[Any, ...]]:
        """``def update_params(self, loss): loss /= accum; with amp.scale_loss(loss, ...)`` of a
        module whose every caller in the repository hands it what the receiver's own
        ``forward()`` returned (``loss = box(x); box.update_params(loss)``, ``forward_fed``):
        the whole forward pass of the loss runs in that ``forward()``, which becomes the span
        (``_forward_body_span``).  None when not proven: the loss is no parameter, or is
        reassigned in the method from anything but itself (``loss = loss / n``), the class
        defines ``__call__`` (a call of it need not run ``forward()``) or a same-file subclass
        overrides ``forward()``."""
        func, cls = site.func, class_of_method(self.parents, site.func)
        if func is None or cls is None or info.plan is None or func.name.value == "forward":
            return None
        if not isinstance(site.loss, cst.Name):
            return None
        name = site.loss.value
        params = [p.name.value for p in func.params.params][1:]
        if name not in params:
            return None
        members = {m.name.value for m in cls.body.body if isinstance(m, cst.FunctionDef)}
        if "forward" not in members or "__call__" in members or self._overridden_in_same_file(cls, "forward"):
            return None
        models = self._model_texts(info)
        for node in walk(func.body):
            if isinstance(node, cst.NamedExpr) and name in assigned_names(node):
                return None
            if isinstance(node, cst.SimpleStatementLine) and name in assigned_names(node):
                if self._is_model_call(node, models, via_args=True):
                    return None
        if not _only_adds_to(func.body, {name}):
            return None
        calls = dict(info.plan.handed_calls).get(func.name.value)
        if not forward_fed([(params.index(name), name)], list(calls or ())):
            return None
        return self._forward_body_span(cls, info)

    def _plain_term(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """``l_reg = self.reg_importance * self.regularizer.penalty()`` backed after the scaled
        backward of the model's loss, before its step (``_amp_after_backward``): that backward
        is followed by ``unscale_`` and this one runs plain, outside autocast (APX276)."""
        if self.lone_loss is None or not self._why_after_backward(site, info):
            return False
        first = plain_term_after(self, site, info, self.lone_loss, self._model_texts(info))
        if first is None:
            return False
        remember(self, first, site, info)
        opt, loss = code_of(site.optimizers[0]), code_of(site.loss)
        scaler = info.access.get(site.func, info.scaler_name)
        self.report(
            site.with_stmt,
            "APX276",
            f"{loss} is computed after the scaled backward of {code_of(first.loss)}, by calls that run no model "
            f"found here: {scaler}.unscale_({opt}) follows that backward (apex had unscaled its gradients for "
            f"what runs there) and {loss}.backward() runs plain, outside autocast, adding its float32 gradients at "
            f"their true size; {scaler}.step({opt}) skips the step on inf/nan in the first backward's gradients, "
            f"where apex also checked {loss}'s",
            fixed=True,
            severity="warning",
        )
        return True

    def _why_after_backward(self, site: ScaleLossSite, info: AmpFile) -> str:
        """``l_reg = self.reg_importance * self.regularizer.penalty()`` computed (no model call
        found before it in its block) after an earlier ``amp.scale_loss`` block of the same
        function and before the step: the words that say why no region is placed there.  A
        call there may read the gradients of that backward (an EWC regularizer's Fisher
        information, ``p.grad ** 2``), which apex had unscaled when its block exited and a
        GradScaler leaves scaled until the step; "" when the loss is not computed so."""
        stmt, func = self.lone_loss, site.func
        if stmt is None or func is None or enclosing(self.parents, stmt, cst.FunctionDef) is not func:
            return ""  # (a statement at a caller of a backward helper is no such loss)
        line = self.line_of(stmt)
        earlier = [
            other
            for other in info.scale_losses
            if other.func is func and other is not site and self.position(other.with_stmt).end.line < line
        ]
        earlier.sort(key=lambda other: self.line_of(other.with_stmt))
        if not earlier:
            return ""
        text = "; ".join(code_of(part).strip() for part in getattr(stmt, "body", [stmt]))
        if not self._unstepped_before(earlier[-1], site, line):
            return self._why_read_from_earlier_forward(stmt, text, func, info)
        # named by its code, never its line: TODO lines a first run writes above would move it
        scaled = code_of(earlier[-1].with_stmt.items[0].item).strip()
        return (
            f" (`{text}` calls no model found here, after the scaled backward of `{scaled}` and "
            "before the step: apex had unscaled that backward's gradients for whatever runs there, a GradScaler "
            "keeps them scaled until the step, and what these calls compute or read is not followed)"
        )

    def _unstepped_before(self, earlier: ScaleLossSite, site: ScaleLossSite, line: int) -> bool:
        """Whether ``earlier`` scales for an optimizer ``site`` scales for too, none of whose
        steps runs between ``earlier`` and ``line``: its gradients still wait for the step there."""
        shared = {code_of(o) for o in earlier.optimizers} & {code_of(o) for o in site.optimizers}
        end = self.position(earlier.with_stmt).end.line
        return any(
            not any(end < self.line_of(call) < line for call in find_steps(self, earlier, opt)) for opt in shared
        )

    def _why_read_from_earlier_forward(self, stmt: Any, text: str, func: Any, info: AmpFile) -> str:
        """rotom's ``reward = log_prob * -v_loss``, after other scaled backwards and their steps:
        ``log_prob`` was bound much earlier in the function by a statement that runs the models
        (``process_filter(model, filter_model, ...)``), and other backwards and steps run
        between; the words that say so, or "" when no such statement is found."""
        read = {n.value for n in walk(stmt) if isinstance(n, cst.Name)}
        models = self._model_texts(info)
        line = self.line_of(stmt)
        for node in walk(func.body):
            if not isinstance(node, cst.SimpleStatementLine) or self.line_of(node) >= line:
                continue
            names = assigned_names(node) & read
            if names and self._is_model_call(node, models, via_args=True):
                source = " ".join("; ".join(code_of(part) for part in node.body).split())
                return (
                    f" (`{text}` calls no model found here: it reads {', '.join(sorted(names))}, computed by "
                    f"`{source}` earlier in {func.name.value}(), with other scaled backwards and steps between, "
                    "which no autocast region can span)"
                )
        return ""

    def _why_rescale_only(self) -> str:
        if self.rescale_only is None:
            return ""
        stmt = self.rescale_only
        parts = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else [stmt]
        text = "; ".join(code_of(part).strip() for part in parts)  # without the comments above it
        return (
            f" (`{text}` before it only rescales a loss computed before its block, where no forward pass "
            "autocast could wrap was found)"
        )

    def _why_not_own_forward(self, site: ScaleLossSite) -> str:
        """Where the loss is a parameter of a method of a module with its own ``forward()``
        (``_loss_from_own_forward`` did not prove that route): the words that say so."""
        func, cls = site.func, class_of_method(self.parents, site.func)
        if func is None or cls is None or not isinstance(site.loss, cst.Name):
            return ""
        if site.loss.value not in [p.name.value for p in func.params.params][1:]:
            return ""
        if not any(isinstance(m, cst.FunctionDef) and m.name.value == "forward" for m in cls.body.body):
            return ""
        return (
            f" ({func.name.value}() is handed {site.loss.value}, and not every call of it in the repository "
            f"provably hands it what the receiver's own forward() returned)"
        )

    def _why_handed_callable(self, site: ScaleLossSite) -> str:
        """``for fn in loss_funcs: loss, log = fn(batch)`` before the scale_loss: the loss comes
        from calling a function the method is handed (a parameter, or a loop over one), whose
        forward passes, and what the callers put in its arguments, are not followed.  The
        words that say so, or ""."""
        func = site.func
        if func is None or not isinstance(site.loss, cst.Name):
            return ""
        params = {p.name.value for p in func.params.params}
        handed = set(params)
        for node in walk(func.body):
            if isinstance(node, cst.For) and _reads(node.iter, params):
                handed |= {n.value for n in walk(node.target) if isinstance(n, cst.Name)}
        for node in walk(func.body):
            if not isinstance(node, cst.Assign) or not isinstance(node.value, cst.Call):
                continue
            callee = node.value.func
            if not isinstance(callee, cst.Name) or callee.value not in handed - {site.loss.value}:
                continue
            if site.loss.value in {n.value for t in node.targets for n in walk(t.target) if isinstance(n, cst.Name)}:
                return (
                    f" (the loss comes from {callee.value}(), a function {func.name.value}() is handed: "
                    "its forward passes, and those of the callers that fill its arguments, are not followed)"
                )
        return ""

    def _why_read_off(self, site: ScaleLossSite) -> str:
        """``losses = self.trainer.step_outputs["loss_for_backward"]`` (cvpods' optimization
        hook): the loss is only read, without a call, off an object another piece of code fills
        (an attribute of an attribute, or an item of one), every time the method binds it.  The
        words that say so, or ""."""
        func = site.func
        if func is None or not isinstance(site.loss, cst.Name):
            return ""
        name = site.loss.value
        values = []
        for node in walk(func.body):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                return ""  # a nested scope: its bindings are not followed here
            if isinstance(node, cst.Assign) and name in {code_of(t.target) for t in node.targets}:
                values.append(node.value)
            elif isinstance(node, (cst.AnnAssign, cst.NamedExpr, cst.For, cst.WithItem)):
                target = node.asname if isinstance(node, cst.WithItem) else node.target
                if target is not None and name in {code_of(n) for n in walk(target) if isinstance(n, cst.Name)}:
                    return ""
        if len(values) != 1 or any(isinstance(n, cst.Call) for n in walk(values[0])):
            return ""
        chain = values[0]
        depth = 0
        while isinstance(chain, (cst.Attribute, cst.Subscript)):
            chain, depth = chain.value, depth + 1
        if not isinstance(chain, cst.Name) or depth < 2:
            return ""
        return (
            f" (the loss is read from `{code_of(values[0])}`, which other code fills: the forward pass that "
            "computes it runs there, which is not followed)"
        )

    def _overridden_in_same_file(self, cls: cst.ClassDef, method: str) -> bool:
        """Whether a class of this file derives from ``cls`` (by its plain name) and defines
        ``method`` itself."""
        for node in walk(self.tree):
            if not isinstance(node, cst.ClassDef) or node is cls:
                continue
            if any(isinstance(b.value, cst.Name) and b.value.value == cls.name.value for b in node.bases):
                if any(isinstance(m, cst.FunctionDef) and m.name.value == method for m in node.body.body):
                    return True
        return False

    def _forward_body_span(self, cls: cst.ClassDef, info: AmpFile) -> Optional[Tuple[Any, ...]]:
        """The whole body of ``cls.forward()`` (after its docstring) as a span, with the
        scaler's switch there: ``((statements, forward), switch)``; ``()`` when it runs under
        an autocast already; None for a generator, an empty body or the scaler out of reach."""
        forward = next(m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "forward")
        members = list(forward.body.body) if isinstance(forward.body, cst.IndentedBlock) else []
        if members and isinstance(members[0], cst.SimpleStatementLine) and isinstance(members[0].body[0], cst.Expr):
            if isinstance(members[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString)):
                members = members[1:]  # the docstring stays first
        if not members or any(isinstance(n, cst.Yield) for n in walk(forward.body)):
            return None
        if self._inside_autocast(members[0]):
            return ()
        switch = self._switch_in(forward, info)
        return None if switch is False else ((members, forward), switch)

    def _handed_forward_results(self, site: ScaleLossSite, info: AmpFile) -> List[str]:
        """``def gen_update(self, x_ab, s_a, ...)`` of a module whose own ``forward()`` runs
        the models and returns ``x_ab, s_a, ...``, which a training script computes first and
        then hands over: the forward pass of these outputs happens outside this method (and
        outside any autocast placed here).  The names handed over that way (none: empty)."""
        func = site.func
        cls = class_of_method(self.parents, func)
        if func is None or cls is None or func.name.value == "forward":
            return []
        forward = next((m for m in cls.body.body if isinstance(m, cst.FunctionDef) and m.name.value == "forward"), None)
        if forward is None:
            return []
        models = self._model_texts(info)
        if not any(self._is_model_call(stmt, models) for stmt in forward.body.body):
            return []
        returned: List[str] = []
        for node in walk(forward.body):
            if isinstance(node, cst.Return) and node.value is not None:
                returned += [t for t in flat_texts(node.value) if t.isidentifier()]
        params = [p.name.value for p in func.params.params]
        return [name for name in params if name in returned]


    def _place_autocast_at_call(self, call: cst.Call, func: Any, info: AmpFile) -> None:
        """A call that hands a loss to a method of another file's class which scales it
        (``self.fp_optimizer.step(loss, ...)``): autocast around the forward pass that
        computes that loss, here."""
        loss = loss_of_call(info, call)
        stmt = self.statement_of(call)
        span = None
        if loss is not None and isinstance(stmt, cst.SimpleStatementLine) and not self._inside_autocast(stmt):
            texts = {code_of(n) for n in walk(loss) if isinstance(n, (cst.Name, cst.Attribute))}
            span = self._forward_span(stmt, texts, info)
        elif self._inside_autocast(stmt):
            return
        switch = self._switch_in(func, info)
        if span is None or switch is False:
            self.todo(
                call,
                "APX210",
                f"the forward pass and loss handed to {code_of(call.func)}() are not next to this call: wrap them in "
                f'`with torch.autocast("cuda", dtype=torch.{self.settings.dtype}):` by hand',
            )
            return
        self._wrap_spans([(span, func)], [switch], info)
        self.need_torch()

    def _at_callers_in_launcher(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """The plan's ``autocast_at_caller``: the loss is a parameter of a method of an entry
        class built only in launchers, which put autocast around the forward passes whose
        losses they hand over (each call, or they keep apex.amp and the component with it)."""
        func = site.func
        cls = class_of_method(self.parents, func)
        if info.plan is None or func is None:
            return False
        method = f"{cls.name.value}.{func.name.value}" if cls is not None else func.name.value
        if method not in info.plan.autocast_at_caller:
            return False
        if cls is None and not _runs_no_forward(func):
            return False  # its own forward pass, not found: the TODO says so
        where = (
            "its callers in the file that creates the GradScaler"
            if cls is not None
            else f"its caller in {info.plan.glued_from}, which hands it the GradScaler"
        )
        self.report(
            site.with_stmt,
            "APX209",
            f"the loss handed to {method}() is computed by {where}: autocast goes around their forward passes there",
            fixed=True,
            severity="info",
        )
        return True

    def _at_stepping_callers(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """The plan's caller-step route (``_amp_caller_steps``): the helper scales the loss its
        launchers hand it, and runs no forward pass itself; they put autocast around the
        forward passes of those losses (each call, or the plan is dropped)."""
        launchers = stepped_helper(info.plan, site.func, self.parents)
        if launchers is None or not _runs_no_forward(site.func):
            return False
        self.report(
            site.with_stmt,
            "APX209",
            f"the loss handed to {site.func.name.value}() is computed by its callers in {', '.join(launchers)}, "
            "which hand it the GradScaler and step after it: autocast goes around their forward passes there",
            fixed=True,
            severity="info",
        )
        return True

    def _at_outside_callers(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """A method of a class no file of the repository refers to (the plan's
        ``unreferenced``: a loss scaler class offered to other code, ``ApexScaler.__call__(self,
        loss, optimizer)``) scales the loss it is handed, computing no forward pass itself:
        the class now takes the GradScaler in its constructor, so a caller elsewhere that does
        not pass one fails there at once; one that does made it where its amp.initialize was,
        and its forward passes go under autocast there, as its own (a warning says so)."""
        func = site.func
        cls = class_of_method(self.parents, func)
        if info.plan is None or func is None or cls is None or cls.name.value not in info.plan.unreferenced:
            return False
        params = [p.name.value for p in func.params.params]
        if not isinstance(site.loss, cst.Name) or site.loss.value not in params[1:] or not _runs_no_forward(func):
            return False
        self.report(
            site.with_stmt,
            "APX209",
            f"the loss handed to {cls.name.value}.{func.name.value}() is computed by its callers, none of them in "
            f"this repository: each must build {cls.name.value} with its GradScaler and compute that loss under "
            f'`torch.autocast("cuda", dtype=torch.{self.settings.dtype})`',
            fixed=True,
            severity="warning",
        )
        return True

    def _wrap_spans(self, spans: List[Tuple[Any, Any]], switches: List[Any], info: AmpFile) -> None:
        for (members, _func), enabled in zip(spans, switches):
            if members[0] in self.edits.groups:
                continue  # another scale_loss of this loss wrapped the same forward pass
            if self._switched_autocast(members[0]) is not None:
                self._widen_switch(members[0], enabled)
                continue
            switch = f", enabled={enabled}" if enabled else ""
            device = device_type_at(self, members[0], self._model_texts(info))
            head = f"with torch.autocast({device}, dtype=torch.{self.settings.dtype}{switch}):\n    pass\n"

            indent = self.tree.default_indent
            self.edits.wrap(members, lambda ups, head=head: wrapped_in_with(head, ups, indent))
            self.report(
                members[0],
                "APX209",
                "forward pass and loss wrapped in torch.autocast (apex never marked them)",
                fixed=True,
                severity="info",
            )
            self._report_data_block(members)
        self.need_torch()

    def _report_data_block(self, members: List[Any]) -> None:
        """APX264 on the gradient-off block (``_is_data_block``) the region ``members`` starts
        after, if there is one."""
        block = self.parents.get(members[0])
        body: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        before = body[: body.index(members[0])] if members[0] in body else []
        rollout = next((stmt for stmt in reversed(before) if stmt in self.data_blocks), None)
        if rollout is None:
            return
        self.report(
            rollout,
            "APX264",
            "the model's forward passes in this gradient-off block feed the loss as data only (no gradients): "
            "the autocast region starts after it, at the training forward pass, so they run in float32 where "
            "apex's O1 ran them in float16 (the numbers differ slightly; wrap the block in the same autocast by "
            "hand to match apex)",
            fixed=True,
            severity="info",
        )

    def _switched_autocast(self, stmt: Any) -> Optional[cst.Call]:
        """``with torch.autocast("cuda", enabled=flag):`` (one item, switched by ``enabled=``,
        in the dtype this migration autocasts to): its call, else None.  Transformer-XL
        computes its loss under such an autocast, off on the apex path."""
        if not isinstance(stmt, cst.With) or len(stmt.items) != 1 or not isinstance(stmt.items[0].item, cst.Call):
            return None
        call = stmt.items[0].item
        if not self.qualified_names(call.func) & _AUTOCAST_NAMES or any(a.star for a in call.args):
            return None
        positional, keywords = call_args(call)
        if len(positional) != 1 or set(keywords) - {"device_type", "dtype", "enabled"} or "enabled" not in keywords:
            return None
        dtype = keywords.get("dtype")
        if dtype is not None:
            return call if code_of(dtype.value) == f"torch.{self.settings.dtype}" else None
        device = positional[0].value
        default = isinstance(device, cst.SimpleString) and device.evaluated_value == "cuda"
        return call if default and self.settings.dtype == "float16" else None

    def _widen_switch(self, stmt: cst.With, enabled: Optional[str]) -> None:
        """The autocast around the forward pass also runs where the GradScaler does:
        ``enabled=flag`` -> ``enabled=flag or scaler.is_enabled()`` (dropped when the scaler
        is always on)."""
        call = self._switched_autocast(stmt)
        assert call is not None
        if call in self.node_replacements:
            return  # another scale_loss of this loss widened it already
        flag = next(a for a in call.args if a.keyword is not None and a.keyword.value == "enabled")
        old = code_of(flag.value)
        if not isinstance(flag.value, (cst.Name, cst.Attribute, cst.Call)):
            old = f"({old})"

        def widen(upd: cst.Call) -> cst.Call:
            args = [a for a in upd.args if not (a.keyword is not None and a.keyword.value == "enabled")]
            if enabled is not None:
                args.append(flag.with_changes(value=expression(f"{old} or {enabled}")))
            else:
                args[-1] = args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return upd.with_changes(args=args)

        self.replace_node(call, widen)
        self.report(
            stmt,
            "APX209",
            f"the forward pass already runs under torch.autocast(enabled={code_of(flag.value)}); it is now on "
            f"wherever the GradScaler is ({'enabled=' + old + ' or ' + enabled if enabled else 'always'})",
            fixed=True,
            severity="info",
        )

    def _forward_span(self, stmt: Any, loss_texts: set, info: AmpFile) -> Optional[List[Any]]:
        """The one span of ``_forward_spans``; None when there is none, or two."""
        spans = self._forward_spans(stmt, loss_texts, info)
        return spans[0] if spans is not None and len(spans) == 1 else None

    def _forward_spans(self, stmt: Any, loss_texts: set, info: AmpFile) -> Optional[List[List[Any]]]:
        """The statements before ``stmt`` from the first model call through the one that
        computes the loss, in the same block or, when nothing before ``stmt`` in its block
        stops the search, before the ``if`` that holds it (``if fp16: with amp.scale_loss(...)
        ... else: loss.backward()``, or the two branches of an accumulation boundary); or two
        spans, when the model is called before the ``if`` whose branch computes the loss from
        its outputs (``_split_spans``); None when they are not there.  A span another
        scale_loss of the same loss already wrapped comes back as it is (nothing to wrap
        again)."""
        anchor: Any = stmt
        looped = False  # climbed out of a loop: only a span already found may hold the loss
        while True:
            if self._inside_autocast(anchor):
                return None
            block = self.parents.get(anchor)
            body: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
            index = body.index(anchor) if anchor in body else -1
            end = None
            blocked = False
            for j in range(index - 1, -1, -1):
                if assigned_names(body[j]) & loss_texts and self._switched_autocast(body[j]) is not None:
                    return [[body[j]]]  # already under an autocast, switched for another path
                if self._is_exit_guard(body[j], loss_texts) or self._is_bystander(body[j], loss_texts):
                    continue
                if _is_import_guard(body[j]):
                    continue
                if self._accumulates_loss(body[j], loss_texts):
                    end = j  # ``for critic in critics: loss_g = loss_g + ...``
                    break
                if (
                    assigned_names(body[j]) & loss_texts
                    and isinstance(body[j], cst.If)
                    and not self._leaves(body[j])
                    and (
                        _only_adds_to(body[j], loss_texts)
                        or (  # the loss from outputs computed before it, on every path
                            _sets_on_every_branch(body[j], loss_texts)
                            and not self._trains_model(body[j], self._model_texts(info))
                        )
                    )
                    and self._rides_in_span(body[j])
                ):
                    end = j  # ``if kl_w > 0: with torch.no_grad(): ref = ...; loss += kl_w * kl(out, ref)``
                    break
                if assigned_names(body[j]) & loss_texts and self._is_guarded_forward(body[j]):
                    end = j  # ``try: stats = self.task(egs)`` / ``except RuntimeError: ... return False``
                    break
                if self._is_barrier(body[j]):
                    branches = self._branch_spans(body[j], loss_texts, info)
                    if branches is not None:
                        return branches
                    branch = self._loss_in_one_branch(body[j], loss_texts)
                    split = self._split_spans(*branch, self._model_texts(info)) if branch is not None else None
                    if split:
                        return split
                    blocked = True
                    break
                if assigned_names(body[j]) & loss_texts:
                    end = j
                    break
            if end is not None and looped:
                return None
            if end is not None:
                break
            owner = self.parents.get(block)
            if isinstance(owner, cst.Else):
                owner = self.parents.get(owner)
            if not blocked and index >= 0 and isinstance(owner, cst.With) and self._is_plain_with_block(owner):
                anchor = owner  # ``with Nvtx("backward"): ...``: the forward may be before it
                continue
            if blocked:
                wrapped = self._wrapped_before(body, index, loss_texts)
                return None if wrapped is None else [wrapped]
            if self.helpers and index >= 0 and isinstance(owner, cst.For) and not owner.orelse:
                # ``for s in scales: loss_backward(opt, losses[s], opts[s])``: the losses come
                # from a forward pass before the loop, wrapped for an earlier call
                anchor, looped = owner, True
                continue
            if index < 0 or not isinstance(owner, cst.If):
                return None
            while isinstance(self.parents.get(owner), cst.If) and self.parents[owner].orelse is owner:
                owner = self.parents[owner]  # an elif: the statement in the block is the first if
            anchor = owner
        models = self._model_texts(info)
        start = None
        for j in range(end, -1, -1):
            if j != end and self._is_barrier(body[j]) and not self._rides_in_span(body[j]):
                if self._is_plain_loop(body[j]) and not self._is_model_call(body[j], models, via_args=True):
                    continue  # ``for name, part in parts: log(name, part.item())``: rides along
                if not self._is_forward_loop(body[j]):
                    if self._runs_own_scaled_backward(body[j], info) or not self._feeds_span(
                        body[j], body[j + 1 : end + 1], models
                    ):
                        break
                    if self._starts_after(body, j, models):
                        self.data_blocks += (body[j],)
                        break
                    if not self._is_plain_loop(body[j]):
                        # the model runs in a block autocast cannot span: wrapping only what
                        # follows would leave the forward pass in float32
                        return None
                    start = j  # ``for clip in clips: outs.append(step(model, clip))``
                    continue
            if j != end and self._hands_scaler(body[j], info):
                break  # ``delta = attack_pgd(model, X, y, opt)``: runs its own scaled backward
            via_args = j == end or self._feeds_loss(body[j], body[j + 1 : end + 1], models)
            if self._is_model_call(body[j], models, via_args=via_args):
                if j != end and self._nests_or_steps(body[j]) and not self._feeds_span(
                    body[j], body[j + 1 : end + 1], models
                ):
                    continue  # ``if warm: for k in ks: model.set_k(k)``: rides, starts nothing
                start = j
        if start is not None and _origin_before(body, start, end, loss_texts):
            split = self._split_spans(body, end, models)
            if split is None:
                split = loss_loop_spans(self, body, end, loss_texts)
            if split is None:
                self.rescale_only = body[end]
            return split
        if start is None:
            split = self._split_spans(body, end, models)
            if split is None:
                split = loss_loop_spans(self, body, end, loss_texts)
            if split is None:
                self.lone_loss = body[end]
            return split
        outer = self._outer_forward(body, end, models)
        if outer is not None and len(outer) > 1 and outer[1][0] in body:
            start = min(start, body.index(outer[1][0]))  # the branch reads the outputs before
        members = self._unplanned(body[start : end + 1])
        if members is None:
            return None
        if outer is None:
            # rotom's evaluation under ``torch.no_grad()`` before ``reward = log_prob * -v_loss``
            self.grad_off_reason = grad_off_span_reason(self, members, models)
            if self.grad_off_reason:
                return None
        return [members] if outer is None else [outer[0], members]

    def _outer_forward(self, body: List[Any], end: int, models: set) -> Optional[List[List[Any]]]:
        """A GAN's generator step (sweep15): ``fake = netG(z)`` before ``if step % n == 0:
        g_loss = -netD(fake).mean(); with amp.scale_loss(g_loss, ...)``.  The branch calls a
        model too (the discriminator), so its span starts there, but it reads what a model
        call before the ``if`` returned: that forward pass ran in float16 under apex as well.
        ``_split_spans``' spans (the forward pass before the ``if``, then the branch from the
        first statement that reads its outputs), or None when there is no such forward pass (a
        region over the branch alone is then the whole forward pass, as before)."""
        split = self._split_spans(body, end, models)
        if not split or split[0][0] in body:
            return None
        return split

    def _loss_in_one_branch(self, stmt: Any, loss_texts: set) -> Optional[Tuple[List[Any], int]]:
        """``if mode in ("train", "valid"): loss = criterion(outputs, y)`` (no ``else``) before
        the ``if`` that scales it: the branch's statements and the index of the last one that
        assigns the loss, a simple statement (``_split_spans`` then finds the forward pass before
        the ``if``); None when ``stmt`` is no such ``if``: an ``else``, a jump, a step or a
        backward in it.  Where the branch is skipped no loss is computed, in the original too."""
        if not isinstance(stmt, cst.If) or stmt.orelse is not None or not isinstance(stmt.body, cst.IndentedBlock):
            return None
        jumps = self._leaves(stmt)
        if jumps or self._nests_or_steps(stmt, nests=False) or not assigned_names(stmt) & loss_texts:
            return None
        branch = list(stmt.body.body)
        end = next((k for k in range(len(branch) - 1, -1, -1) if assigned_names(branch[k]) & loss_texts), None)
        if end is None or not isinstance(branch[end], cst.SimpleStatementLine):
            return None
        return branch, end

    def _branch_spans(self, chain: Any, loss_texts: set, info: AmpFile) -> Optional[List[List[Any]]]:
        """``if with_apex: loss = model(x)`` / ``else: with autocast(): loss = model(x)``: an
        if/elif/else each branch of which computes the loss.  A branch that computes it under an
        autocast already is left alone (its switch widened when it has one,
        ``_switched_autocast``); each other branch's forward pass is a span of its own, wrapped
        under the scaler's switch, so autocast runs exactly where the GradScaler does.  None when
        ``chain`` is no such if: no ``else`` (a path keeps the loss from before), a jump, a step
        or a backward in it, or a branch whose forward pass is not found."""
        if not isinstance(chain, cst.If) or not assigned_names(chain) & loss_texts:
            return None
        if self._steps_or_yields(chain) or self._leaves(chain):
            return None
        blocks: List[Any] = []
        link: Any = chain
        while isinstance(link, cst.If):
            blocks.append(link.body)
            link = link.orelse
        if not isinstance(link, cst.Else):
            return None
        blocks.append(link.body)
        models = self._model_texts(info)
        spans: List[List[Any]] = []
        for block in blocks:
            stmts: List[Any] = list(block.body) if isinstance(block, cst.IndentedBlock) else []
            end = next((k for k in range(len(stmts) - 1, -1, -1) if assigned_names(stmts[k]) & loss_texts), None)
            if end is None:
                return None
            last = stmts[end]
            if isinstance(last, cst.With) and any(
                code_of(i.item.func if isinstance(i.item, cst.Call) else i.item).split(".")[-1] == "autocast"
                for i in last.items
            ):
                if self._switched_autocast(last) is not None:
                    spans.append([last])
                continue
            if self._is_barrier(last) and not self._accumulates_loss(last, loss_texts):
                return None
            start = None
            for k in range(end, -1, -1):
                if k != end and self._is_barrier(stmts[k]):
                    if self._rides_along(stmts[k], loss_texts, models):
                        continue  # ``for out in outputs: loss += crit(out, y)`` (deep supervision)
                    break
                if self._is_model_call(stmts[k], models, via_args=k == end):
                    start = k
            members = None if start is None else self._unplanned(stmts[start : end + 1])
            if members is None:
                return None
            spans.append(members)
        return spans or None

    def _rides_along(self, stmt: Any, loss_texts: set, models: set) -> bool:
        """A plain loop of a branch's forward pass that does not call the model: one that adds
        the outputs' losses up (``_accumulates_loss``) or only reads them; autocast spans it as
        the search before the scale_loss does (``_forward_spans``)."""
        if not self._is_plain_loop(stmt):
            return False
        return self._accumulates_loss(stmt, loss_texts) or not self._is_model_call(stmt, models, via_args=True)

    def _unplanned(self, members: List[Any]) -> Optional[List[Any]]:
        """``members``, unless another edit already covers some of them (a span planned for
        another scale_loss of the same loss comes back as it is)."""
        group = self.edits.groups.get(members[0])
        if group is not None and group[0] == members:
            return members
        if any(self.edits.planned(m) or m in self.edits.groups for m in members):
            return None
        return members

    def _split_spans(self, body: List[Any], end: int, models: set) -> Optional[List[List[Any]]]:
        """``outputs = model(x)`` before ``if accumulate: loss = criterion(outputs, y) ...
        with amp.scale_loss(loss, ...)``: the loss (``body[end]``) is computed in a branch
        from what the model returned before the ``if``.  Two spans: the statements from the
        model call to the ``if``, and those of the branch from the first that reads what
        they assigned through the loss (only the first when the branch merely does arithmetic on
        them); None when the block has no such shape."""
        chain: Any = self.parents.get(self.parents.get(body[end]))
        if isinstance(chain, cst.Else):
            chain = self.parents.get(chain)
        if not isinstance(chain, cst.If):
            return None
        while isinstance(self.parents.get(chain), cst.If) and self.parents[chain].orelse is chain:
            chain = self.parents[chain]
        block = self.parents.get(chain)
        outer: List[Any] = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
        if chain not in outer or self._inside_autocast(chain):
            return None
        at = outer.index(chain)
        # an ``if`` the region covers (the loss summed over a dict of outputs) is no barrier
        stops = [j for j in range(at - 1, -1, -1) if self._is_barrier(outer[j]) and not self._rides_in_span(outer[j])]
        start = next(
            (j for j in range(at - 1, -1, -1) if j in stops or self._is_model_call(outer[j], models)),
            None,
        )
        if start is None or start in stops:
            return None
        forward = outer[start:at]
        produced = set().union(*(assigned_names(m) for m in forward))
        produced -= {text.split(".")[0] for text in produced if "." in text}  # ``self`` of ``self.out``
        first = end
        for j in range(end, -1, -1):
            if j != end and self._is_barrier(body[j]):
                break
            if _reads(body[j], produced):
                first = j
        if not _reads(body[first], produced):
            return None
        loss = body[first : end + 1]
        # ``loss = loss / accum`` only: nothing there for autocast to run in float16
        computed = any(isinstance(n, cst.Call) for m in loss for n in walk(m))
        spans = [self._unplanned(forward)] + ([self._unplanned(loss)] if computed else [])
        return [members for members in spans if members is not None] if None not in spans else None

    def _wrapped_before(self, body: List[Any], index: int, loss_texts: set) -> Optional[List[Any]]:
        """The autocast span already planned for another scaled loss, when the statement
        that last assigns this loss before ``body[index]`` is in it (a GAN step computes the
        generator's and the discriminator's losses in one forward block, then steps one
        optimizer before the other loss's backward); None otherwise."""
        for j in range(index - 1, -1, -1):
            if assigned_names(body[j]) & loss_texts:
                for members in [m for m, _build in self.edits.groups.values()] + list(self.pending):
                    if body[j] in members:
                        return members
                return self._extend_pending(body, j)
        return None

    def _extend_pending(self, body: List[Any], j: int) -> Optional[List[Any]]:
        """A GAN step computes the generator's loss right after the discriminator's, then hands
        each to the backward helper: the span found for the earlier call (not wrapped yet) grows
        over the statements after it through ``body[j]``, when none of them is a barrier."""
        for members in self.pending:
            if members[-1] not in body:
                continue
            last = body.index(members[-1])
            tail = body[last + 1 : j + 1]
            if last < j and not any(self._is_barrier(s) or self.edits.planned(s) for s in tail):
                members.extend(tail)
                return members
        return None

    @staticmethod
    def _feeds_loss(stmt: Any, span: List[Any], models: set) -> bool:
        """Whether what simple statement ``stmt`` assigns is read on the way to the loss
        (``outputs, ids = forward_step(model, batch)`` before ``loss = outputs["loss"]``): a
        helper handed the model there runs the forward pass, as at the loss itself.  A
        statement that binds the model (``model, opt = amp.initialize(model, opt)``, ``model =
        wrap(model)``) builds it and runs no forward pass."""
        bound = assigned_names(stmt) if isinstance(stmt, cst.SimpleStatementLine) else set()
        if bound & models:
            return False
        return bool(bound) and any(_reads(s, bound) for s in span)

    def _feeds_span(self, stmt: Any, span: List[Any], models: set) -> bool:
        """Whether ``stmt`` (a block the region stops at) runs the model, called or handed to a
        helper, and what that returns reaches ``span``: ``for clip in clips: out =
        forward_step(model, clip); logits.append(out)`` before ``loss = crit(stack(logits))``.
        What a line holding the model call binds or fills counts, and what lines reading that
        bind or fill in turn (an evaluation call in an ``except`` that binds nothing the span
        reads does not count)."""
        lines = [line for line in walk(stmt) if isinstance(line, cst.SimpleStatementLine)]
        produced: set = set()
        seeded = {id(line) for line in lines if self._is_model_call(line, models, via_args=True)}
        # ``self.learner(x, accumulate=True)``: a forward pass run for what it keeps in the model,
        # which the span reads there (``loss = self.learner.calculate_loss()``)
        kept = {
            code_of(small.value.func)
            for line in lines
            if id(line) in seeded
            for small in line.body
            if isinstance(small, cst.Expr) and isinstance(small.value, cst.Call) and self._is_model_call(small, models)
        }
        if any(_reads(s, kept) for s in span):
            return True
        changed = True
        while changed:
            changed = False
            for line in lines:
                if id(line) in seeded or _reads(line, produced):
                    fresh = _fills(line) - produced
                    if fresh:
                        produced |= fresh
                        changed = True
        produced -= {text.split(".")[-1] for text in models} | models
        return any(_reads(s, produced) for s in span)

    def _runs_own_scaled_backward(self, stmt: Any, info: AmpFile) -> bool:
        """Whether block ``stmt`` holds an ``amp.scale_loss`` of its own (an attack loop:
        ``for _ in range(iters): output = model(X + delta); loss = ...; with
        amp.scale_loss(loss, opt): ...; delta.data = ... sign(delta.grad) ...``): the forward
        passes in it feed that backward, under the region placed for that site, and what the
        block hands on (the perturbation) is an input of the forward pass after it, not one of
        its outputs; the region after it starts after it."""
        return any(is_nested_in(self.parents, site.with_stmt, stmt) for site in info.scale_losses)

    @staticmethod
    def _hands_scaler(stmt: Any, info: AmpFile) -> bool:
        """Whether ``stmt`` calls a function the GradScaler is handed to (of this file or
        another): it scales a loss (or saves the scaler's state) itself, and a loss it scales
        gets its autocast region there; a region here would hold that backward (an attack
        helper's: ``delta = attack_pgd(model, X, y, opt)``), so the region starts after it."""
        calls = set(map(id, info.passes)) | {id(c) for cs in info.threaded.values() for c in cs}
        return bool(calls) and any(id(n) in calls for n in walk(stmt))

    def _is_forward_loop(self, stmt: Any) -> bool:
        """A plain ``for`` loop (``_is_plain_loop``) that runs forward passes (a discriminator
        per temporal scale): the autocast region of a backward helper's caller may hold it,
        only then."""
        return bool(self.helpers) and self._is_plain_loop(stmt)

    def _spans_at_callers(self, site: ScaleLossSite, info: AmpFile) -> List[Tuple[Any, Any]]:
        """``def backward(self, loss): with amp.scale_loss(loss, ...)`` called as
        ``self.backward(loss)`` right after the forward pass: wrap at each call."""
        func = site.func
        if func is None or not isinstance(site.loss, cst.Name):
            return []
        params = [p.name.value for p in func.params.params]
        if site.loss.value not in params:
            return []
        index = params.index(site.loss.value)
        cls = class_of_method(self.parents, func)
        holder = self.parents.get(self.parents.get(func))
        # a static method of the class, called through the instance (vissl's run_backward)
        static = (
            holder if cls is None and isinstance(holder, cst.ClassDef)
            and any(code_of(d.decorator) == "staticmethod" for d in func.decorators) else None
        )
        # the class and its same-file subclasses that inherit the method (XLM's
        # EncDecTrainer.mt_step calls the base Trainer's self.optimize(loss))
        family = [cls] + heirs(self.parents, cls, func.name.value) if cls is not None else []
        calls: List[cst.Call] = []
        for node in walk(self.tree):
            if not isinstance(node, cst.Call):
                continue
            if cls is not None and isinstance(node.func, cst.Attribute) and node.func.attr.value == func.name.value:
                caller = enclosing(self.parents, node, cst.FunctionDef)
                if class_of_method(self.parents, caller) in family and code_of(node.func.value) == self_name(caller):
                    calls.append(node)
            elif static is not None and isinstance(node.func, cst.Attribute) and node.func.attr.value == func.name.value:
                caller = enclosing(self.parents, node, cst.FunctionDef)
                if class_of_method(self.parents, caller) is static and code_of(node.func.value) == self_name(caller):
                    calls.append(node)
            elif cls is None and static is None and isinstance(node.func, cst.Name) and node.func.value == func.name.value:
                calls.append(node)
        if cls is None and static is None:  # the calls through a name a partial binds in its function
            calls += [c for c in _callers(self, func) or [] if c not in calls]
        outside = self._outside_caller(func, index, family) if cls is not None else None
        if outside is not None:
            caller, call = outside
            where = f"{caller.name.value}()" if caller is not None else "the module's top level"
            self.caller_reason = (
                f" ({where} calls {code_of(call.func)}(...) on an object, not on self: the tool does not follow "
                "which object that is, nor put the forward pass of the loss it hands under autocast)"
            )
            return [(None, None)]
        spans = []
        for call in calls:
            shift = 1 if cls is not None else 0 if static is not None else bound_offset(self, call)
            args = [a for a in call.args if a.keyword is None and not a.star]
            passed = args[index - shift].value if 0 <= index - shift < len(args) else None
            stmt = self.statement_of(call)
            if passed is None or not isinstance(stmt, cst.SimpleStatementLine):
                return [(None, None)]
            texts = {code_of(n) for n in walk(passed) if isinstance(n, (cst.Name, cst.Attribute))}
            outer, self.helpers = self.helpers, self.helpers | {func.name.value}
            try:
                span = self._forward_span(stmt, texts, info)
            finally:
                self.helpers = outer
            spans.append((span, enclosing(self.parents, call, cst.FunctionDef)))
            if span is not None:
                self.pending += (span,)  # a later call's loss may come from it
        self.pending = ()
        return spans

    def _outside_caller(
        self, func: cst.FunctionDef, index: int, family: List[Any]
    ) -> Optional[Tuple[Optional[cst.FunctionDef], cst.Call]]:
        """A call of the backward helper ``func`` (its loss the parameter at ``index``) on an
        object other than ``self``, handing it a loss (``trainer.backward_step(trainer.model(x)
        .sum())`` in a function driving an instance), outside any autocast block, with its
        function: its forward pass would train in float32 once the helper scales through a
        GradScaler.  Which object it is is not followed (any such method name counts);
        ``loss.backward()`` hands no loss, ``super()`` and ``torch.`` receivers are not instances."""
        loss_param = func.params.params[index].name.value
        for caller, call in calls_on_other_objects(self, family, func.name.value):
            receiver = code_of(call.func.value)  # type: ignore[attr-defined]
            if receiver == "super()" or receiver.startswith("torch."):
                continue
            positional = [a for a in call.args if a.keyword is None and not a.star]
            hands_loss = len(positional) >= index or any(
                a.keyword is not None and a.keyword.value == loss_param for a in call.args
            )
            if hands_loss and not self._inside_autocast(call):
                return caller, call
        return None

    def _read_home_in(self, func: cst.FunctionDef, info: AmpFile) -> str:
        """The module-scaler route's variable as ``func`` (a function of a reader without a
        site) reads it, imported in it where the reader's sites import it locally (APX252)."""
        plan = cast(Any, info.plan)
        access = f"{plan.reader_access}.{info.scaler_name}"
        info.access[func] = access
        info.reader_callers.add(func)
        if plan.reader_local:
            self.edits.insert_before(first_body_statement(func), [statement(plan.reader_import)])
        return access

    def _switch_in(self, func: Optional[cst.FunctionDef], info: AmpFile):
        """The autocast ``enabled=`` text inside ``func`` (None: always on; False: the
        scaler cannot be reached there)."""
        if not info.training_inits:  # the scaler comes from another file: follow its switch
            access = info.access.get(func)
            cls = class_of_method(self.parents, func)
            if access is None and cls is not None and cls in info.class_threaded:
                access = f"{self_name(func)}.{info.scaler_name}"
            reader = info.plan is not None and bool(info.plan.module_reader)
            if access is None and reader and isinstance(func, cst.FunctionDef):
                # a function of a reader without a site (the caller whose forward pass makes the
                # loss a backward method scales) reads the home's variable too
                access = self._read_home_in(func, info)
            if access is not None and (info.mirrored_steps or info.shared_steps or func in info.reader_callers):
                # a reader whose plain runs never set the module's GradScaler up (None there):
                # autocast is on once apex's was, whichever branch the step then takes
                return f"{access} is not None and {info.loss_scaler(access, 0)}.is_enabled()"
            return False if access is None else f"{info.loss_scaler(access, 0)}.is_enabled()"
        init = info.training_inits[0]
        switch = self.switches.get(init)
        # a helper returning a disabled GradScaler before its initialize (``_early_returns``):
        # its callers' autocast follows the scaler they unpack, on only where it is enabled
        if switch is None and (not info.early_returns or func is init.func):
            return None
        if func is init.func or switch == "False":
            return switch
        access = info.access.get(func)
        if access is None:
            cls = class_of_method(self.parents, func)
            home = class_of_method(self.parents, init.func)
            if cls is not None and (
                cls in info.class_threaded
                or (info.storage == "self" and home is not None and cls in [home] + heirs(self.parents, home, ""))
            ):
                access = f"{self_name(func)}.{info.scaler_name}"
            elif init.func is None or (info.storage == "local" and is_nested_in(self.parents, func, init.func)):
                access = info.scaler_name
        if access is None:
            return False
        return f"{info.loss_scaler(access, 0)}.is_enabled()"

    # --- the launcher's autocast variable (``amp_autocast = suppress``) -------------------------

    def _under_callers_autocast(self, site: ScaleLossSite, info: AmpFile) -> bool:
        """``ApexScaler.__call__(self, loss, ...)`` of a planned class whose launcher computes
        every loss under its autocast variable, bound to torch.autocast there (the launcher
        proves it, or says why and the plan is dropped)."""
        func = site.func
        cls = class_of_method(self.parents, func)
        if func is None or info.plan is None or cls is None or cls.name.value not in info.plan.autocast_from_caller:
            return False
        params = [p.name.value for p in func.params.params]
        if func.name.value != "__call__" or not isinstance(site.loss, cst.Name) or site.loss.value not in params:
            return False
        self.report(
            site.with_stmt,
            "APX215",
            f"the loss handed to {cls.name.value}() is computed under the launcher's autocast variable, "
            "bound to torch.autocast where amp.initialize was",
            fixed=True,
            severity="info",
        )
        return True

    def _launcher_autocast(self, site: InitSite, info: AmpFile) -> Optional[str]:
        """The no-op autocast variable this initialize's branch binds to torch.autocast: for
        an installed library's loss scaler (found by the analysis) or for the planned
        wrapper classes whose losses it computes; None when there is none, or (with an
        APX210 TODO, which drops the plan) when the wrappers' losses are not provably under it."""
        if info.autocast_var is not None:
            return info.autocast_var
        if info.plan is None or not info.plan.autocast_for_calls:
            return None
        constructors = [c for c in info.passes if code_of(c.func) in info.plan.autocast_for_calls]
        ctx, why = autocast_variable(self, site, constructors)
        if ctx is None:
            names = ", ".join(dict.fromkeys(code_of(c.func) for c in constructors))
            self.todo(
                site.stmt,
                "APX210",
                f"the forward passes of the losses handed to {names} cannot be put under torch.autocast "
                f"on this branch: {why}",
            )
        return ctx

    def _bind_autocast(self, site: InitSite, variable: str, report: bool = True) -> cst.BaseStatement:
        """``amp_autocast = functools.partial(torch.autocast, ...)``, for the initialize's place
        (the APX215 note unless ``report`` is False: the caller says what it did)."""
        device = device_type_at(self, site.anchor, map(code_of, site.models))
        partial = self._imported_partial()
        if partial is None:
            AddImportsVisitor.add_needed_import(self.context, "functools")
            partial = "functools.partial"
        self.need_torch()
        if report:
            self.report(
                site.call,
                "APX215",
                f"{variable}, a no-op context on this branch, is bound to torch.autocast: the forward passes "
                f"it wraps run in {self.settings.dtype} as under apex's O1",
                fixed=True,
                severity="info",
            )
        return statement(
            f"{variable} = {partial}(torch.autocast, device_type={device}, dtype=torch.{self.settings.dtype})\n"
        )

    def _imported_partial(self) -> Optional[str]:
        """The local name of ``from functools import partial`` at module level, if any."""
        for stmt in self.tree.body:
            body = stmt.body if isinstance(stmt, cst.SimpleStatementLine) else []
            for small in body:
                if not (isinstance(small, cst.ImportFrom) and code_of(small.module or cst.Name("")) == "functools"):
                    continue
                for alias in small.names if not isinstance(small.names, cst.ImportStar) else []:
                    if code_of(alias.name) == "partial":
                        return code_of(alias.asname.name) if alias.asname is not None else "partial"
        return None
