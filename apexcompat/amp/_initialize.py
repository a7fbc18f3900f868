"""What ``amp.initialize`` does to its arguments once the options are resolved (spec §3.7-§3.9,
steps 11-17 of §3.2): argument checks, model casting, the ``forward`` patch, the fp32
state-dict hook, then optimizer processing, loss scalers and (O1) the autocast scope."""

from __future__ import annotations

from typing import Any, Iterable, Optional

import torch

from .. import _compat, _devices
from ._amp_state import _amp_state, warn_or_err
from ..doctor.core import doctor
from .utils import TypeCaster, convert_network

__all__ = ["_initialize", "check_optimizers", "check_models", "check_params_fp32"]

# Where apex defined its two legacy FP16_Optimizer classes, and the name its message used.
_FP16_OPTIMIZER_HOMES = (
    ("apex.fp16_utils", "apex.fp16_utils.FP16_Optimizer"),
    ("apex.contrib.optimizers", "apex.optimizers.FP16_Optimizer"),
    ("apex.optimizers", "apex.optimizers.FP16_Optimizer"),
)


def _fp16_optimizer_name(optimizer: Any) -> Optional[str]:
    """apex's name for ``optimizer``'s class if it is (a subclass of) one of apex's
    ``FP16_Optimizer`` classes, else None. Matched by qualified name: apex itself may not be
    importable."""
    for cls in type(optimizer).__mro__:
        if cls.__qualname__ != "FP16_Optimizer":
            continue
        module = cls.__module__ or ""
        for package, name in _FP16_OPTIMIZER_HOMES:
            if module == package or module.startswith(package + "."):
                return name
    return None


def check_optimizers(optimizers: Iterable[Any]) -> None:
    """Reject apex's old ``FP16_Optimizer`` wrappers with apex's message."""
    for optimizer in optimizers:
        name = _fp16_optimizer_name(optimizer)
        if name is not None:
            raise RuntimeError(
                f"An incoming optimizer is an instance of {name}. The optimizer(s) passed to "
                "amp.initialize() must be bare \ninstances of either ordinary Pytorch "
                "optimizers, or Apex fused \noptimizers.\n"
            )


def _is_larc(optimizer: Any) -> bool:
    # apex.parallel.LARC wraps an optimizer without subclassing torch.optim.Optimizer.
    return any(
        cls.__name__ == "LARC" and (cls.__module__ or "").startswith("apex.parallel")
        for cls in type(optimizer).__mro__
    )


_PARALLEL_WRAPPERS = (
    (torch.nn.parallel.DistributedDataParallel, "torch.nn.parallel.DistributedDataParallel"),
    (torch.nn.parallel.DataParallel, "torch.nn.parallel.DataParallel"),
)


def check_models(models: Iterable[torch.nn.Module]) -> None:
    """Reject models already wrapped by DataParallel / DistributedDataParallel."""
    for model in models:
        for cls, name in _PARALLEL_WRAPPERS:
            if isinstance(model, cls):
                raise RuntimeError(
                    f"Incoming model is an instance of {name}. Parallel wrappers should only "
                    "be applied to the model(s) AFTER \nthe model(s) have been returned from "
                    "amp.initialize."
                )


def _check_fp32(kind: str, name: str, tensor: torch.Tensor) -> None:
    type_string = _devices.legacy_type_string(tensor)
    if "Half" not in type_string:
        # apex also demanded CUDA here; apexcompat accepts every device (spec §12).
        return
    warn_or_err(
        f"Found {kind} {name} with type {type_string}, expected "
        f"{_devices.legacy_float_type_string(tensor)}.\n"
        "When using amp.initialize, you do not need to call .half() on your model\n"
        "before passing it, no matter what optimization level you choose."
    )


def check_params_fp32(models: Iterable[torch.nn.Module]) -> None:
    """Refuse float16 parameters and buffers (all parameters first, then all buffers, per
    model), through the hard-override helper."""
    for model in models:
        for name, param in model.named_parameters():
            if param.is_floating_point():
                _check_fp32("param", name, param)
        for name, buf in model.named_buffers():
            if buf.is_floating_point():
                _check_fp32("buffer", name, buf)


class _PatchedForward:
    """The ``forward`` amp installs on each model passed in: casts floating inputs to the
    model's type and floating outputs to the output type, around the original forward.

    A plain object (not a closure) so that ``torch.save(model)``, pickling and
    ``copy.deepcopy(model)`` keep working. ``inner`` is the ``forward`` the instance already
    had (e.g. from an earlier ``initialize``), or None for the class's own ``forward``.
    """

    def __init__(self, module, inner, input_caster, output_caster) -> None:
        self.module = module
        self.inner = inner
        self.input_caster = input_caster
        self.output_caster = output_caster

    @property
    def __wrapped__(self):
        # Lets inspect.signature(model.forward) report the real forward's parameters.
        if self.inner is not None:
            return self.inner
        return type(self.module).forward.__get__(self.module, type(self.module))

    def __call__(self, *args, **kwargs):
        if self.input_caster is not None:
            args = self.input_caster(args)
            kwargs = self.input_caster(kwargs)
        return self.output_caster(self.__wrapped__(*args, **kwargs))

    def __repr__(self) -> str:
        return (
            f"<amp forward of {type(self.module).__name__}: inputs {self.input_caster}, "
            f"outputs {self.output_caster}>"
        )


def patch_forward(
    model: torch.nn.Module,
    input_dtype: Optional[torch.dtype],
    output_dtype: torch.dtype,
) -> None:
    """Install amp's casting ``forward`` on ``model`` (inputs cast to ``input_dtype``
    unless None, outputs to ``output_dtype``). Submodules are not patched."""
    inner = model.__dict__.get("forward")
    input_caster = TypeCaster(input_dtype) if input_dtype is not None else None
    model.forward = _PatchedForward(model, inner, input_caster, TypeCaster(output_dtype))


class _UpcastStateDict:
    """State-dict hook that turns a module's own half-precision entries into float32, so
    ``model.state_dict()`` stays all-fp32 at O2/O3. One instance per module; each module
    converts only its own entries (children run their own hooks first)."""

    def __init__(self, half_dtypes) -> None:
        self.half_dtypes = tuple(half_dtypes)

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        if type(module)._save_to_state_dict is torch.nn.Module._save_to_state_dict:
            keys = [prefix + name for name in (*module._parameters, *module._buffers)]
        else:  # a module writing its own entries: look at everything under its prefix
            keys = [key for key in state_dict if key.startswith(prefix)]
        for key in keys:
            value = state_dict.get(key)
            if isinstance(value, torch.Tensor) and value.dtype in self.half_dtypes:
                state_dict[key] = value.to(torch.float32)


def _cast_models(models, props, cast_dtype, optimizers, cast_model_outputs, half_dtype=None) -> None:
    for model in models:
        if props.keep_batchnorm_fp32:
            convert_network(model, cast_dtype)
        else:
            model.to(cast_dtype)
    output_dtype = cast_model_outputs if cast_model_outputs is not None else torch.float32
    for model in models:
        patch_forward(model, cast_dtype, output_dtype)
    # Recasts per-parameter state that already exists to the new parameter dtypes.
    for optimizer in optimizers:
        optimizer.load_state_dict(optimizer.state_dict())
    # apex upcast only Half entries; an fp64 or bf16 cast_model_type stays as it is.  When
    # float16 was asked for, the device's half type stands in for it (bf16 on old CPU torch),
    # and so does the half dtype chosen by APEXCOMPAT_HALF_DTYPE.
    half_dtypes = {torch.float16}
    if props.cast_model_type is torch.float16 or props.cast_model_type is half_dtype:
        half_dtypes.add(cast_dtype)
    for model in models:
        for module in model.modules():
            _compat.register_state_dict_post_hook(module, _UpcastStateDict(half_dtypes))


def _model_cast_dtype(cast_model_type: Any, device_type: str) -> Any:
    """The dtype the model is really cast to: apex's float16 means the device's half type
    (bfloat16 on a CPU torch without float16 support); other dtypes are used as given."""
    if cast_model_type is torch.float16:
        return _devices.half_dtype_for(device_type)
    return cast_model_type


def _initialize(
    models,
    optimizers,
    properties,
    num_losses: int = 1,
    cast_model_outputs: Optional[torch.dtype] = None,
    device_type: Optional[str] = None,
    half_dtype: Optional[torch.dtype] = None,
):
    """Steps 11-17 of spec §3.2 on already validated ``properties``; returns what
    ``amp.initialize`` returns. ``half_dtype``: the half type ``APEXCOMPAT_HALF_DTYPE``
    chose (used by O1, and upcast in model state dicts like float16), None for apex's."""
    from ._process_optimizer import _process_optimizer
    from .scaler import LossScaler

    optimizers_was_list = False
    if isinstance(optimizers, torch.optim.Optimizer) or _is_larc(optimizers):
        optimizers = [optimizers]
    elif optimizers is None:
        optimizers = []
    elif isinstance(optimizers, list):
        optimizers_was_list = True
        check_optimizers(optimizers)
    else:
        check_optimizers([optimizers])
        raise TypeError("optimizers must be either a single optimizer or a list of optimizers.")

    if isinstance(models, torch.nn.Module):
        models_was_list = False
        models = [models]
    elif isinstance(models, list):
        models_was_list = True
    else:
        raise TypeError("models must be either a single model or a list of models.")

    check_models(models)
    if not _amp_state.allow_incoming_model_not_fp32:
        check_params_fp32(models)

    if device_type is None:
        device_type = _devices.model_device_type(models)

    if properties.cast_model_type:
        cast_dtype = _model_cast_dtype(properties.cast_model_type, device_type)
        _cast_models(models, properties, cast_dtype, optimizers, cast_model_outputs, half_dtype)
    elif cast_model_outputs is not None:
        for model in models:
            patch_forward(model, None, cast_model_outputs)

    for i, optimizer in enumerate(optimizers):
        optimizers[i] = _process_optimizer(optimizer, properties)

    # Filled one by one, as apex did: a failing construction (max_loss_scale=None with a
    # dynamic scale) leaves the scalers made so far, not the previous initialize's.
    _amp_state.loss_scalers = []
    for _ in range(num_losses):
        _amp_state.loss_scalers.append(
            LossScaler(
                properties.loss_scale,
                min_loss_scale=_amp_state.min_loss_scale,
                max_loss_scale=_amp_state.max_loss_scale,
            )
        )

    doctor.start_run(models, device_type, properties.opt_level)

    if properties.patch_torch_functions:
        from .amp import _activate_o1

        _activate_o1(optimizers, device_type, half_dtype or _devices.half_dtype_for(device_type))

    if optimizers_was_list:
        return (models if models_was_list else models[0]), optimizers
    returned_models = models if models_was_list else models[0]
    if not optimizers:
        return returned_models
    return returned_models, optimizers[0]
