"""Patch an optimizer for amp (spec §4): the ``_amp_stash``, lazy parameter bookkeeping,
fp32 master weights for O2, and the "prepare"/"post" halves of ``scale_loss``.

Without master weights (O0, O1, O3) the optimizer keeps its own ``step``/``zero_grad``;
"prepare" stashes existing grads, "post" unscales the fresh ones (adding the stash back).
With master weights (O2, ``master_weights=True``) fp32 copies of the fp16 params replace
them in the param groups at the first use, ``step`` copies the masters back into the model,
``zero_grad`` zeroes the model grads in place, and "post" writes unscaled fp32 master grads.
"""

from __future__ import annotations

import types
from typing import Any, List, Optional

import torch

from .. import _compat, _unscale

__all__ = ["AmpOptimizerState", "_process_optimizer"]

_CLOSURE_ERROR = "Currently, Amp does not support closure use with optimizers."
_TYPE_ERROR = (
    "Optimizer's parameters must be either torch.cuda.FloatTensor or torch.cuda.HalfTensor. "
    "Received {}"
)
_AMP_METHOD_NAMES = (
    "_lazy_init_maybe_master_weights",
    "_master_params_to_model_params",
    "_prepare_amp_backward",
    "_post_amp_backward",
    "_amp_lazy_init",
)


class AmpOptimizerState:
    """The ``optimizer._amp_stash`` namespace (apex's attribute names)."""


def _is_half(param: torch.Tensor) -> bool:
    """fp16 or bfloat16: both get fp32 master weights at O2 (apex knew only fp16; bfloat16
    is a half type here so that ``cast_model_type=torch.bfloat16`` trains, spec §12)."""
    return param.dtype in (torch.float16, torch.bfloat16)


def _kind(param: torch.Tensor) -> str:
    """"half" or "float"; anything else raises apex's TypeError (legacy type string)."""
    if param.dtype == torch.float32:
        return "float"
    if _is_half(param):
        return "half"
    raise TypeError(_TYPE_ERROR.format(param.type()))


def _set_grads_none(params: List[torch.Tensor]) -> None:
    for param in params:
        param.grad = None


def _make_master(param: torch.Tensor) -> torch.Tensor:
    master = param.detach().clone().float()
    master.requires_grad = True
    return master


# --- lazy init ---------------------------------------------------------------------------


def _lazy_init_no_master_weights(self: Any) -> None:
    stash = self._amp_stash
    stash.all_fp16_params = []
    stash.all_fp32_params = []
    for group in self.param_groups:
        for param in group["params"]:
            if _kind(param) == "half":
                stash.all_fp16_params.append(param)
            else:
                stash.all_fp32_params.append(param)
    stash.all_fp16_grad_stash = [None] * len(stash.all_fp16_params)
    stash.all_fp32_grad_stash = [None] * len(stash.all_fp32_params)


def _classify_with_masters(self: Any, params: List[torch.Tensor]):
    """Replace each fp16 param requiring grad by a new fp32 master in ``params`` (in place);
    returns (fp16 params, their masters, fp32 params)."""
    fp16, masters, fp32 = [], [], []
    for i, param in enumerate(params):
        if not param.requires_grad:
            continue
        if _kind(param) == "half":
            master = _make_master(param)
            params[i] = master
            fp16.append(param)
            masters.append(master)
            if param in self.state:
                self.state[master] = self.state.pop(param)
        else:
            fp32.append(param)
    return fp16, masters, fp32


def _lazy_init_with_master_weights(self: Any) -> None:
    stash = self._amp_stash
    stash.fp16_groups, stash.fp32_from_fp16_groups, stash.fp32_from_fp32_groups = [], [], []
    for group in self.param_groups:
        fp16, masters, fp32 = _classify_with_masters(self, group["params"])
        stash.fp16_groups.append(fp16)
        stash.fp32_from_fp16_groups.append(masters)
        stash.fp32_from_fp32_groups.append(fp32)
    stash.all_fp16_params = [p for g in stash.fp16_groups for p in g]
    stash.all_fp32_from_fp16_params = [p for g in stash.fp32_from_fp16_groups for p in g]
    stash.all_fp32_from_fp32_params = [p for g in stash.fp32_from_fp32_groups for p in g]
    stash.all_fp32_from_fp32_grad_stash = [None] * len(stash.all_fp32_from_fp32_params)
    _set_grads_none(stash.all_fp32_from_fp16_params)
    _set_grads_none(stash.all_fp32_from_fp32_params)
    # Round-trip the state dict so existing per-param state is recast to the masters' fp32.
    self.load_state_dict(self.state_dict())


def _amp_lazy_init(self: Any) -> None:
    stash = self._amp_stash
    if not stash.lazy_init_called:
        self._lazy_init_maybe_master_weights()
        stash.lazy_init_called = True


def _master_params_to_model_params(self: Any) -> None:
    stash = self._amp_stash
    if stash.all_fp16_params:
        with torch.no_grad():
            _compat.foreach_copy_(stash.all_fp16_params, stash.all_fp32_from_fp16_params)


# --- the two halves of scale_loss ----------------------------------------------------------


def _debug_log_overflow(optimizer: Any) -> None:
    """DEBUG diagnostics: name every param whose fresh grad is non-finite, by its qualified
    name in the models given to ``initialize`` (O2: the half model param a master copies;
    a param of no model: its place in ``optimizer.param_groups``)."""
    from ..doctor.core import doctor
    from ..doctor.names import labelled_params, qualified_names

    labelled = labelled_params(optimizer, qualified_names(doctor.models()))
    grads = [(label, p.grad) for label, p in labelled if p.grad is not None]
    _unscale.log_nonfinite([grad for _, grad in grads], [label for label, _ in grads])


def _stash_and_clear(params: List[torch.Tensor], stash_list: List[Optional[torch.Tensor]]) -> None:
    for i, param in enumerate(params):
        stash_list[i] = param.grad
        param.grad = None


def post_backward_models_are_masters(
    scaler: Any, params: List[torch.Tensor], stashed_grads: List[Optional[torch.Tensor]]
) -> None:
    """Unscale the fresh grads of params the optimizer steps on directly (spec §5.3)."""
    if not params:
        return
    if not scaler.dynamic and scaler.loss_scale() == 1.0:
        # Nothing to unscale; the stash is dropped (apex quirk, reachable with O2 + 1.0).
        for i in range(len(stashed_grads)):
            stashed_grads[i] = None
        return
    grads = [p.grad for p in params]
    if all(s is None for s in stashed_grads) and all(g is not None for g in grads):
        scaler.unscale(grads, grads, None, models_are_masters=True)
        return
    fresh: List[torch.Tensor] = []
    with_stash: List[torch.Tensor] = []
    stashed: List[torch.Tensor] = []
    for param, grad, old in zip(params, grads, stashed_grads):
        if grad is None:
            if old is not None:
                param.grad = old
        elif old is None:
            fresh.append(grad)
        else:
            with_stash.append(grad)
            stashed.append(old)
    if fresh:
        scaler.unscale(fresh, fresh, None, models_are_masters=True)
    if with_stash:
        scaler.unscale_with_stashed(with_stash, stashed, with_stash)
    for i in range(len(stashed_grads)):
        stashed_grads[i] = None


def _prepare_backward_no_master_weights(self: Any) -> None:
    stash = self._amp_stash
    self._amp_lazy_init()
    _stash_and_clear(stash.all_fp16_params, stash.all_fp16_grad_stash)
    _stash_and_clear(stash.all_fp32_params, stash.all_fp32_grad_stash)


def _post_backward_no_master_weights(self: Any, scaler: Any) -> None:
    stash = self._amp_stash
    self._amp_lazy_init()
    if _unscale.debug_enabled():
        _debug_log_overflow(self)
    post_backward_models_are_masters(scaler, stash.all_fp16_params, stash.all_fp16_grad_stash)
    post_backward_models_are_masters(scaler, stash.all_fp32_params, stash.all_fp32_grad_stash)


def _prepare_backward_with_master_weights(self: Any) -> None:
    stash = self._amp_stash
    self._amp_lazy_init()
    _set_grads_none(stash.all_fp16_params)  # fp16 grads are not kept across backwards
    _stash_and_clear(stash.all_fp32_from_fp32_params, stash.all_fp32_from_fp32_grad_stash)


def _post_backward_with_master_weights(self: Any, scaler: Any) -> None:
    stash = self._amp_stash
    self._amp_lazy_init()
    if _unscale.debug_enabled():
        _debug_log_overflow(self)
    fresh_src: List[torch.Tensor] = []
    fresh_dst: List[torch.Tensor] = []
    accum_src: List[torch.Tensor] = []
    accum_dst: List[torch.Tensor] = []
    for model_param, master in zip(stash.all_fp16_params, stash.all_fp32_from_fp16_params):
        grad = model_param.grad
        if grad is None:
            continue
        if master.grad is None:
            master.grad = torch.empty_like(master)
            fresh_src.append(grad)
            fresh_dst.append(master.grad)
        else:
            accum_src.append(grad)
            accum_dst.append(master.grad)
    if fresh_src:
        scaler.unscale(fresh_src, fresh_dst, scaler.loss_scale(), models_are_masters=False)
    if accum_src:
        scaler.unscale_with_stashed(accum_src, accum_dst, accum_dst)
    post_backward_models_are_masters(
        scaler, stash.all_fp32_from_fp32_params, stash.all_fp32_from_fp32_grad_stash
    )


# --- entry point ------------------------------------------------------------------------------


def _process_optimizer(optimizer: Any, properties: Any) -> Any:
    """Patch ``optimizer`` in place for amp and return it (spec §4)."""
    if hasattr(optimizer, "_amp_stash"):
        raise RuntimeError("A given optimizer should only be passed through amp.initialize once.")
    optimizer._amp_stash = AmpOptimizerState()
    optimizer._amp_stash.lazy_init_called = False
    optimizer._amp_stash.already_patched = False
    optimizer._amp_stash.params_have_scaled_gradients = False

    for name in _AMP_METHOD_NAMES:
        if hasattr(optimizer, name):
            raise RuntimeError("Incoming optimizer already has {} defined.".format(name))

    master_weights = bool(properties.master_weights)
    if master_weights:
        optimizer._lazy_init_maybe_master_weights = types.MethodType(
            _lazy_init_with_master_weights, optimizer
        )
        optimizer._master_params_to_model_params = types.MethodType(
            _master_params_to_model_params, optimizer
        )
        old_step = optimizer.step

        def new_step(self, closure=None):
            if closure is not None:
                raise RuntimeError(_CLOSURE_ERROR)
            retval = old_step()
            self._master_params_to_model_params()
            _set_grads_none(self._amp_stash.all_fp32_from_fp16_params)
            return retval

        optimizer.step = types.MethodType(new_step, optimizer)

        def new_zero_grad(self):
            stash = self._amp_stash
            self._amp_lazy_init()
            for params in (stash.all_fp16_params, stash.all_fp32_from_fp32_params):
                grads = [p.grad for p in params if p.grad is not None]
                for grad in grads:
                    grad.detach_()
                if grads:
                    torch._foreach_zero_(grads)
            _set_grads_none(stash.all_fp32_from_fp16_params)

        optimizer.zero_grad = types.MethodType(new_zero_grad, optimizer)
        optimizer._prepare_amp_backward = types.MethodType(
            _prepare_backward_with_master_weights, optimizer
        )
        optimizer._post_amp_backward = types.MethodType(
            _post_backward_with_master_weights, optimizer
        )
    else:
        optimizer._lazy_init_maybe_master_weights = types.MethodType(
            _lazy_init_no_master_weights, optimizer
        )
        optimizer._prepare_amp_backward = types.MethodType(
            _prepare_backward_no_master_weights, optimizer
        )
        optimizer._post_amp_backward = types.MethodType(
            _post_backward_no_master_weights, optimizer
        )

    optimizer._amp_lazy_init = types.MethodType(_amp_lazy_init, optimizer)

    old_add_param_group = optimizer.add_param_group

    def new_add_param_group(self, new_group):
        stash = self._amp_stash
        self._amp_lazy_init()
        assert isinstance(new_group, dict), "param group must be a dict"
        new_params = new_group["params"]
        if isinstance(new_params, torch.Tensor):
            new_group["params"] = [new_params]
        elif isinstance(new_params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        else:
            new_group["params"] = list(new_params)

        if master_weights:
            fp16, masters, fp32 = _classify_with_masters(self, new_group["params"])
            stash.fp16_groups.append(fp16)
            stash.fp32_from_fp16_groups.append(masters)
            stash.fp32_from_fp32_groups.append(fp32)
            stash.all_fp16_params += fp16
            stash.all_fp32_from_fp16_params += masters
            stash.all_fp32_from_fp32_params += fp32
            stash.all_fp32_from_fp32_grad_stash += [None] * len(fp32)
        else:
            for param in new_group["params"]:
                if _kind(param) == "half":
                    stash.all_fp16_params.append(param)
                    stash.all_fp16_grad_stash.append(None)
                else:
                    stash.all_fp32_params.append(param)
                    stash.all_fp32_grad_stash.append(None)
        old_add_param_group(new_group)

    optimizer.add_param_group = types.MethodType(new_add_param_group, optimizer)
    return optimizer
