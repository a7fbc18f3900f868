"""APX501-APX505: apex O1's casting hooks.

* ``with amp.disable_casts():`` -> ``with torch.autocast("cuda", enabled=False):``;
* ``amp.register_half_function(torch, "einsum")`` (and the float/promote forms) on a torch
  function that native autocast already runs in that precision: removed, with a comment;
  on anything else: removed with a TODO (it would have to patch a module attribute);
* ``@amp.float_function`` / ``@amp.half_function`` and ``amp.float_function(fn)`` -> a
  small local helper, ``autocast_function(dtype)``, that runs the function with autocast
  off on inputs of that dtype, only while CUDA autocast is on (so a CPU fp32 run is
  unchanged, as under apex); ``promote_function`` -> TODO.  As apex, it casts each
  argument that is a floating tensor or a list or tuple holding nothing but floating
  tensors (at any depth, the type kept), their CUDA tensors only; a dict, or a list with
  anything else in it, passes unchanged.
"""

from __future__ import annotations

from typing import Any, List

import libcst as cst
from libcst.codemod.visitors import AddImportsVisitor

from ._amp_rule import APEX_AMP, AmpRule
from ._amp_sites import analyse, code_of, string_value
from ._edits import comment_line, expression, move_leading, statement, todo_lines, with_leading
from .base import Example
from .checkpoints import helper_anchor

# torch functions native CUDA autocast runs in float16 / float32 (torch.amp docs)
AUTOCAST_FP16 = frozenset(
    "addbmm addmm addmv addr baddbmm bmm chain_matmul multi_dot conv_tbc conv_transpose1d conv_transpose2d "
    "conv_transpose3d conv1d conv2d conv3d GRUCell linear LSTMCell matmul mm mv prelu RNNCell einsum "
    "scaled_dot_product_attention".split()
)
AUTOCAST_FP32 = frozenset(
    "acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus layer_norm "
    "group_norm norm nuclear_norm frobenius_norm cosine_similarity poisson_nll_loss cosine_embedding_loss "
    "nll_loss hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss margin_ranking_loss "
    "multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss "
    "binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp softmax log_softmax cumprod cumsum "
    "prod sum cross_entropy rms_norm".split()
)
AUTOCAST_PROMOTE = frozenset(
    "addcdiv addcmul atan2 bilinear cross dot grid_sample index_put scatter_add tensordot cat stack".split()
)
TORCH_NAMESPACES = frozenset({"torch", "torch.nn.functional", "torch.Tensor", "torch.nn.modules"})
HELPER_NAME = "autocast_function"
HELPER = '''def autocast_function(dtype):
    """Decorator: while CUDA autocast is on, run the function with autocast off on ``dtype``
    inputs (what apex.amp's float_function/half_function did under O1)."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if not torch.is_autocast_enabled():
                return fn(*args, **kwargs)

            def floating(value):  # a float tensor, or a list/tuple of nothing else
                if isinstance(value, (list, tuple)):
                    return all(floating(v) for v in value)
                return torch.is_tensor(value) and value.is_floating_point()

            def cast(value):  # CUDA tensors only, lists and tuples keep their type
                if isinstance(value, (list, tuple)):
                    return type(value)(cast(v) for v in value)
                return value.to(dtype) if value.is_cuda else value

            with torch.autocast("cuda", enabled=False):
                return fn(*[cast(a) if floating(a) else a for a in args],
                          **{k: cast(v) if floating(v) else v for k, v in kwargs.items()})

        return wrapper

    return decorate
'''


def registration_todo(kind: str, target: str, registration: str) -> str:
    """The APX503 TODO for ``amp.register_<kind>_function`` on ``target`` that native
    autocast does not cast: what to write instead, in torch calls only (the file has no
    helper for it)."""
    dtype, _ = _KIND[kind]
    if kind == "promote":
        inputs, args = "the widest float type among them", "a.float(), b.float()"
    else:
        inputs, args = dtype, f"x.{'half' if kind == 'half' else 'float'}()"
    return (
        f"apex ran {target} in {dtype} under O1 ({registration}); native autocast does not cast it. "
        f"Where that matters, call it with autocast off and each floating-point tensor argument converted "
        f'to {inputs}: `with torch.autocast("cuda", enabled=False): out = {target}({args})`'
    )


_KIND = {
    "half": ("float16", AUTOCAST_FP16),
    "float": ("float32", AUTOCAST_FP32),
    "promote": ("the widest input type", AUTOCAST_PROMOTE),
}


class CastingHooksRule(AmpRule):
    """disable_casts, register_*_function and the casting decorators."""

    CODES = {
        "APX501": "amp.disable_casts() -> torch.autocast('cuda', enabled=False)",
        "APX502": "amp.register_*_function on a torch function native autocast already handles: removed",
        "APX503": "amp.register_*_function on a function native autocast does not cast: cast it by hand",
        "APX504": "amp.float_function/half_function -> the local autocast_function(dtype) helper",
        "APX505": "amp.promote_function has no native counterpart",
        "APX262": "a probe of whether amp.initialize ran (hasattr(amp._amp_state, ...)) that only gates a cast to "
        "amp.float_function/half_function, in a repository enabling no autocast of its own: the gate's first "
        "branch is kept and the probe removed",
        "APX506": "amp._amp_state.loss_scalers[i].loss_scale() (or ._loss_scale) -> scaler.get_scale() "
        "(scalers[i].get_scale() with one GradScaler per loss id)",
    }
    TRIGGERS = (b"disable_casts", b"_function", b"_amp_state")
    CODE_WORDS = ("apex",)
    LIVE_TRIGGERS = ("disable_casts", "_function", "_amp_state")
    NAMESPACES = APEX_AMP

    def plan(self, module: cst.Module) -> None:
        info = analyse(self, module)
        if info.inits or info.scale_losses and not self._native_scaler_exists(module):
            return  # the file stays on apexcompat.amp
        self.helper_needed = False
        self.removals: List[Any] = []
        for ref in info.refs:
            parent = self.parents.get(ref.expr)
            if ref.member == "disable_casts" and isinstance(parent, cst.Call) and parent.func is ref.expr:
                self.replace_node(parent, expression('torch.autocast("cuda", enabled=False)'))
                self.need_torch()
                self.report(
                    parent,
                    "APX501",
                    'amp.disable_casts() -> torch.autocast("cuda", enabled=False)',
                    fixed=True,
                    severity="info",
                )
            elif ref.member.startswith("register_") and isinstance(parent, cst.Call) and parent.func is ref.expr:
                self._registration(ref.member[len("register_") : -len("_function")], parent)
            elif ref.member in ("float_function", "half_function", "promote_function"):
                self._decorator_or_call(ref, parent)
        self._scale_reads(info, module)
        self._probe_gates(info)
        self._place_removals()
        if self.helper_needed and not any(
            isinstance(s, cst.FunctionDef) and s.name.value == HELPER_NAME for s in module.body
        ):
            anchor = helper_anchor(module)
            helper = statement(HELPER)
            if anchor is None:
                self.edits.insert_before(module.body[0], [helper])
            else:
                self.edits.insert_after(anchor, [helper.with_changes(leading_lines=[cst.EmptyLine(), cst.EmptyLine()])])
            self.need_torch()
            AddImportsVisitor.add_needed_import(self.context, "functools")

    def _probe_gates(self, info) -> None:
        """``if is_amp_training(): return amp.float_function(fn)(...) else: return fn(...)`` ->
        its first branch, and the probe removed (``_amp_probe_gate``)."""
        for probe, gates in info.probe_gates:
            for gate in gates:
                self.edits.replace(gate, lambda kept: [move_leading(kept, kept.body.body[0])])
            self.edits.replace(probe, lambda kept: [])
            self.report(
                probe,
                "APX262",
                f"{probe.name.value}() asked apex's global state whether amp.initialize had run, only to gate "
                f"{len(gates)} cast{'s' if len(gates) > 1 else ''} to amp.float_function/half_function: "
                "autocast_function casts only while autocast is on, which in this repository only the migrated code "
                f"turns on, where apex was initialized; the test and {probe.name.value}() are removed (the repository "
                "uses it nowhere else; its re-exports drop it)",
                fixed=True,
                severity="warning",
            )

    def _scale_reads(self, info, module) -> None:
        from ._amp_sites import find_scalers

        lookup = find_scalers(self, module)
        kept = set()  # the locals binding apex's loss scaler that a read is left through
        rewritten = set()
        for need in info.needs:
            if need.kind != "get_scale":
                continue
            scaler = lookup(need.node)
            if scaler is None:
                kept.add(need.via)
                continue
            native = f"{info.loss_scaler(scaler.expr, need.loss_id)}.get_scale()"
            self.replace_node(need.node, expression(native))
            self.report(need.node, "APX506", f"{code_of(need.node)} -> {native}", fixed=True, severity="info")
            rewritten.add(need.via)
        for alias in rewritten - kept - {None}:
            self._remove_with(alias, [])
        self._scale_loops(info, lookup)

    def _scale_loops(self, info, lookup) -> None:
        """``for s in amp._amp_state.loss_scalers`` -> over the GradScalers (one per loss id,
        or the one in a list), each ``s.loss_scale()`` / ``s._loss_scale`` -> ``s.get_scale()``."""
        for need in info.needs:
            if need.kind != "scaler_list":
                continue
            scaler = lookup(need.node)
            if scaler is None:
                continue
            native = scaler.expr if info.loss_scalers > 1 else f"[{scaler.expr}]"
            self.replace_node(need.node, expression(native))
            self.report(need.node, "APX506", f"{code_of(need.node)} -> {native}", fixed=True, severity="info")
            for read in info.needs:
                if read.kind == "each_scale" and read.via is need.node:
                    receiver = read.node.func.value if isinstance(read.node, cst.Call) else read.node.value
                    self.replace_node(read.node, expression(f"{code_of(receiver)}.get_scale()"))

    def _native_scaler_exists(self, module) -> bool:
        from ._amp_sites import find_scalers

        lookup = find_scalers(self, module)
        return any(lookup(s.with_stmt) is not None for s in analyse(self, module).scale_losses)

    def _registration(self, kind: str, call: cst.Call) -> None:
        stmt = self.statement_of(call)
        holder = self.parents.get(call)
        if (
            kind not in _KIND
            or not isinstance(holder, cst.Expr)
            or len(getattr(stmt, "body", ())) != 1
            or len(call.args) < 2
        ):
            return
        module_expr, name_expr = call.args[0].value, call.args[1].value
        name = string_value(name_expr)
        namespaces = self.qualified_names(module_expr) | {code_of(module_expr)}
        dtype, native = _KIND[kind]
        text = code_of(call)
        if name is not None and namespaces & TORCH_NAMESPACES and name in native:
            self._remove_with(stmt, [comment_line(f"{text} removed: native autocast already runs {name} in {dtype}")])
            self.report(
                call,
                "APX502",
                f"{text} removed: native autocast already runs {name} in {dtype}",
                fixed=True,
                severity="info",
            )
            return
        target = f"{code_of(module_expr)}.{name if name is not None else '<' + code_of(name_expr) + '>'}"
        message = registration_todo(kind, target, text)
        self._remove_with(stmt, todo_lines(message))
        self.report(call, "APX503", message)

    def _remove_with(self, stmt: cst.BaseStatement, lines: List[cst.EmptyLine]) -> None:
        self.removals.append((stmt, lines))

    def _place_removals(self) -> None:
        """Removed statements leave their comment (and their leading lines) on the next
        statement that stays; at the end of a block, on a ``pass``."""
        removed = {stmt for stmt, _ in self.removals}
        carried: dict = {}
        for stmt, line in self.removals:
            block = self.parents.get(stmt)
            body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
            if stmt not in body:
                continue
            index = body.index(stmt)
            nxt = next((s for s in body[index + 1 :] if s not in removed), None)
            carried.setdefault(nxt if nxt is not None else ("end", block), []).extend(list(stmt.leading_lines) + line)
            if nxt is not None or stmt is not body[-1]:
                self.edits.replace(stmt, [])
        for key, lines in carried.items():
            if isinstance(key, tuple):
                last = list(key[1].body)[-1]
                self.edits.replace(
                    last, lambda upd, lines=lines: [cst.SimpleStatementLine([cst.Pass()], leading_lines=lines)]
                )
            else:
                self.notes.setdefault(key, []).extend(lines)

    def on_leave(self, original_node, updated_node):
        result = super().on_leave(original_node, updated_node)
        lines = getattr(self, "notes", {}).get(original_node)
        if lines and isinstance(result, cst.CSTNode) and hasattr(result, "leading_lines"):
            result = with_leading(result, lines, first=True)
        return result

    def visit_Module(self, node):
        self.notes = {}
        return super().visit_Module(node)

    def edited_nodes(self):
        yield from super().edited_nodes()
        yield from self.notes

    def _decorator_or_call(self, ref, parent) -> None:
        kind = ref.member.split("_")[0]
        if isinstance(parent, cst.Decorator) and parent.decorator is ref.expr:
            if kind == "promote":
                func = self.parents.get(parent)
                self.replace_node(
                    func,
                    lambda upd, deco=parent: upd.with_changes(
                        decorators=[d for d in upd.decorators if code_of(d.decorator) != code_of(deco.decorator)]
                    ),
                )
                self.todo(
                    func,
                    "APX505",
                    f"@{code_of(ref.expr)} removed: apex promoted mixed fp16/fp32 inputs to fp32 here; "
                    "cast them by hand if needed",
                )
                return
            self.replace_node(ref.expr, expression(f"{HELPER_NAME}(torch.{_KIND[kind][0]})"))
        elif isinstance(parent, cst.Call) and parent.func is ref.expr:
            if kind == "promote":
                self.todo(
                    parent,
                    "APX505",
                    f"{code_of(parent)}: apex promoted mixed fp16/fp32 inputs to fp32; no native counterpart",
                )
                return
            self.replace_node(ref.expr, expression(f"{HELPER_NAME}(torch.{_KIND[kind][0]})"))
        elif isinstance(parent, cst.Assign) and parent.value is ref.expr and kind != "promote":
            # ``float_function = amp.float_function`` (maskrcnn-benchmark's copies, beside an
            # ImportError fallback): the decorator itself as a value; the helper's
            # ``autocast_function(dtype)`` is that decorator
            self.replace_node(ref.expr, expression(f"{HELPER_NAME}(torch.{_KIND[kind][0]})"))
        else:
            return
        self.helper_needed = True
        self.report(
            ref.expr,
            "APX504",
            f"{code_of(ref.expr)} -> {HELPER_NAME}(torch.{_KIND[kind][0]}), a small helper added to this file",
            fixed=True,
            severity="info",
        )


# Documented examples: tests/migrate/test_rules_amp.py runs them through the whole rule
# pipeline (apex.amp rewrites span several rules) and the docs page lists them.
EXAMPLES: List[Example] = [
    Example(
        "register-functions",
        before="""\
import torch
from apex import amp

amp.register_half_function(torch, "einsum")
amp.register_float_function(torch, "sigmoid")
model = build()
""",
        after="""\
import torch

# amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16
# TODO(apexcompat): apex ran torch.sigmoid in float32 under O1
#   (amp.register_float_function(torch, "sigmoid")); native autocast does not cast it.
#   Where that matters, call it with autocast off and each floating-point tensor
#   argument converted to float32: `with torch.autocast("cuda", enabled=False): out =
#   torch.sigmoid(x.float())`
model = build()
""",
        codes=("APX101", "APX502", "APX503"),
    ),
    Example(
        # joeynmt's shape: the registration is all the guard's body held besides the import;
        # once the guard goes, its comment stays above the next statement, with no `pass` left
        # standing at module level
        "register-function-in-an-import-guard",
        before="""\
import torch

# for fp16 training
try:
    from apex import amp

    amp.register_half_function(torch, "einsum")
except ImportError:
    pass

logger = build()
""",
        after="""\
import torch

# for fp16 training

# amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16

logger = build()
""",
        codes=("APX101", "APX103", "APX502"),
    ),
    Example(
        # ... but in a function holding nothing else, the comment stays on the pass that keeps
        # the function's body
        "register-function-in-an-import-guard-of-a-function",
        before="""\
import torch


def setup():
    try:
        from apex import amp
        amp.register_half_function(torch, "einsum")
    except ImportError:
        pass
""",
        after="""\
import torch


def setup():
    # amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16
    pass
""",
        codes=("APX101", "APX103", "APX502"),
    ),
    Example(
        # DensePhrases, FreeLB, RE-Context-or-Names: an ``if args.fp16:`` that held only the
        # guarded registration is left with nothing to do; it goes (``emptied_ifs``), its
        # comments stay in its place.  The user's own ``if args.debug: pass`` stays as written
        "fp16-if-emptied-by-the-registration-goes",
        before="""\
import torch


def main(args, model):
    if args.debug:
        pass
    # Before we do anything with models, we want to ensure that we get fp16 execution of
    # torch.einsum if args.fp16 is set.
    if args.fp16:
        try:
            import apex
            apex.amp.register_half_function(torch, "einsum")
        except ImportError:
            raise ImportError("Please install apex from https://www.github.com/nvidia/apex to use fp16 training.")

    # Training
    if args.do_train:
        train(args, model)
""",
        after="""\
import torch


def main(args, model):
    if args.debug:
        pass
    # Before we do anything with models, we want to ensure that we get fp16 execution of
    # torch.einsum if args.fp16 is set.
    # apex.amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16

    # Training
    if args.do_train:
        train(args, model)
""",
        codes=("APX101", "APX103", "APX502"),
    ),
    Example(
        # the emptied ``if`` is the last statement of its function: its comment stays below
        # the statement before it, at the ``if``'s indentation; a test that calls something
        # (``args.wants_fp16()`` may count, log) keeps its ``if``
        "fp16-if-emptied-at-the-end-of-a-function-goes",
        before="""\
import torch
from apex import amp


def setup(args, model):
    model.cuda()
    if args.fp16 and not args.cpu:
        amp.register_half_function(torch, "einsum")
    if args.wants_fp16():
        amp.register_half_function(torch, "bmm")
    return model


def finish(args, model):
    model.cuda()
    if args.fp16 and not args.cpu:
        amp.register_half_function(torch, "einsum")
""",
        after="""\
import torch


def setup(args, model):
    model.cuda()
    # amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16
    if args.wants_fp16():
        # amp.register_half_function(torch, "bmm") removed: native autocast already runs bmm in float16
        pass
    return model


def finish(args, model):
    model.cuda()
    # amp.register_half_function(torch, "einsum") removed: native autocast already runs einsum in float16
""",
        codes=("APX101", "APX502"),
    ),
    Example(
        "float-function-and-disable-casts",
        before="""\
import torch
from apex import amp


@amp.float_function
def stable_softmax(x):
    return torch.softmax(x, dim=-1)


def attention(q, k):
    with amp.disable_casts():
        scores = q.float() @ k.float().t()
    return stable_softmax(scores)
""",
        after="""\
import torch
import functools


"""
        + HELPER
        + """

@autocast_function(torch.float32)
def stable_softmax(x):
    return torch.softmax(x, dim=-1)


def attention(q, k):
    with torch.autocast("cuda", enabled=False):
        scores = q.float() @ k.float().t()
    return stable_softmax(scores)
""",
        codes=("APX101", "APX501", "APX504"),
    ),
    Example(
        # maskrcnn-benchmark's roi_layers as STEP (sweep13) vendors them
        "float-function-as-a-value",
        before="""\
import torch
from . import _C

try:
    from apex import amp
    float_function = amp.float_function
except ImportError:
    def float_function(func):
        return func

nms = float_function(_C.nms)


class ROIAlign(torch.nn.Module):
    @float_function
    def forward(self, input, rois):
        return _C.roi_align_forward(input, rois)
""",
        after="""\
import torch
from . import _C
import functools


"""
        + HELPER
        + """
float_function = autocast_function(torch.float32)

nms = float_function(_C.nms)


class ROIAlign(torch.nn.Module):
    @float_function
    def forward(self, input, rois):
        return _C.roi_align_forward(input, rois)
""",
        codes=("APX101", "APX103", "APX504"),
    ),
    Example(
        "private-loss-scaler-state",
        before="""\
from apex import amp


def train(model, optimizer, batches):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    amp._amp_state.loss_scalers[0]._loss_scale = 2**20
    for step, x in enumerate(batches):
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        if step % 100 == 0:
            print("loss scale", amp._amp_state.loss_scalers[0].loss_scale())
""",
        after="""\
import torch


def train(model, optimizer, batches):
    scaler = torch.amp.GradScaler("cuda", init_scale=2**20)
    for step, x in enumerate(batches):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(x).sum()
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        if step % 100 == 0:
            print("loss scale", scaler.get_scale())
""",
        codes=("APX101", "APX201", "APX208", "APX209", "APX301", "APX311", "APX506"),
    ),
    Example(
        "promote-function",
        before="""\
import torch
from apex import amp


@amp.promote_function
def blend(a, b, alpha):
    return a * alpha + b * (1 - alpha)
""",
        after="""\
import torch


# TODO(apexcompat): @amp.promote_function removed: apex promoted mixed fp16/fp32 inputs
#   to fp32 here; cast them by hand if needed
def blend(a, b, alpha):
    return a * alpha + b * (1 - alpha)
""",
        codes=("APX101", "APX505"),
    ),
]

NOOP_EXAMPLES: List[Example] = []

CastingHooksRule.EXAMPLES = EXAMPLES
CastingHooksRule.NOOP_EXAMPLES = NOOP_EXAMPLES
