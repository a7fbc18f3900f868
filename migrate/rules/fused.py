"""APX8xx: apex's still-shipped fused kernels.  Optimizers and norms with an exact torch
equivalent are rewritten to it (``FusedAdam`` -> ``AdamW``, ``FusedLayerNorm`` ->
``LayerNorm``, ...), and so is a global-norm clip written with amp_C's kernels
(``_kernel_norm_clip``: -> ``torch.nn.utils.clip_grad_norm_``); the rest (FusedLAMB,
NovoGrad, apex.mlp, xentropy, amp_C, ...) keep their import and are reported at info level.
The removed ``apex.RNN`` is reported."""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

import libcst as cst
from libcst.metadata import QualifiedNameSource, ScopeProvider

from ._amp_examples import KERNEL_CLIP_CLASS
from ._edits import StatementEdits, block_body, code_of, move_leading
from ._kernel_norm_clip import L2NORM, plan_norm_clips
from ._metadata import QualifiedNameProvider
from ._tree import module_code, walk
from .base import Example
from ._neighbour_base import NeighbourRule, as_keyword, bind_args, kwarg, literal_value
from ..settings import Settings

_OPT = "apex.optimizers"
_NORM = "apex.normalization"


def _both(module: str, name: str, submodule: str) -> List[str]:
    """apex exports each class from its package and from the defining submodule."""
    return [f"{module}.{name}", f"{module}.{submodule}.{name}"]


FUSED_ADAM = set(_both(_OPT, "FusedAdam", "fused_adam"))
FUSED_SGD = set(_both(_OPT, "FusedSGD", "fused_sgd"))
FUSED_ADAGRAD = set(_both(_OPT, "FusedAdagrad", "fused_adagrad"))
FUSED_LAYER_NORM = set(_both(_NORM, "FusedLayerNorm", "fused_layer_norm"))
FUSED_RMS_NORM = set(_both(_NORM, "FusedRMSNorm", "fused_layer_norm"))
LAYER_NORM_AFFINE = {f"{_NORM}.fused_layer_norm.fused_layer_norm_affine"}
LAYER_NORM_PLAIN = {f"{_NORM}.fused_layer_norm.fused_layer_norm"}
RMS_NORM_AFFINE = {f"{_NORM}.fused_layer_norm.fused_rms_norm_affine"}
CLIP_GRAD = {"apex.contrib.clip_grad.clip_grad_norm_", "apex.contrib.clip_grad.clip_grad.clip_grad_norm_"}

#: still-shipped apex names kept as they are: dotted prefix -> what to say
KEPT: Dict[str, str] = {
    f"{_OPT}.FusedLAMB": "FusedLAMB has no torch equivalent (it also clips the global grad norm); kept",
    f"{_OPT}.fused_lamb": "FusedLAMB has no torch equivalent (it also clips the global grad norm); kept",
    f"{_OPT}.FusedMixedPrecisionLamb": "FusedMixedPrecisionLamb has no torch equivalent; kept",
    f"{_OPT}.FusedNovoGrad": "FusedNovoGrad has no torch equivalent; kept",
    f"{_OPT}.fused_novograd": "FusedNovoGrad has no torch equivalent; kept",
    f"{_NORM}.MixedFusedLayerNorm": (
        "MixedFusedLayerNorm has no exact torch equivalent (its output follows the weight dtype); "
        "kept; torch.nn.LayerNorm plus a cast to the weight dtype behaves the same"
    ),
    f"{_NORM}.fused_layer_norm.MixedFusedLayerNorm": (
        "MixedFusedLayerNorm has no exact torch equivalent (its output follows the weight dtype); "
        "kept; torch.nn.LayerNorm plus a cast to the weight dtype behaves the same"
    ),
    f"{_NORM}.MixedFusedRMSNorm": "MixedFusedRMSNorm has no exact torch equivalent; kept",
    f"{_NORM}.fused_layer_norm.MixedFusedRMSNorm": "MixedFusedRMSNorm has no exact torch equivalent; kept",
    "apex.mlp": "apex.mlp is still shipped by apex and has no torch equivalent; kept",
    "apex.contrib.xentropy": (
        "apex.contrib.xentropy is still shipped by apex; kept (torch.nn.functional.cross_entropy computes the same "
        "loss)"
    ),
    "apex.contrib": "apex.contrib is still shipped by apex; kept",
    "amp_C": "amp_C is apex's compiled extension, still shipped; kept",
    "apex.multi_tensor_apply": "apex.multi_tensor_apply is still shipped by apex; kept",
}
#: apex.contrib names that other rules migrate (not reported here as kept)
_NOT_KEPT_PREFIXES = (
    "apex.contrib.clip_grad",
    "apex.contrib.optimizers.fp16_optimizer",
    "apex.contrib.optimizers.FP16_Optimizer",
)

RNN = "apex.RNN"
RNN_MESSAGE = (
    "apex.RNN was removed from apex: replace {name} with torch.nn.{torch_class} "
    "(same input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional arguments)"
)

ADAM_PARAMS = ("params", "lr", "bias_correction", "betas", "eps", "adam_w_mode", "weight_decay", "amsgrad")
SGD_PARAMS = ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov", "wd_after_momentum")
ADAGRAD_PARAMS = ("params", "lr", "eps", "weight_decay", "set_grad_none", "adagrad_w_mode")
NORM_PARAMS = ("normalized_shape", "eps", "elementwise_affine", "memory_efficient")


#: a rule example's clip function written with apex's kernels (amp_C named directly)
_KERNEL_CLIP_FUNCTION = (
    "import amp_C\nimport torch\nfrom apex.multi_tensor_apply import multi_tensor_applier\n\n"
    "FLAG = torch.zeros(1, dtype=torch.int)\n\n\ndef clip_gradients(params, limit):\n"
    "    grads = [p.grad for p in params if p.grad is not None]\n"
    "    norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, FLAG, [grads], False)\n"
    "    coef = limit / (norm + 1e-6)\n    if coef < 1:\n"
    "        multi_tensor_applier(amp_C.multi_tensor_scale, FLAG, [grads, grads], coef)\n"
)


class FusedKernelsRule(NeighbourRule):
    """FusedAdam/FusedSGD/FusedAdagrad -> torch.optim; FusedLayerNorm/FusedRMSNorm and their
    functional forms -> torch.nn; apex.contrib clip_grad_norm_ -> torch's; the rest reported."""

    DESCRIPTION = "Rewrite apex fused optimizers and norms that torch has exactly; report the rest."
    CODES = {
        "APX801": "apex FusedAdam -> torch.optim.AdamW (Adam when adam_w_mode=False)",
        "APX802": "apex FusedSGD -> torch.optim.SGD",
        "APX803": "apex FusedAdagrad -> torch.optim.Adagrad",
        "APX804": "apex FusedLayerNorm -> torch.nn.LayerNorm",
        "APX805": "apex FusedRMSNorm -> torch.nn.RMSNorm (torch >= 2.4)",
        "APX806": "apex fused_layer_norm(_affine) / fused_rms_norm_affine -> torch.nn.functional",
        "APX807": "apex.contrib.clip_grad.clip_grad_norm_ -> torch.nn.utils.clip_grad_norm_",
        "APX808": "apex fused optimizer with options torch lacks: kept",
        "APX809": "still-shipped apex kernel without a torch equivalent: kept",
        "APX810": "apex.RNN was removed: use torch.nn.LSTM/GRU/RNN",
        "APX811": "a global-norm clip written with amp_C's l2norm and scale kernels -> torch.nn.utils.clip_grad_norm_",
    }
    # every name this rule handles contains one of these (``apex.optimizers.FusedAdam``, ``RNN.LSTM``)
    TRIGGERS = (b"Fused", b"fused_", b"contrib", b"apex.mlp", b"import mlp", b"amp_C", b"multi_tensor", b"RNN")
    CODE_WORDS = ("apex", "amp_C")
    NAMESPACES = (_OPT, _NORM, "apex.contrib", "apex.mlp", RNN, "apex.multi_tensor_apply", "amp_C")
    PRUNE_STATEMENTS = True
    KNOWN_TODOS = {RNN_MESSAGE.split("{", 1)[0]: ("APX810", "error")}

    def visit_Module(self, node: cst.Module) -> Optional[bool]:
        self._kept_reported: Set[str] = set()
        self._edits = StatementEdits()
        self._gone: Set[int] = set()
        descend = super().visit_Module(node)
        if L2NORM.rsplit(".", 1)[1] in module_code(node) and self.settings.code_enabled("APX811"):
            self._plan_norm_clips(node)
        return descend

    # --- a global-norm clip written with amp_C's kernels (_kernel_norm_clip) -------------

    def _plan_norm_clips(self, module: cst.Module) -> None:
        plan = plan_norm_clips(module, self.names_of)
        for clip in plan.clips:
            self.report(
                clip.statements[1],
                "APX811",
                "the gradient clip written with amp_C.multi_tensor_l2norm and amp_C.multi_tensor_scale (scale by "
                "max_norm / (norm + 1e-6) when below 1) -> torch.nn.utils.clip_grad_norm_(params, max_norm), the "
                "same coefficient (torch takes each gradient's norm in its dtype: float32 gradients, as the native "
                "model's are, give apex's float32 norm); only a non-finite norm differs (apex's clip then left the "
                "gradients as they were, torch's makes them 0 or NaN): a GradScaler skips that step either way",
                fixed=True,
                severity="info",
            )
            call = self.call_statement(
                code_of(self.torch_name("torch.nn.utils.clip_grad_norm_", clip.statements[0])),
                [code_of(clip.params), code_of(clip.max_norm)],
                clip.statements[0],
            )
            self._edits.wrap(clip.statements, lambda ups, new=call: [move_leading(ups[0], new)])
        for stmt in plan.removed:
            self._edits.replace(stmt, [])
        for ref in [r for clip in plan.clips for r in clip.apex_refs] + [
            n for stmt in plan.removed for n in walk(stmt) if isinstance(n, (cst.Name, cst.Attribute))
        ]:
            if self.names_of(ref) and self.is_outermost(ref):
                self.forget(ref)
        self._gone = plan.gone()
        for call, reason in plan.kept:
            self.report(
                call,
                "APX809",
                f"{L2NORM}: the gradients are clipped here with apex's kernels (multi_tensor_l2norm, then "
                f"multi_tensor_scale), which is torch.nn.utils.clip_grad_norm_(params, max_norm) only in the shape "
                f"the tool rewrites (APX811), but {reason}; kept",
                severity="info",
            )

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock, updated_node: cst.IndentedBlock) -> cst.BaseSuite:
        if not self._edits:
            return updated_node
        return block_body(updated_node, self._edits.apply(original_node.body, updated_node.body))

    # --- calls -------------------------------------------------------------------------

    def visit_Call(self, node: cst.Call) -> None:
        """``try: from apex... import FusedLayerNorm as BertLayerNorm / except ImportError:
        class BertLayerNorm(...)``: the name is left alone, with a note on the native class."""
        raw = self.get_metadata(QualifiedNameProvider, node.func, set())
        imported = {q.name for q in raw if q.source is QualifiedNameSource.IMPORT}
        local = [q.name for q in raw if q.source is QualifiedNameSource.LOCAL]
        if local and imported & FUSED_LAYER_NORM and local[0] not in self._kept_reported:
            self._kept_reported.add(local[0])
            self.report(
                node,
                "APX804",
                f"{local[0]} is apex's FusedLayerNorm when apex is installed and this file's own fallback "
                "class otherwise: left as is; torch.nn.LayerNorm (same arguments, weight/bias state_dict keys) "
                "can replace both",
                severity="info",
            )

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call) -> cst.BaseExpression:
        names = self.names_of(original_node.func)
        handlers = (
            (FUSED_ADAM, self._adam),
            (FUSED_SGD, self._sgd),
            (FUSED_ADAGRAD, self._adagrad),
            (FUSED_LAYER_NORM, self._layer_norm),
            (FUSED_RMS_NORM, self._rms_norm),
            (LAYER_NORM_AFFINE, self._layer_norm_affine),
            (LAYER_NORM_PLAIN, self._layer_norm_plain),
            (RMS_NORM_AFFINE, self._rms_norm_affine),
            (CLIP_GRAD, self._clip_grad),
        )
        for table, handler in handlers:
            if names & table:
                new = handler(original_node, updated_node)
                if new is not None:
                    self.forget(original_node.func)
                    return new
                return updated_node
        return updated_node

    def _keep(self, node: cst.Call, message: str) -> None:
        self.report(node, "APX808", message, severity="warning")

    def _adam(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        if not self.settings.code_enabled("APX801"):
            return None
        bound = bind_args(call, ADAM_PARAMS)
        if bound is None:
            self._keep(
                original,
                "FusedAdam called with *args/**kwargs: kept; replace it with torch.optim.AdamW by hand (pass "
                "weight_decay explicitly: AdamW's default is 0.01, FusedAdam's 0)",
            )
            return None
        for old_kwarg in ("max_grad_norm", "eps_inside_sqrt"):
            if old_kwarg in bound:
                self._keep(
                    original,
                    f"FusedAdam({old_kwarg}=...) is the pre-2019 signature that current apex rejects: kept; use "
                    "torch.optim.AdamW and torch.nn.utils.clip_grad_norm_ by hand",
                )
                return None
        if "amsgrad" in bound and literal_value(bound["amsgrad"].value) is not False:
            self._keep(
                original,
                "FusedAdam rejects amsgrad=True: kept; torch.optim.AdamW(..., amsgrad=True) is the AMSGrad variant "
                "if you want it",
            )
            return None
        if "bias_correction" in bound and literal_value(bound["bias_correction"].value) is not True:
            self._keep(original, "FusedAdam(bias_correction=False) has no torch equivalent: kept")
            return None
        if "master_weights" in bound and literal_value(bound["master_weights"].value) is not False:
            self._keep(original, "FusedAdam(master_weights=True) has no torch equivalent: kept")
            return None
        mode = literal_value(_value(bound, "adam_w_mode")) if "adam_w_mode" in bound else True
        if mode not in (True, False):
            self._keep(
                original,
                "FusedAdam's adam_w_mode is not a literal: kept; use torch.optim.AdamW (adam_w_mode=True) or "
                "torch.optim.Adam (False) by hand",
            )
            return None
        args = _keep_args(
            bound,
            ("params", "lr"),
            keyword=("betas", "eps", "weight_decay", "amsgrad", "capturable"),
            drop=("bias_correction", "adam_w_mode", "set_grad_none", "master_weights"),
        )
        if args is None:
            self._keep(original, "FusedAdam called with an argument torch's Adam does not take: kept")
            return None
        target = "torch.optim.AdamW" if mode else "torch.optim.Adam"
        if mode and "weight_decay" not in bound:
            args.append(kwarg("weight_decay", "0.0"))
        message = (
            "FusedAdam -> torch.optim.AdamW (FusedAdam's default adam_w_mode=True is decoupled weight decay"
            + ("; weight_decay=0.0 passed because AdamW's own default is 0.01)" if "weight_decay" not in bound else ")")
            if mode
            else "FusedAdam(adam_w_mode=False) -> torch.optim.Adam"
        )
        self.report(original, "APX801", message, fixed=True, severity="info")
        return self.replace_call(call, self.torch_name(target, original), args)

    def _sgd(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        if not self.settings.code_enabled("APX802"):
            return None
        bound = bind_args(call, SGD_PARAMS)
        if bound is None:
            self._keep(original, "FusedSGD called with *args/**kwargs: kept; replace it with torch.optim.SGD by hand")
            return None
        if "wd_after_momentum" in bound and literal_value(bound["wd_after_momentum"].value) is not False:
            self._keep(original, "FusedSGD(wd_after_momentum=True) has no torch equivalent: kept")
            return None
        args = _keep_args(
            bound,
            ("params", "lr", "momentum", "dampening", "weight_decay", "nesterov"),
            drop=("wd_after_momentum", "materialize_master_grads", "set_grad_none"),
        )
        if args is None:
            self._keep(original, "FusedSGD called with an argument torch.optim.SGD does not take: kept")
            return None
        self.report(original, "APX802", "FusedSGD -> torch.optim.SGD (same update rule)", fixed=True, severity="info")
        return self.replace_call(call, self.torch_name("torch.optim.SGD", original), args)

    def _adagrad(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        if not self.settings.code_enabled("APX803"):
            return None
        bound = bind_args(call, ADAGRAD_PARAMS)
        if bound is None:
            self._keep(
                original, "FusedAdagrad called with *args/**kwargs: kept; replace it with torch.optim.Adagrad by hand"
            )
            return None
        if "adagrad_w_mode" in bound and literal_value(bound["adagrad_w_mode"].value) is not False:
            self._keep(
                original, "FusedAdagrad(adagrad_w_mode=True) (decoupled weight decay) has no torch equivalent: kept"
            )
            return None
        args = _keep_args(
            bound, ("params", "lr"), keyword=("eps", "weight_decay"), drop=("set_grad_none", "adagrad_w_mode")
        )
        if args is None:
            self._keep(original, "FusedAdagrad called with an argument torch.optim.Adagrad does not take: kept")
            return None
        self.report(original, "APX803", "FusedAdagrad -> torch.optim.Adagrad", fixed=True, severity="info")
        return self.replace_call(call, self.torch_name("torch.optim.Adagrad", original), args)

    def _layer_norm(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        if not self.settings.code_enabled("APX804"):
            return None
        args = self._norm_args(call)[1]
        if args is None:
            return None
        self.report(
            original,
            "APX804",
            "FusedLayerNorm -> torch.nn.LayerNorm (same arguments and state_dict keys)",
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.nn.LayerNorm", original), args)

    def _rms_norm(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        if not self.settings.code_enabled("APX805"):
            return None
        if not self.settings.torch_at_least(2, 4):
            self.report(
                original,
                "APX805",
                "FusedRMSNorm kept: torch.nn.RMSNorm needs torch >= 2.4 (raise --target-torch to rewrite it)",
                severity="info",
            )
            return None
        bound, args = self._norm_args(call)
        if args is None:
            return None
        if "eps" not in bound:
            args.insert(1, kwarg("eps", "1e-5"))
            args = _positional_first(args)
        self.report(
            original,
            "APX805",
            "FusedRMSNorm -> torch.nn.RMSNorm with eps=1e-5 explicit (RMSNorm's default eps is the dtype's epsilon)",
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.nn.RMSNorm", original), args)

    def _norm_args(self, call: cst.Call) -> Tuple[Dict[str, cst.Arg], Optional[List[cst.Arg]]]:
        bound = bind_args(call, NORM_PARAMS)
        if bound is None:
            return {}, None
        return bound, _keep_args(bound, ("normalized_shape", "eps", "elementwise_affine"), drop=("memory_efficient",))

    def _layer_norm_affine(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        bound = bind_args(call, ("input", "weight", "bias", "normalized_shape", "eps", "memory_efficient"))
        if (
            not self.settings.code_enabled("APX806")
            or bound is None
            or not {"input", "weight", "bias", "normalized_shape"} <= set(bound)
        ):
            return None
        args = [
            _positional(bound["input"]),
            _positional(bound["normalized_shape"]),
            _positional(bound["weight"]),
            _positional(bound["bias"]),
        ]
        args.append(_positional(bound["eps"]) if "eps" in bound else cst.Arg(cst.Float("1e-6")))
        self.report(
            original,
            "APX806",
            "fused_layer_norm_affine(x, w, b, shape, eps) -> torch.nn.functional.layer_norm(x, shape, w, b, eps) "
            "(apex's default eps 1e-6 kept)",
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.nn.functional.layer_norm", original), args)

    def _layer_norm_plain(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        bound = bind_args(call, ("input", "normalized_shape", "eps", "memory_efficient"))
        if not self.settings.code_enabled("APX806") or bound is None or not {"input", "normalized_shape"} <= set(bound):
            return None
        eps = as_keyword(bound["eps"], "eps") if "eps" in bound else kwarg("eps", "1e-6")
        args = [_positional(bound["input"]), _positional(bound["normalized_shape"]), eps]
        self.report(
            original,
            "APX806",
            "fused_layer_norm(x, shape, eps) -> torch.nn.functional.layer_norm(x, shape, eps=eps) (apex's default "
            "eps 1e-6 kept)",
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.nn.functional.layer_norm", original), args)

    def _rms_norm_affine(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        bound = bind_args(call, ("input", "weight", "normalized_shape", "eps", "memory_efficient"))
        if (
            not self.settings.code_enabled("APX806")
            or bound is None
            or not {"input", "weight", "normalized_shape"} <= set(bound)
        ):
            return None
        if not self.settings.torch_at_least(2, 4):
            self.report(
                original,
                "APX806",
                "fused_rms_norm_affine kept: torch.nn.functional.rms_norm needs torch >= 2.4",
                severity="info",
            )
            return None
        args = [_positional(bound["input"]), _positional(bound["normalized_shape"]), _positional(bound["weight"])]
        args.append(_positional(bound["eps"]) if "eps" in bound else cst.Arg(cst.Float("1e-6")))
        self.report(
            original,
            "APX806",
            "fused_rms_norm_affine(x, w, shape, eps) -> torch.nn.functional.rms_norm(x, shape, w, eps) (apex's "
            "default eps 1e-6 kept)",
            fixed=True,
            severity="info",
        )
        return self.replace_call(call, self.torch_name("torch.nn.functional.rms_norm", original), args)

    def _clip_grad(self, original: cst.Call, call: cst.Call) -> Optional[cst.Call]:
        if not self.settings.code_enabled("APX807"):
            return None
        self.report(
            original,
            "APX807",
            "apex.contrib.clip_grad.clip_grad_norm_ -> torch.nn.utils.clip_grad_norm_ (same signature)",
            fixed=True,
            severity="info",
        )
        return call.with_changes(func=self.torch_name("torch.nn.utils.clip_grad_norm_", original))

    # --- other references: class bases, isinstance, norm_layer=FusedLayerNorm, kept names ---

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.BaseExpression:
        return self._reference(original_node, updated_node)

    def _reference(self, original, updated):  # type: ignore[no-untyped-def]
        if id(original) in self._gone:
            return updated
        names = self.names_of(original)
        if not names:
            return updated
        if names & FUSED_LAYER_NORM and self.settings.code_enabled("APX804"):
            if not self.is_callee(original):
                self.report(original, "APX804", "FusedLayerNorm -> torch.nn.LayerNorm", fixed=True, severity="info")
                self.forget(original)
                return self.replacement(self.torch_name("torch.nn.LayerNorm", original))
            return updated
        optimizer = sorted(names & (FUSED_ADAM | FUSED_SGD | FUSED_ADAGRAD))
        if optimizer and not self.is_callee(original) and self.is_outermost(original):
            parent = self.parent(original)
            if names & FUSED_SGD and self._sgd_only_called_as_sgd(original) and self.settings.code_enabled("APX802"):
                self.report(
                    original,
                    "APX802",
                    "FusedSGD -> torch.optim.SGD (same update rule; every call through the name it is stored "
                    "in passes only SGD's arguments)",
                    fixed=True,
                    severity="info",
                )
                self.forget(original)
                return self.replacement(self.torch_name("torch.optim.SGD", original))
            if not isinstance(parent, (cst.ImportAlias, cst.AsName)) and optimizer[0] not in self._kept_reported:
                self._kept_reported.add(optimizer[0])
                self.report(
                    original,
                    "APX809",
                    f"{optimizer[0]} used as a value here (not called): kept; where every call of it passes only "
                    "arguments the torch optimizer takes, use that class instead",
                    severity="info",
                )
            return updated
        for name in sorted(names):
            if name == RNN or name.startswith(RNN + "."):
                torch_class = {"LSTM": "LSTM", "GRU": "GRU", "mLSTM": "LSTM"}.get(
                    name.rsplit(".", 1)[-1], "LSTM" if "LSTM" in name else "RNN"
                )
                if self.is_outermost(original):
                    self.todo(original, "APX810", RNN_MESSAGE.format(name=name, torch_class=torch_class))
                return updated
            message = _kept_message(name)
            if message is not None and name not in self._kept_reported and self.is_outermost(original):
                self._kept_reported.add(name)
                self.report(original, "APX809", f"{name}: {message}", severity="info")
        return updated

    def _sgd_only_called_as_sgd(self, node: cst.CSTNode) -> bool:
        """``make = FusedSGD`` where every read of ``make`` in its scope is a call passing only
        what torch.optim.SGD takes, with the same meaning (params, lr, momentum, dampening,
        weight_decay, nesterov; no ``*args``): the class itself may then be torch's."""
        assign = self.parent(node)
        if not (isinstance(assign, cst.Assign) and assign.value is node and len(assign.targets) == 1):
            return False
        target = assign.targets[0].target
        if not isinstance(target, cst.Name):
            return False
        scope = self.get_metadata(ScopeProvider, target, None)
        if scope is None or any(
            isinstance(n, (cst.Global, cst.Nonlocal)) and target.value in {item.name.value for item in n.names}
            for n in walk(self._module)
        ):
            return False  # a function may rebind the name (the file's other globals leave it alone)
        accesses = [access.node for assignment in scope[target.value] for access in assignment.references]
        if not accesses:
            return False
        for read in accesses:
            call = self.parent(read)
            if not (isinstance(call, cst.Call) and call.func is read):
                return False
            bound = bind_args(call, SGD_PARAMS)
            if bound is None or not set(bound) <= set(SGD_PARAMS) - {"wd_after_momentum"}:
                return False
        return True

    EXAMPLES = [
        Example(
            # the layer is built and called in one expression: the call of the built layer
            # keeps its own argument
            "fused-layer-norm-built-and-called-at-once",
            "from apex.normalization import FusedLayerNorm\n\n\ndef normed(x, width):\n"
            "    return FusedLayerNorm(width)(x)\n",
            "import torch\n\n\ndef normed(x, width):\n    return torch.nn.LayerNorm(width)(x)\n",
            ("APX804",),
        ),
        Example(
            # the class is handed on as a value (chosen by a flag, called later through another
            # name): its calls are not followed, so it stays, and the report says so (it was kept
            # without a word before)
            "fused-sgd-used-as-a-value-is-kept-and-reported",
            "import torch\nfrom apex.optimizers import FusedSGD\n\n"
            "OPTIMIZERS = {\"sgd\": torch.optim.SGD, \"fused_sgd\": FusedSGD}\n",
            None,
            ("APX809",),
        ),
        Example(
            # stored in a name chosen by a flag, and every call through that name passes only
            # what torch.optim.SGD takes, with the same meaning: the class becomes torch's
            "fused-sgd-stored-in-a-name-called-with-sgd-arguments",
            "import torch\nfrom apex.optimizers import FusedSGD\n\n\ndef build(params, fused):\n"
            "    make = torch.optim.SGD\n    if fused:\n        make = FusedSGD\n"
            "    return make(params, lr=0.1, momentum=0.9, nesterov=True)\n",
            "import torch\n\n\ndef build(params, fused):\n"
            "    make = torch.optim.SGD\n    if fused:\n        make = torch.optim.SGD\n"
            "    return make(params, lr=0.1, momentum=0.9, nesterov=True)\n",
            ("APX802",),
        ),
        Example(
            # a module-level name (few_shot_gaze, sweep13): a ``global`` statement of another name
            # (a function updating the optimizer's learning rate) cannot rebind it
            "fused-sgd-stored-in-a-module-name-beside-a-global-of-another-name",
            "import torch\nfrom apex.optimizers import FusedSGD\n\nif fused:\n    SGD = FusedSGD\nelse:\n"
            "    SGD = torch.optim.SGD\noptimizer = SGD(params, lr=0.1, momentum=0.9, nesterov=True)\n\n\n"
            "def adjust(lr):\n    global optimizer\n    for group in optimizer.param_groups:\n"
            "        group[\"lr\"] = lr\n",
            "import torch\n\nif fused:\n    SGD = torch.optim.SGD\nelse:\n    SGD = torch.optim.SGD\n"
            "optimizer = SGD(params, lr=0.1, momentum=0.9, nesterov=True)\n\n\ndef adjust(lr):\n"
            "    global optimizer\n    for group in optimizer.param_groups:\n        group[\"lr\"] = lr\n",
            ("APX802",),
        ),
        Example(
            # a call through the name passes an option only FusedSGD has: kept, and reported
            "fused-sgd-stored-in-a-name-called-with-its-own-option-is-kept",
            "import torch\nfrom apex.optimizers import FusedSGD\n\n\ndef build(params, fused):\n"
            "    make = torch.optim.SGD\n    if fused:\n        make = FusedSGD\n"
            "    return make(params, lr=0.1, materialize_master_grads=False)\n",
            None,
            ("APX809",),
        ),
        Example(
            "fused-adam-to-adamw",
            "from apex.optimizers import FusedAdam\n\noptimizer = FusedAdam(model.parameters(), lr=1e-4)\n",
            "import torch\n\noptimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0)\n",
            ("APX801",),
        ),
        Example(
            "fused-adam-alias-with-weight-decay",
            "import torch\nfrom apex.optimizers import FusedAdam as Adam\n\n"
            "optimizer = Adam(params, lr=args.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)\n",
            "import torch\n\n"
            "optimizer = torch.optim.AdamW(params, lr=args.lr, betas=(0.9, 0.98), eps=1e-6, weight_decay=0.01)\n",
            ("APX801",),
        ),
        Example(
            "fused-adam-l2-mode-to-adam",
            "import apex\n\n"
            "opt = apex.optimizers.FusedAdam(model.parameters(), 3e-4, adam_w_mode=False, weight_decay=1e-5)\n",
            "import torch\n\nopt = torch.optim.Adam(model.parameters(), 3e-4, weight_decay=1e-5)\n",
            ("APX801",),
        ),
        Example(
            "fused-adam-uses-existing-optim-import",
            "from torch import optim\nfrom apex.optimizers import FusedAdam\n\nopt = FusedAdam(\n"
            "    model.parameters(),\n    lr=1e-3,\n    set_grad_none=True,\n)\n",
            "from torch import optim\n\nopt = optim.AdamW(\n    model.parameters(),\n    lr=1e-3,\n"
            "    weight_decay=0.0,\n)\n",
            ("APX801",),
        ),
        Example(
            "fused-adam-pre-2019-kwargs-kept",
            "from apex.optimizers import FusedAdam\n\nopt = FusedAdam(params, lr=1e-4, max_grad_norm=1.0)\n",
            None,
            ("APX808",),
        ),
        Example(
            "fused-sgd-to-sgd",
            "from apex.optimizers import FusedSGD\n\n"
            "opt = FusedSGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4, "
            "materialize_master_grads=False)\n",
            "import torch\n\nopt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)\n",
            ("APX802",),
        ),
        Example(
            "fused-adagrad-to-adagrad",
            "from apex.optimizers import FusedAdagrad\n\nopt = FusedAdagrad(params, 0.01, 1e-10)\n",
            "import torch\n\nopt = torch.optim.Adagrad(params, 0.01, eps=1e-10)\n",
            ("APX803",),
        ),
        Example(
            "fused-layer-norm-bert-alias",
            "import torch.nn as nn\nfrom apex.normalization.fused_layer_norm import FusedLayerNorm as BertLayerNorm\n"
            "\n\n"
            "class Embeddings(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
            "        self.LayerNorm = BertLayerNorm(config.hidden_size, eps=1e-12)\n",
            "import torch.nn as nn\n\n\n"
            "class Embeddings(nn.Module):\n    def __init__(self, config):\n        super().__init__()\n"
            "        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=1e-12)\n",
            ("APX804",),
        ),
        Example(
            "fused-layer-norm-subclass-and-reference",
            "from apex.normalization import FusedLayerNorm\n\n\nclass LayerNorm(FusedLayerNorm):\n    pass\n\n\n"
            "block = Block(norm_layer=FusedLayerNorm)\n",
            "import torch\n\n\nclass LayerNorm(torch.nn.LayerNorm):\n    pass\n\n\n"
            "block = Block(norm_layer=torch.nn.LayerNorm)\n",
            ("APX804", "APX804"),
        ),
        Example(
            "fused-rms-norm-eps-explicit",
            "from apex.normalization import FusedRMSNorm\n\nnorm = FusedRMSNorm(dim)\n",
            "import torch\n\nnorm = torch.nn.RMSNorm(dim, eps=1e-5)\n",
            ("APX805",),
        ),
        Example(
            "fused-rms-norm-kept-below-torch-2-4",
            "from apex.normalization import FusedRMSNorm\n\nnorm = FusedRMSNorm(dim)\n",
            None,
            ("APX805",),
            Settings(target_torch=(2, 3)),
        ),
        Example(
            "fused-layer-norm-affine-argument-order",
            "import torch.nn.functional as F\n"
            "from apex.normalization.fused_layer_norm import fused_layer_norm_affine\n\n"
            "y = fused_layer_norm_affine(x, self.weight, self.bias, self.normalized_shape, self.eps)\n",
            "import torch.nn.functional as F\n\n"
            "y = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)\n",
            ("APX806",),
        ),
        Example(
            "fallback-class-in-except-importerror-noted",
            "try:\n    from apex.normalization import FusedLayerNorm as BertLayerNorm\nexcept ImportError:\n"
            "    class BertLayerNorm(nn.Module):\n        pass\n\n\nnorm = BertLayerNorm(768, eps=1e-12)\n",
            None,
            ("APX804",),
        ),
        Example(
            "contrib-clip-grad",
            "from apex.contrib.clip_grad import clip_grad_norm_\n\nnorm = clip_grad_norm_(model.parameters(), 1.0)\n",
            "import torch\n\nnorm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n",
            ("APX807",),
        ),
        Example(
            "fused-lamb-kept",
            "from apex.optimizers import FusedLAMB\n\noptimizer = FusedLAMB(params, lr=1e-3)\n",
            None,
            ("APX809",),
        ),
        Example(
            "amp-c-kept",
            "import amp_C\nfrom apex.multi_tensor_apply import multi_tensor_applier\n\n"
            "norm, _ = multi_tensor_applier(amp_C.multi_tensor_l2norm, overflow_buf, [grads], False)\n",
            None,
            ("APX809", "APX809"),
        ),
        Example(
            # a clipper class written with apex's kernels (attributes bound to them under the
            # availability guard): the same coefficient max_norm / (norm + 1e-6), scaled when
            # below 1, is torch's clip; its one caller in this script hands it parameters, so
            # the clipping rule would put an unscale_ before that call after a scaled backward
            # (the amp example "kernel-norm-clip-after-scale-loss" shows that)
            "kernel-norm-clip-class-becomes-clip-grad-norm",
            "import torch\nfrom apex.multi_tensor_apply import multi_tensor_applier\n\n\n"
            + KERNEL_CLIP_CLASS
            + "\n\ndef train(model, optimizer, batches):\n    clipper = NormClipper(1.0)\n"
            "    for x, y in batches:\n        torch.nn.functional.mse_loss(model(x), y).backward()\n"
            "        clipper.clip(model.parameters())\n        optimizer.step()\n\n\n"
            "if __name__ == \"__main__\":\n    train(*build())\n",
            "import torch\n\n\n"
            "class NormClipper:\n    def __init__(self, limit):\n        self.limit = limit\n\n"
            "    def clip(self, params):\n        torch.nn.utils.clip_grad_norm_(params, self.limit)\n\n\n"
            "def train(model, optimizer, batches):\n    clipper = NormClipper(1.0)\n"
            "    for x, y in batches:\n        torch.nn.functional.mse_loss(model(x), y).backward()\n"
            "        clipper.clip(model.parameters())\n        optimizer.step()\n\n\n"
            "if __name__ == \"__main__\":\n    train(*build())\n",
            ("APX811",),
        ),
        Example(
            # the kernels named directly in a function of a script, called with the model's
            # parameters: the module-level import of amp_C goes too
            "kernel-norm-clip-function-becomes-clip-grad-norm",
            _KERNEL_CLIP_FUNCTION
            + "\n\n"
            "def train(model, optimizer, batches):\n    for x, y in batches:\n"
            "        torch.nn.functional.mse_loss(model(x), y).backward()\n"
            "        clip_gradients(model.parameters(), 1.0)\n        optimizer.step()\n\n\n"
            "if __name__ == \"__main__\":\n    train(*build())\n",
            "import torch\n\n"
            "FLAG = torch.zeros(1, dtype=torch.int)\n\n\ndef clip_gradients(params, limit):\n"
            "    torch.nn.utils.clip_grad_norm_(params, limit)\n\n\n"
            "def train(model, optimizer, batches):\n    for x, y in batches:\n"
            "        torch.nn.functional.mse_loss(model(x), y).backward()\n"
            "        clip_gradients(model.parameters(), 1.0)\n        optimizer.step()\n\n\n"
            "if __name__ == \"__main__\":\n    train(*build())\n",
            ("APX811",),
        ),
        Example(
            # the caller hands a list of gradients kept from before: nothing proves an unscale_
            # before that call, where apex had unscaled them; the kernels stay, with the reason
            "kernel-norm-clip-given-a-kept-list-is-kept",
            _KERNEL_CLIP_FUNCTION
            + "\n\n"
            "def train(model, optimizer, batches):\n    params = list(model.parameters())\n"
            "    for x, y in batches:\n        torch.nn.functional.mse_loss(model(x), y).backward()\n"
            "        clip_gradients(params, 1.0)\n        optimizer.step()\n\n\n"
            "if __name__ == \"__main__\":\n    train(*build())\n",
            None,
            ("APX809", "APX809", "APX809", "APX809"),
        ),
        Example(
            # the norm is returned too: torch's clip would have to give it back in its place
            "kernel-norm-clip-whose-norm-is-returned-is-kept",
            _KERNEL_CLIP_FUNCTION + "    return norm\n",
            None,
            ("APX809", "APX809", "APX809", "APX809"),
        ),
        Example(
            "apex-rnn-removed",
            "from apex import RNN\n\nrnn = RNN.LSTM(256, 512, 2)\n",
            "from apex import RNN\n\n"
            "# TODO(apexcompat): apex.RNN was removed from apex: replace apex.RNN.LSTM with torch.nn.LSTM "
            "(same input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional arguments)\n"
            "rnn = RNN.LSTM(256, 512, 2)\n",
            ("APX810",),
        ),
    ]
    NOOP_EXAMPLES = [
        Example("torch-adamw", "import torch\n\nopt = torch.optim.AdamW(model.parameters(), lr=1e-3)\n"),
        Example(
            "local-class-named-fused-adam",
            "class FusedAdam:\n    pass\n\n\nopt = FusedAdam(params, lr=1e-3)\n",
        ),
        Example(
            "apex-in-comments-and-strings",
            '# see https://github.com/NVIDIA/apex for FusedAdam\nhelp_text = "use apex.optimizers.FusedAdam"\n',
        ),
    ]


def _value(bound: Dict[str, cst.Arg], name: str) -> Optional[cst.BaseExpression]:
    arg = bound.get(name)
    return arg.value if arg is not None else None


def _positional(arg: cst.Arg) -> cst.Arg:
    return arg.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)


def _positional_first(args: List[cst.Arg]) -> List[cst.Arg]:
    return [a for a in args if a.keyword is None] + [a for a in args if a.keyword is not None]


def _keep_args(
    bound: Dict[str, cst.Arg],
    same_position: tuple,
    *,
    keyword: tuple = (),
    drop: tuple = (),
    unknown_ok: bool = False,
) -> Optional[List[cst.Arg]]:
    """Arguments for the torch call: the leading ``same_position`` parameters keep their
    form while they stay in position, ``keyword`` ones are passed by name, ``drop`` ones go.
    ``None`` if an argument fits none of these (and ``unknown_ok`` is false)."""
    allowed = set(same_position) | set(keyword) | set(drop)
    if not unknown_ok and not set(bound) <= allowed:
        return None
    positional_ok = True
    out: List[cst.Arg] = []
    for name, arg in bound.items():
        if name in drop:
            positional_ok = positional_ok and arg.keyword is not None
            continue
        if arg.keyword is None and positional_ok and name in same_position:
            out.append(arg)
            continue
        positional_ok = False
        out.append(as_keyword(arg, name))
    return out


def _kept_message(name: str) -> Optional[str]:
    if name.startswith(_NOT_KEPT_PREFIXES):
        return None
    for prefix in sorted(KEPT, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "."):
            return KEPT[prefix]
    return None
