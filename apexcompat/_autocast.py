"""The thread-wide autocast region that stands in for apex's O1 function patching.

apex O1 patched torch functions for the whole process from ``amp.initialize`` on, so every
op called afterwards -- in ``forward``, in loss code, in evaluation code, in models that were
never passed to ``initialize`` -- got apex's dtypes.  ``torch.autocast`` is a thread-local
context manager instead.  :class:`O1Scope` enters one ``torch.autocast`` region for the
calling thread when O1 is initialised and keeps it open until amp's state is reset, which
gives apex's scope for everything that runs in that thread (see ``docs`` / spec §12).

Other threads are not affected: autocast state is per thread in torch.  Work done in other
threads (``nn.DataParallel`` replicas, user thread pools) runs in its natural dtypes unless
that thread enters autocast itself.

Because the region outlives a training step, torch's weight-cast cache (which torch clears
only when the outermost autocast region exits) would keep fp16 copies of weights that the
optimizer has since updated; :meth:`O1Scope.clear_cache` drops them and is called at every
``scale_loss`` exit and after every optimizer step.  On torch releases whose cache reuses
casts made under ``no_grad`` for grad-enabled ops (pytorch#112583) the region runs with the
cache off.

Optionally (``APEXCOMPAT_CPU_FP32_FIXUPS=1`` or :func:`set_cpu_fp32_fixups`), a torch
function mode makes CPU float16 autocast run the ops that CUDA autocast keeps in float32
(softmax, log_softmax, layer_norm, exp, log, sum, pow, cumsum, norm, ...) in float32 too.  It
is off by default because it costs a Python call per torch function (measured in
``differences.md``).  The same mode routes user registrations of torch-owned functions
(``amp.register_float_function(torch, "sigmoid")``) without patching torch.
"""

from __future__ import annotations

import os
import threading
from typing import Callable, Dict, Optional, Tuple

import torch
from torch.overrides import TorchFunctionMode

from . import _compat

# Policies a function can have in the cast mode (also used by apexcompat.amp.wrap).
HALF, FLOAT, PROMOTE = "half", "float", "promote"


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


_cpu_fp32_fixups = _env_flag("APEXCOMPAT_CPU_FP32_FIXUPS")


def set_cpu_fp32_fixups(enabled: bool) -> None:
    """Opt in (or out) of float32 fix-ups for CPU float16 O1 (applies from the next O1
    ``initialize``).  Off by default: see the module docstring."""
    global _cpu_fp32_fixups
    _cpu_fp32_fixups = bool(enabled)


def cpu_fp32_fixups_enabled() -> bool:
    """Whether the next CPU float16 O1 scope will install the float32 fix-ups."""
    return _cpu_fp32_fixups


class _CastMode(TorchFunctionMode):
    """Applies a per-function cast policy to torch functions called in this thread.

    Only the functions in ``policies`` are touched; everything else is passed straight
    through.  ``cast_args`` is the policy implementation from ``apexcompat.amp.wrap``.
    """

    def __init__(self, policies: Dict[Callable, str], cast_args: Callable, scope: "O1Scope"):
        super().__init__()
        self.policies = policies
        self._cast_args = cast_args
        self._scope = scope

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        policy = self.policies.get(func)
        if policy is not None and self._scope.casts_enabled():
            args, kwargs = self._cast_args(policy, args, kwargs, self._scope)
        return func(*args, **kwargs)


class O1Scope:
    """One thread's long-lived ``torch.autocast`` region (plus the optional cast mode)."""

    def __init__(self, device_type: str, dtype: torch.dtype) -> None:
        self.device_type = device_type
        self.dtype = dtype
        self.thread_id = threading.get_ident()
        self._region: Optional[torch.autocast] = None
        self._mode: Optional[_CastMode] = None
        self._policies: Dict[Callable, str] = {}
        self._cast_args: Optional[Callable] = None
        # fp16 casts of fp32 Parameters made by user-function wrappers:
        # id(param) -> (param, param._version at cast time, cast)
        self._half_cache: Dict[int, Tuple[torch.Tensor, int, torch.Tensor]] = {}

    # -- lifetime -----------------------------------------------------------------------

    def enter(self) -> None:
        """Turn autocast on for ``device_type`` in the calling thread, until :meth:`exit`."""
        if self._region is not None:
            return
        # Where torch's weight-cast cache hands casts made under no_grad to later
        # grad-enabled ops of the same region (pytorch#112583, torch <= 2.4 at least), a
        # region spanning eval and training code must not cache at all.
        cache_enabled = not _compat.autocast_cache_reuses_no_grad_casts()
        region = torch.autocast(self.device_type, dtype=self.dtype, cache_enabled=cache_enabled)
        region.__enter__()
        self._region = region

    def exit(self) -> None:
        """Leave the region (restoring the autocast state seen at :meth:`enter`) and drop
        the cast mode.  A no-op when called from another thread: autocast state belongs to
        the thread that entered it."""
        if threading.get_ident() != self.thread_id:
            return
        self._pop_mode()
        region, self._region = self._region, None
        if region is not None:
            region.__exit__(None, None, None)
        self.clear_cache()

    def is_active(self) -> bool:
        """True while the region is open (casts may be temporarily disabled)."""
        return self._region is not None

    def casts_enabled(self) -> bool:
        """True when the calling thread is this scope's thread and autocast is on for the
        device (i.e. not inside ``amp.disable_casts()``)."""
        return (
            self._region is not None
            and threading.get_ident() == self.thread_id
            and _compat.is_autocast_enabled(self.device_type)
        )

    # -- caching ----------------------------------------------------------------------------

    def clear_cache(self) -> None:
        """Drop torch's cached low-precision copies of weights (this thread's cache) and
        the user-function wrappers' cache."""
        torch.clear_autocast_cache()
        self._half_cache.clear()

    def cached_half(self, param: torch.Tensor) -> torch.Tensor:
        """``param`` cast to the scope's dtype, reused until :meth:`clear_cache` (apex's
        parameter cache for half functions).  A cast made under ``no_grad`` is not reused
        for a grad-enabled call, and one made before an in-place update of the parameter
        is never reused."""
        entry = self._half_cache.get(id(param))
        if entry is not None:
            source, version, cast = entry
            fresh = source is param and version == param._version
            grad_mismatch = torch.is_grad_enabled() and param.requires_grad != cast.requires_grad
            if fresh and not grad_mismatch:
                return cast
        cast = param.to(self.dtype)
        self._half_cache[id(param)] = (param, param._version, cast)
        return cast

    # -- disabling ----------------------------------------------------------------------------

    def casts_disabled(self) -> torch.autocast:
        """A context manager that turns autocast off for this scope's device inside it.

        Nested inside the long-lived region, so leaving it does not clear the weight-cast
        cache; it restores whatever state it found (exception-safe)."""
        return torch.autocast(self.device_type, enabled=False)

    # -- the cast mode (CPU fix-ups, torch-owned user registrations) -----------------------

    def set_policies(self, policies: Dict[Callable, str], cast_args: Callable) -> None:
        """Install (or, with an empty mapping, remove) the torch function mode applying
        ``policies`` in this thread."""
        if threading.get_ident() != self.thread_id:
            return
        self._policies = dict(policies)
        self._cast_args = cast_args
        if not self._policies:
            self._pop_mode()
            return
        if self._mode is None:
            mode = _CastMode(self._policies, cast_args, self)
            mode.__enter__()
            self._mode = mode
        else:
            self._mode.policies = self._policies
            self._mode._cast_args = cast_args

    def _pop_mode(self) -> None:
        mode, self._mode = self._mode, None
        if mode is not None:
            mode.__exit__(None, None, None)


# One scope per thread that ran an O1 initialize.
_scopes: Dict[int, O1Scope] = {}
_lock = threading.Lock()


def current_scope() -> Optional[O1Scope]:
    """The calling thread's O1 scope, if one is open."""
    scope = _scopes.get(threading.get_ident())
    return scope if scope is not None and scope.is_active() else None


def activate(device_type: str, dtype: torch.dtype) -> O1Scope:
    """Open (or reuse) the calling thread's O1 scope for ``device_type``/``dtype``.

    A second O1 ``initialize`` with the same device and dtype reuses the open region instead
    of stacking another one; a different device or dtype replaces it.
    """
    tid = threading.get_ident()
    with _lock:
        scope = _scopes.get(tid)
        if scope is not None and scope.is_active():
            if scope.device_type == device_type and scope.dtype == dtype:
                return scope
            scope.exit()
        scope = O1Scope(device_type, dtype)
        scope.enter()
        _scopes[tid] = scope
        return scope


def deactivate() -> None:
    """Close the calling thread's scope (and forget scopes of other threads, which can
    only be closed from their own thread).  Registered as an amp reset hook."""
    tid = threading.get_ident()
    with _lock:
        scope = _scopes.pop(tid, None)
        if scope is not None:
            scope.exit()
        _scopes.clear()
