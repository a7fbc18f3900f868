"""O1 casting control: the O1 handle, user-function registration, decorators,
``disable_casts`` and the old ``amp.init`` API.

apex implemented O1 by patching torch functions; apexcompat opens a thread-wide
``torch.autocast`` region instead (``apexcompat._autocast``).  This module owns the handle
that ``initialize`` stores in ``_amp_state.handle`` and everything users call to steer the
casting of their own functions.
"""

from __future__ import annotations

import contextlib
import threading
import types
import warnings
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import torch

from .. import _autocast, _compat
from . import lists
from ._amp_state import _amp_state, _reset_hooks
from .wrap import FLOAT, HALF, PROMOTE, cast_args, make_cast_wrapper

__all__ = [
    "AmpHandle",
    "NoOpHandle",
    "init",
    "register_half_function",
    "register_float_function",
    "register_promote_function",
    "half_function",
    "float_function",
    "promote_function",
    "disable_casts",
]

OLD_API_MESSAGE = (
    "The old Amp API is no longer supported.  Please move to the new API, documented here:  "
    "https://nvidia.github.io/apex/amp.html.  Transition guide:  "
    "https://nvidia.github.io/apex/amp.html#transition-guide-for-old-api-users"
)

# Registrations waiting for the next O1 initialize: (owner, attribute name, policy).
_USER_CAST_REGISTRY: List[Tuple[Any, str, str]] = []
# Attributes of user modules/classes replaced by cast wrappers: (owner, name, original).
_patched_attributes: List[Tuple[Any, str, Any]] = []
# Registered torch-owned functions, applied by the O1 scope's torch function mode instead of
# patching torch: function -> policy.
_torch_function_policies: Dict[Callable, str] = {}
# Whether the "O1 is active only in the initializing thread" warning was given.
_warned_other_thread = False
# The handle of the latest O1 init (apex's decorator handle).
_DECORATOR_HANDLE: Optional[Union["AmpHandle", "NoOpHandle"]] = None


class AmpHandle:
    """What an O1 ``initialize`` (or the old ``amp.init``) returns and stores in
    ``amp._amp_state.handle``: a view of the calling thread's O1 autocast scope."""

    def __init__(
        self,
        scope: _autocast.O1Scope,
        loss_scale: Any = "dynamic",
        enable_caching: bool = True,
        verbose: bool = False,
        allow_banned: bool = False,
    ) -> None:
        self._scope = scope
        self._loss_scale = loss_scale
        self._enable_caching = enable_caching
        self._verbose = verbose
        self._allow_banned = allow_banned

    @property
    def device_type(self) -> str:
        return self._scope.device_type

    @property
    def half_dtype(self) -> torch.dtype:
        return self._scope.dtype

    @property
    def verbose(self) -> bool:
        return self._verbose

    def is_active(self) -> bool:
        """True while the O1 autocast scope this handle belongs to is open."""
        return self._scope.is_active()

    @contextlib.contextmanager
    def _disable_casts(self) -> Iterator[None]:
        """Autocast off for the handle's device inside the block (exception-safe)."""
        self._check_thread()
        with self._scope.casts_disabled():
            yield

    def _clear_cache(self) -> None:
        """Drop cached low-precision weight casts (called at every ``scale_loss`` exit and
        after each optimizer step), so updated weights are always re-cast."""
        self._scope.clear_cache()

    def _check_thread(self) -> None:
        # apex's O1 covered every thread; autocast covers only the initializing one.  A
        # training step in another thread would silently run in fp32: say so, once.
        global _warned_other_thread
        if not _warned_other_thread and threading.get_ident() != self._scope.thread_id:
            _warned_other_thread = True
            warnings.warn(
                "amp O1 casting (torch.autocast) is active only in the thread that called "
                "amp.initialize; this thread's ops are not being cast. Call amp.initialize "
                "in the thread that runs the training step.",
                RuntimeWarning,
                stacklevel=4,
            )

    @contextlib.contextmanager
    def scale_loss(self, loss: Any, optimizer: Any) -> Iterator[Any]:
        """The old API's loss scaling: gone in apex too, raises on entry."""
        raise RuntimeError(OLD_API_MESSAGE)
        yield  # pragma: no cover  (makes this a generator)

    def wrap_optimizer(self, optimizer: torch.optim.Optimizer, num_loss: int = 1) -> Any:
        """The old API's optimizer wrapper (see ``apexcompat.amp.opt``)."""
        from .opt import OptimWrapper

        return OptimWrapper(optimizer, self, num_loss)


class NoOpHandle:
    """What ``amp.init(enabled=False)`` returns: casting is off and stays off."""

    def is_active(self) -> bool:
        return False

    @contextlib.contextmanager
    def _disable_casts(self) -> Iterator[None]:
        yield

    def _clear_cache(self) -> None:
        pass

    @contextlib.contextmanager
    def scale_loss(self, loss: Any, optimizer: Any) -> Iterator[Any]:
        yield loss

    def wrap_optimizer(self, optimizer: torch.optim.Optimizer, num_loss: int = 1) -> Any:
        from .opt import OptimWrapper

        return OptimWrapper(optimizer, self, num_loss)

    @property
    def verbose(self) -> bool:
        return False


# --- O1 activation ------------------------------------------------------------------------------


def _default_device_type() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def _half_dtype_for(device_type: str) -> torch.dtype:
    try:
        from .._devices import half_dtype_for
    except ImportError:  # the device module is optional for the old API
        if device_type == "cpu" and not _compat.cpu_float16_autocast_supported():
            return torch.bfloat16
        return torch.float16
    return half_dtype_for(device_type)


def _is_torch_owned(owner: Any) -> bool:
    name = owner.__name__ if isinstance(owner, types.ModuleType) else getattr(owner, "__module__", "")
    return isinstance(name, str) and (name == "torch" or name.startswith("torch."))


_overridable: Optional[set] = None


def _is_overridable(fn: Any) -> bool:
    """Whether torch function modes see calls of ``fn`` (torch functions, Tensor methods)."""
    global _overridable
    if _overridable is None:
        found = set()
        for funcs in torch.overrides.get_overridable_functions().values():
            found.update(funcs)
        _overridable = found
    try:
        return fn in _overridable
    except TypeError:  # unhashable attribute
        return False


def _apply_registrations() -> None:
    """Apply the queued user registrations, then empty the queue (apex's rule)."""
    while _USER_CAST_REGISTRY:
        owner, name, policy = _USER_CAST_REGISTRY.pop(0)
        original = getattr(owner, name)
        if _is_torch_owned(owner) and _is_overridable(original):
            _torch_function_policies[original] = policy
            continue
        setattr(owner, name, make_cast_wrapper(original, policy))
        _patched_attributes.append((owner, name, original))


def _cpu_fixup_policies(scope: _autocast.O1Scope) -> Dict[Callable, str]:
    if scope.device_type != "cpu" or not _autocast.cpu_fp32_fixups_enabled():
        return {}
    namespaces = {"torch.nn.functional": torch.nn.functional, "torch": torch, "torch.Tensor": torch.Tensor}
    policies: Dict[Callable, str] = {}
    for table, policy in (
        (lists.CPU_FP32_FIXUPS, FLOAT),
        (lists.CPU_HALF_FIXUPS, HALF),
        (lists.CPU_PROMOTE_FIXUPS, PROMOTE),
    ):
        for namespace, names in table.items():
            for name in names:
                fn = getattr(namespaces[namespace], name, None)
                if fn is not None:
                    policies[fn] = policy
    return policies


def _start(device_type: str, half_dtype: torch.dtype, **handle_options: Any) -> AmpHandle:
    global _DECORATOR_HANDLE
    scope = _autocast.activate(device_type, half_dtype)
    _apply_registrations()
    policies = _cpu_fixup_policies(scope)
    policies.update(_torch_function_policies)
    scope.set_policies(policies, cast_args)
    handle = AmpHandle(scope, **handle_options)
    _DECORATOR_HANDLE = handle
    return handle


def _wrap_step(optimizer: torch.optim.Optimizer) -> None:
    """Make ``optimizer.step`` run with casts disabled and drop stale weight casts after it
    (extra arguments such as a closure are passed through)."""
    if getattr(optimizer.step, "_apexcompat_o1_step", False):
        return
    # A step installed on the instance by someone else is kept; otherwise the class's step is
    # looked up at call time, so a copy.deepcopy of the optimizer steps itself.
    own_step = vars(optimizer).get("step")

    def step(self: torch.optim.Optimizer, *args: Any, **kwargs: Any) -> Any:
        def inner() -> Any:
            if own_step is not None:
                return own_step(*args, **kwargs)
            return type(self).step(self, *args, **kwargs)

        scope = _autocast.current_scope()
        if scope is None:
            return inner()
        with scope.casts_disabled():
            result = inner()
        scope.clear_cache()
        return result

    step._apexcompat_o1_step = True  # type: ignore[attr-defined]
    # A bound method, as torch's LR schedulers expect (they wrap ``step.__func__``).
    optimizer.step = types.MethodType(step, optimizer)  # type: ignore[method-assign]


def _activate_o1(
    optimizers: Any,
    device_type: str,
    half_dtype: torch.dtype,
) -> AmpHandle:
    """O1 part of ``initialize`` (spec §3.10 on torch.autocast): open the calling thread's
    autocast scope for ``device_type``/``half_dtype`` (reused by a second O1 initialize),
    apply queued registrations, store the handle in ``_amp_state.handle`` and make each
    optimizer's ``step`` run with casts disabled."""
    handle = _start(device_type, half_dtype, verbose=_amp_state.verbosity == 2)
    _amp_state.handle = handle
    # ``optimizers``: None, one optimizer (or optimizer-like wrapper), or a list/tuple.
    if optimizers is None:
        to_wrap: List[Any] = []
    elif isinstance(optimizers, (list, tuple)):
        to_wrap = list(optimizers)
    else:
        to_wrap = [optimizers]
    for optimizer in to_wrap:
        _wrap_step(optimizer)
    return handle


def _reset_o1() -> None:
    """amp reset hook: close this thread's O1 scope and undo everything O1 set up."""
    global _DECORATOR_HANDLE, _warned_other_thread
    _autocast.deactivate()
    while _patched_attributes:
        owner, name, original = _patched_attributes.pop()
        setattr(owner, name, original)
    _USER_CAST_REGISTRY.clear()
    _torch_function_policies.clear()
    _DECORATOR_HANDLE = None
    _warned_other_thread = False


if _reset_o1 not in _reset_hooks:
    _reset_hooks.append(_reset_o1)


# --- old API ----------------------------------------------------------------------------------


def init(
    enabled: bool = True,
    loss_scale: Any = "dynamic",
    enable_caching: bool = True,
    verbose: bool = False,
    allow_banned: bool = False,
) -> Union[AmpHandle, NoOpHandle]:
    """apex's pre-``initialize`` entry point: turns O1 casting on for the calling thread
    (CUDA if available, else CPU) and returns an ``AmpHandle`` (``NoOpHandle`` when
    ``enabled=False``).  Its ``scale_loss`` raises, as in the last apex releases."""
    global _DECORATOR_HANDLE
    if not enabled:
        handle: Union[AmpHandle, NoOpHandle] = NoOpHandle()
        _DECORATOR_HANDLE = handle
        return handle
    device_type = _default_device_type()
    return _start(
        device_type,
        _half_dtype_for(device_type),
        loss_scale=loss_scale,
        enable_caching=enable_caching,
        verbose=verbose,
        allow_banned=allow_banned,
    )


# --- registration --------------------------------------------------------------------------


def _register(owner: Any, name: str, policy: str) -> None:
    if not hasattr(owner, name):
        raise ValueError("No function named {} in module {}.".format(name, owner))
    _USER_CAST_REGISTRY.append((owner, name, policy))


def register_half_function(module: Any, name: str) -> None:
    """Cast the floating tensor arguments of ``module.name`` to the O1 half type (applied
    at the next O1 ``initialize``)."""
    _register(module, name, HALF)


def register_float_function(module: Any, name: str) -> None:
    """Cast the floating tensor arguments of ``module.name`` to float32 (applied at the next
    O1 ``initialize``)."""
    _register(module, name, FLOAT)


def register_promote_function(module: Any, name: str) -> None:
    """Cast mixed half/float32 arguments of ``module.name`` to float32 (applied at the next
    O1 ``initialize``)."""
    _register(module, name, PROMOTE)


# --- decorators ------------------------------------------------------------------------------


def half_function(fn: Callable) -> Callable:
    """Decorator: under O1 (casts enabled, this thread), cast ``fn``'s floating tensor
    arguments to the half type; otherwise run ``fn`` unchanged."""
    return make_cast_wrapper(fn, HALF)


def float_function(fn: Callable) -> Callable:
    """Decorator: under O1 (casts enabled, this thread), cast ``fn``'s floating tensor
    arguments to float32; otherwise run ``fn`` unchanged."""
    return make_cast_wrapper(fn, FLOAT)


def promote_function(fn: Callable) -> Callable:
    """Decorator: under O1 (casts enabled, this thread), cast mixed half/float32 arguments of
    ``fn`` to float32; otherwise run ``fn`` unchanged."""
    return make_cast_wrapper(fn, PROMOTE)


# --- disable_casts -----------------------------------------------------------------------------


@contextlib.contextmanager
def disable_casts() -> Iterator[None]:
    """Run the block without O1 casting (autocast off for the O1 device in this thread).

    Raises ``AttributeError`` (``'AmpState' object has no attribute 'handle'``) when no O1
    ``initialize`` has run, as apex did.
    """
    handle = _amp_state.handle
    with handle._disable_casts():
        yield
