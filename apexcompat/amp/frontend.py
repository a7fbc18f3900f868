"""``amp.initialize``: the options object, the four opt levels, and the print-out apex gave.

The model/optimizer work itself is in ``_initialize.py``; ``state_dict`` and
``load_state_dict`` live with the loss scalers in ``scaler.py`` and are re-exported here
because apex exposed them from this module.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Union

import torch

from .. import _devices, run_settings
from .._notices import notice_once
from ._amp_state import _amp_state, maybe_print, warn_or_err
from ._initialize import _initialize
from .scaler import load_state_dict, state_dict  # noqa: F401  (apex exposed them here)

__all__ = ["Properties", "opt_levels", "initialize", "state_dict", "load_state_dict"]

# (name, blank value) in apex's print order.
_BLANK_OPTIONS = (
    ("enabled", False),
    ("opt_level", None),
    ("cast_model_type", None),
    ("patch_torch_functions", False),
    ("keep_batchnorm_fp32", None),
    ("master_weights", None),
    ("loss_scale", 1.0),
)


class Properties:
    """The seven amp options, validated when assigned (spec §3.4).

    Reading an option is plain attribute access (``props.loss_scale``). Assigning one checks
    it against the *current* ``opt_level``; a violation goes through apex's hard-override
    helper (``RuntimeError``, or a printed ``Warning:`` when
    ``amp._amp_state.hard_override`` is set, in which case the value is kept).
    """

    def __init__(self) -> None:
        self.__dict__["options"] = dict(_BLANK_OPTIONS)

    def __getattr__(self, name: str) -> Any:
        options = self.__dict__.get("options", {})
        if name in options:
            return options[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        options = self.__dict__["options"]
        if name not in options:
            self.__dict__[name] = value
            return
        validate = getattr(self, "_set_" + name, None)
        options[name] = validate(value) if validate is not None else value

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.options.items())
        return f"Properties({inner})"

    # Each validator returns the value to store (after apex's normalisation).

    def _set_cast_model_type(self, value: Any) -> Any:
        if (
            self.opt_level == "O1"
            and value is not None
            and value is not False
            and value is not torch.float32
        ):
            warn_or_err(
                "O1 inserts casts around Torch functions rather than model weights, so with "
                "O1, the model weights themselves should remain FP32. If you wish to cast the "
                "model to a different type, use opt_level='O2' or 'O3'. "
                f"cast_model_type was {value}"
            )
        return value

    def _set_patch_torch_functions(self, value: Any) -> Any:
        if self.opt_level != "O1" and value:
            warn_or_err(
                "Currently, patch_torch_functions=True should only be set by selecting "
                "opt_level='O1'."
            )
        return value

    def _set_keep_batchnorm_fp32(self, value: Any) -> Any:
        if self.opt_level == "O1" and value is not None:
            warn_or_err(
                "With opt_level O1, batchnorm functions are automatically patched to run in "
                "FP32, so keep_batchnorm_fp32 should be None. "
                f"keep_batchnorm_fp32 was {value}"
            )
        if isinstance(value, str) and value in ("True", "False"):
            return value == "True"
        # apex used an assert here, so this is an AssertionError, not a hard-override check.
        if not (value is True or value is False or value is None):
            raise AssertionError(
                "keep_batchnorm_fp32 must be a boolean, the string 'True' or 'False', or "
                f"None, found keep_batchnorm_fp32={value}"
            )
        return value

    def _set_master_weights(self, value: Any) -> Any:
        if self.opt_level == "O1" and value is not None:
            warn_or_err(
                "It doesn't make sense to use master_weights with O1. With O1, your model "
                "weights themselves should be FP32."
            )
        return value

    def _set_loss_scale(self, value: Any) -> Any:
        if isinstance(value, str) and value == "dynamic":
            return value
        return float(value)


class _OptLevel:
    """One opt level: its one-line description and its default options."""

    def __init__(self, name: str, brief: str, defaults: Dict[str, Any]) -> None:
        self.name = name
        self.brief = brief
        self.defaults = defaults

    def __call__(self, properties: Properties) -> Properties:
        for key, value in self.defaults.items():
            setattr(properties, key, value)
        return properties

    def __repr__(self) -> str:
        return f"<opt_level {self.name}>"

    def in_bfloat16(self) -> "_OptLevel":
        """This level with bfloat16 wherever it uses float16, and loss scaling off (a static
        1.0) wherever it scales, as ``APEXCOMPAT_HALF_DTYPE=bfloat16`` asks."""
        defaults = dict(self.defaults)
        if defaults["cast_model_type"] is torch.float16:
            defaults["cast_model_type"] = torch.bfloat16
        if self.name != "O0":
            defaults["loss_scale"] = 1.0
        return _OptLevel(self.name, self.brief.replace("FP16", "BF16"), defaults)


def _defaults(level, cast, patch, keep_bn, master, scale) -> Dict[str, Any]:
    return {
        "enabled": True,
        "opt_level": level,
        "cast_model_type": cast,
        "patch_torch_functions": patch,
        "keep_batchnorm_fp32": keep_bn,
        "master_weights": master,
        "loss_scale": scale,
    }


opt_levels: Dict[str, _OptLevel] = {
    "O0": _OptLevel(
        "O0", "O0:  Pure FP32 training.\n",
        _defaults("O0", torch.float32, False, None, False, 1.0),
    ),
    "O1": _OptLevel(
        "O1", "O1:  Insert automatic casts around Pytorch functions and Tensor methods.\n",
        _defaults("O1", None, True, None, None, "dynamic"),
    ),
    "O2": _OptLevel(
        "O2", "O2:  FP16 training with FP32 batchnorm and FP32 master weights.\n",
        _defaults("O2", torch.float16, False, True, True, "dynamic"),
    ),
    # No trailing newline: apex printed no blank line after O3's "Selected" line.
    "O3": _OptLevel(
        "O3", "O3:  Pure FP16 training.",
        _defaults("O3", torch.float16, False, False, False, 1.0),
    ),
}


def _print_options(properties: Properties) -> None:
    for name, value in properties.options.items():
        maybe_print("{:22} : {}".format(name, value), rank0=True)


def _forced_opt_level(script_level: str) -> str:
    """The opt level to use: ``APEXCOMPAT_OPT_LEVEL`` / ``set_opt_level_override`` when
    set (said on stderr), else the script's."""
    forced = run_settings.opt_level_override()
    if forced is None:
        return script_level
    source = run_settings.source_of_opt_level()
    if forced == script_level:
        notice_once(f"{source}={forced}: the script already uses opt_level {forced!r}")
    else:
        notice_once(f"{source}={forced}: opt_level overridden from {script_level!r} (the script's) to {forced!r}")
    return forced


def _drop_invalid_at(level_name: str, overrides: Dict[str, Any]) -> None:
    """Drop (with a stderr notice) the script's options that contradict a forced opt level,
    e.g. ``keep_batchnorm_fp32=True`` when O2 is forced down to O1."""
    saved = _amp_state.hard_override
    _amp_state.hard_override = False
    try:
        for name, value in overrides.items():
            if value is None or name in ("enabled", "opt_level"):
                continue
            scratch = opt_levels[level_name](Properties())
            try:
                setattr(scratch, name, value)
            except RuntimeError:
                overrides[name] = None
                notice_once(f"{name}={value} dropped: it is not valid at the forced opt_level {level_name!r}")
    finally:
        _amp_state.hard_override = saved


def _bfloat16_loss_scale(props: Properties, loss_scale: Any, from_setting: bool) -> None:
    """bfloat16 has float32's range, so loss scaling is off (a static 1.0) unless the
    script passed ``loss_scale``; says on stderr what the bfloat16 switch changed."""
    unscaled = props.cast_model_type is torch.bfloat16 or (from_setting and props.opt_level != "O0")
    _amp_state.bfloat16_unscaled = unscaled and loss_scale is None
    if props.cast_model_type is torch.bfloat16 and loss_scale is None:
        props.loss_scale = 1.0
    if from_setting:
        source = run_settings.source_of_half_dtype()
        level = props.opt_level
        if level == "O0":
            what = "O0 trains in fp32, nothing changed"
        elif level == "O1":
            what = "O1 autocasts to torch.bfloat16"
        else:
            masters = " with fp32 master weights" if props.master_weights else ""
            what = f"{level} casts the model to {props.cast_model_type}{masters}"
        if level != "O0":
            what += (
                "; loss scaling off (static loss_scale 1.0)"
                if loss_scale is None
                else f"; loss_scale={loss_scale!r} kept as passed to initialize"
            )
        notice_once(f"{source}=bfloat16: {what}")
    elif props.cast_model_type is torch.bfloat16 and loss_scale is None:
        notice_once(
            "cast_model_type=torch.bfloat16: loss scaling off (static loss_scale 1.0), bfloat16 has "
            "float32's range; pass loss_scale to initialize to scale anyway"
        )


def _returned_unchanged(models, optimizers):
    return models if optimizers is None else (models, optimizers)


Models = Union[torch.nn.Module, List[torch.nn.Module]]
Optimizers = Union[torch.optim.Optimizer, List[torch.optim.Optimizer], None]


def initialize(
    models: Models,
    optimizers: Optimizers = None,
    enabled: bool = True,
    opt_level: str = "O1",
    cast_model_type: Union[torch.dtype, bool, None] = None,
    patch_torch_functions: Optional[bool] = None,
    keep_batchnorm_fp32: Union[bool, str, None] = None,
    master_weights: Optional[bool] = None,
    loss_scale: Union[float, str, None] = None,
    cast_model_outputs: Optional[torch.dtype] = None,
    num_losses: int = 1,
    verbosity: int = 1,
    min_loss_scale: Optional[float] = None,
    max_loss_scale: Optional[float] = 2.0**24,
) -> Union[Models, "tuple[Models, Optimizers]"]:
    """Prepare models and optimizers for mixed-precision training, exactly as apex did.

    Example::

        import torch
        from apexcompat import amp

        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)

        x, y = torch.randn(16, 4), torch.randn(16, 2)
        loss = torch.nn.functional.mse_loss(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

    Call it once, after moving the model to its device and creating the optimizer, and
    *before* wrapping the model in ``DistributedDataParallel`` / ``DataParallel``. Models and
    optimizers are modified in place and returned in the shape they were passed.

    Every option left at ``None`` takes the default of ``opt_level``; a value given
    overrides it (and is validated against the level, see the options table in the docs).
    The resolved options are printed (rank 0 only) unless ``verbosity=0``.

    Args:
        models: a ``torch.nn.Module`` or a ``list`` of them (a tuple is rejected with
            ``TypeError``). Parameters and buffers must be float32 (``.half()`` models are
            rejected unless ``amp._amp_state.allow_incoming_model_not_fp32`` is set). CPU and
            CUDA models are accepted; the device is read from the parameters.
        optimizers: ``None``, a ``torch.optim.Optimizer`` or a ``list`` of them (a tuple is
            rejected with ``TypeError``; apex's old ``FP16_Optimizer`` with
            ``RuntimeError``). Each optimizer may be passed through ``initialize`` only once.
        enabled: if falsy, nothing is done: the arguments come back unchanged and
            ``scale_loss`` becomes a pass-through yielding the loss itself.
        opt_level: ``"O0"`` (fp32), ``"O1"`` (autocast: ops run in half precision where it
            is safe, weights stay fp32), ``"O2"`` (model cast to half except batchnorm, fp32
            master weights in the optimizer), ``"O3"`` (everything half). Letter O, not zero.
        cast_model_type: dtype the model's weights and floating inputs are cast to
            (``torch.float32`` for O0, ``torch.float16`` for O2/O3, ``None`` for O1);
            ``False`` disables model casting and the ``forward`` patch.
        patch_torch_functions: whether ops are autocast (True only at O1; setting it at
            another level is an error).
        keep_batchnorm_fp32: keep affine batchnorm layers in fp32 when casting the model
            (True for O2, False for O3; must be ``None`` at O1). Accepts the strings
            ``"True"``/``"False"``.
        master_weights: keep fp32 master copies of half parameters inside the optimizer
            (True for O2; must be ``None`` at O1).
        loss_scale: ``"dynamic"`` (start at 2**16, halve on overflow, double after 2000
            clean steps) or a number for a static scale (strings such as ``"128.0"`` work).
            O0/O3 default to 1.0, O1/O2 to ``"dynamic"``.
        cast_model_outputs: dtype the model's floating outputs are cast to. By default
            outputs come back as float32 whenever the model is cast (O0/O2/O3) and are left
            alone at O1.
        num_losses: number of independent loss scalers, selected later with
            ``scale_loss(..., loss_id=i)``.
        verbosity: 0 silences every amp message; any value above 0 prints them.
        min_loss_scale: floor for the dynamic scale (applied when halving); ``None`` = none.
        max_loss_scale: ceiling for the dynamic scale (applied at start and when doubling);
            default 2**24.

    Returns:
        ``model`` / ``[models]`` when ``optimizers`` is ``None``, otherwise a pair
        ``(models, optimizers)``, each element in the form it was passed (single object or
        list; an empty optimizer list stays ``[]``).

    Raises:
        RuntimeError: unknown ``opt_level``, an option that contradicts the level, a half or
            parallel-wrapped model, an optimizer already initialized, or (CUDA models only)
            ``torch.backends.cudnn.enabled`` being False.
        TypeError: models or optimizers in an unsupported container.
        AssertionError: an invalid ``keep_batchnorm_fp32`` value.
        ValueError: a ``loss_scale`` string that is neither ``"dynamic"`` nor a number.
    """
    _amp_state.opt_properties = Properties()
    _amp_state.verbosity = verbosity
    _amp_state.bfloat16_unscaled = False

    if not enabled:
        return _returned_unchanged(models, optimizers)

    device_type = _devices.model_device_type(models)
    # A CUDA-only requirement of apex's kernels; meaningless for CPU models.
    if device_type == "cuda" and not torch.backends.cudnn.enabled:
        raise RuntimeError("Amp requires torch.backends.cudnn.enabled = True")

    script_level = opt_level
    opt_level = _forced_opt_level(opt_level)
    if opt_level not in opt_levels:
        raise RuntimeError(
            f"Unexpected optimization level {opt_level}. Options are 'O0', 'O1', 'O2', 'O3'.  "
            "Note that in `O0`, `O1`, etc., the prefix O is the letter O, not the number zero."
        )
    bfloat16 = run_settings.half_dtype_override() is torch.bfloat16
    level = opt_levels[opt_level].in_bfloat16() if bfloat16 else opt_levels[opt_level]
    props = level(_amp_state.opt_properties)
    _amp_state.opt_properties = props
    maybe_print("Selected optimization level " + level.brief, rank0=True)
    maybe_print("Defaults for this optimization level are:", rank0=True)
    _print_options(props)

    _amp_state.min_loss_scale = min_loss_scale
    _amp_state.max_loss_scale = max_loss_scale

    maybe_print("Processing user overrides (additional kwargs that are not None)...", rank0=True)
    overrides = {
        "enabled": enabled,
        "opt_level": opt_level,
        "cast_model_type": cast_model_type,
        "patch_torch_functions": patch_torch_functions,
        "keep_batchnorm_fp32": keep_batchnorm_fp32,
        "master_weights": master_weights,
        "loss_scale": loss_scale,
    }
    if opt_level != script_level:
        _drop_invalid_at(opt_level, overrides)
    if bfloat16 and cast_model_type is torch.float16:
        overrides["cast_model_type"] = torch.bfloat16
    for name, value in overrides.items():
        if value is not None:
            setattr(props, name, value)
    _bfloat16_loss_scale(props, loss_scale, bfloat16)

    maybe_print("After processing overrides, optimization options are:", rank0=True)
    _print_options(props)

    return _initialize(
        models,
        optimizers,
        props,
        num_losses=num_losses,
        cast_model_outputs=cast_model_outputs,
        device_type=device_type,
        half_dtype=torch.bfloat16 if bfloat16 else None,
    )
