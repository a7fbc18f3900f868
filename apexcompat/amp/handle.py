"""``amp.scale_loss``: scale the loss for backward, then unscale, check and update the
loss scaler, and install apex's one-shot skip on ``optimizer.step`` after an overflow
(spec §5)."""

from __future__ import annotations

import contextlib
import types
from typing import Any, Iterator

import torch

from ._amp_state import _amp_state, maybe_print
from ..doctor.core import doctor

__all__ = ["scale_loss"]

_NOT_INITIALIZED = (
    "Invoked 'with amp.scale_loss`, but internal Amp state has not been initialized.  "
    "model, optimizer = amp.initialize(model, optimizer, opt_level=...) must be called "
    "before `with amp.scale_loss`."
)
_CLOSURE_ERROR = "Currently, Amp does not support closure use with optimizers."
_OVERFLOW_LINE = "Gradient overflow.  Skipping step, loss scaler {} reducing loss scale to {}"


def _is_single_optimizer(optimizers: Any) -> bool:
    """An optimizer or an optimizer-like wrapper (e.g. apex's LARC), not a collection."""
    if isinstance(optimizers, torch.optim.Optimizer):
        return True
    return not isinstance(optimizers, (list, tuple)) and hasattr(optimizers, "param_groups")


def _clear_o1_cache() -> None:
    handle = getattr(_amp_state, "handle", None)
    if handle is not None and hasattr(handle, "_clear_cache"):
        handle._clear_cache()


def _casts_off():
    """O1: switch autocast's casts off around the user's block (backward must not be cast;
    the thread-wide O1 region would otherwise reach autograd's backward ops)."""
    handle = getattr(_amp_state, "handle", None)
    if handle is None or not hasattr(handle, "_disable_casts"):
        return contextlib.nullcontext()
    return handle._disable_casts()


def _install_skip(optimizer: Any, scaler: Any, loss_id: int) -> None:
    """Replace ``optimizer.step`` by a one-shot function that skips the step, prints the
    overflow line with the scaler's scale *at call time*, and restores the previous step."""
    had_own_step = "step" in vars(optimizer)
    previous_step = optimizer.step

    def skip_step(self, closure=None):
        if closure is not None:
            raise RuntimeError(_CLOSURE_ERROR)
        maybe_print(_OVERFLOW_LINE.format(loss_id, scaler.loss_scale()))
        stash = self._amp_stash
        for master in getattr(stash, "all_fp32_from_fp16_params", ()):
            master.grad = None
        if had_own_step:
            self.step = previous_step
        else:
            del self.step
        stash.already_patched = False

    # A bound method (like torch's own ``step``), so wrappers that look at ``step.__func__``
    # (e.g. LR schedulers created while a skip is pending) keep working.
    optimizer.step = types.MethodType(skip_step, optimizer)
    optimizer._amp_stash.already_patched = True


@contextlib.contextmanager
def scale_loss(
    loss: Any,
    optimizers: Any,
    loss_id: int = 0,
    model: Any = None,
    delay_unscale: bool = False,
    delay_overflow_check: bool = False,
) -> Iterator[Any]:
    """Yield ``loss.float() * loss_scale`` for ``backward()``; on exit unscale the grads of
    ``optimizers`` (one or a list), check them for inf/nan and update scaler ``loss_id``.
    After an overflow the next ``optimizer.step()`` is skipped and logs apex's line::

        import torch
        from apexcompat import amp

        model = torch.nn.Linear(4, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss = model(torch.randn(8, 4)).float().pow(2).mean()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

    Under O1 the block runs with autocast's casts off, so ``backward()`` computes in the
    dtypes of the forward pass, as with apex (whose patches never touched backward).
    """
    if not hasattr(_amp_state, "opt_properties"):
        raise RuntimeError(_NOT_INITIALIZED)
    if not _amp_state.opt_properties.enabled:
        yield loss
        return

    if _is_single_optimizer(optimizers):
        optimizers = [optimizers]

    scaler = _amp_state.loss_scalers[loss_id]
    scale = scaler.loss_scale()

    if not _amp_state.opt_properties.master_weights and not scaler.dynamic and scale == 1.0:
        # Short-cut: nothing to unscale or check, the scaler is not updated.
        with _casts_off():
            yield loss.float()
        _clear_o1_cache()
        return

    if not delay_unscale and isinstance(optimizers, list):
        for optimizer in optimizers:
            if not optimizer._amp_stash.params_have_scaled_gradients:
                optimizer._prepare_amp_backward()

    with _casts_off():
        yield loss.float() * scale

    if delay_unscale:
        for optimizer in optimizers:
            optimizer._amp_stash.params_have_scaled_gradients = True
    else:
        scaler.clear_overflow_state()
        for optimizer in optimizers:
            optimizer._post_amp_backward(scaler)
            optimizer._amp_stash.params_have_scaled_gradients = False
        should_skip = False if delay_overflow_check else scaler.update_scale()
        if should_skip or doctor.armed is not None:
            # The overflow doctor works only after a skip (or for one armed step after it).
            doctor.after_check(loss_id, scaler, loss, optimizers, should_skip)
        if should_skip:
            for optimizer in optimizers:
                if not optimizer._amp_stash.already_patched:
                    _install_skip(optimizer, scaler, loss_id)
    _clear_o1_cache()
