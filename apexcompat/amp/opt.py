"""The old API's optimizer wrapper (``handle.wrap_optimizer``), kept only so old scripts fail
with apex's own message.

apex's last releases already refused the old API at ``scale_loss``; the wrapper here
forwards everything to the wrapped optimizer and raises that same error from
``scale_loss``.  Use ``amp.initialize`` + ``amp.scale_loss`` instead.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import torch

__all__ = ["OptimWrapper"]


class OptimWrapper:
    """Legacy ``handle.wrap_optimizer(optimizer, num_loss)`` result."""

    def __init__(self, optimizer: torch.optim.Optimizer, amp_handle: Any, num_loss: int) -> None:
        self._optimizer = optimizer
        self._amp_handle = amp_handle
        self._num_loss = num_loss

    @contextlib.contextmanager
    def scale_loss(self, loss: Any) -> Iterator[Any]:
        """Raises apex's "old Amp API is no longer supported" error on entry (O1 active)."""
        if not self._amp_handle.is_active():
            yield loss
            return
        from .amp import OLD_API_MESSAGE

        raise RuntimeError(OLD_API_MESSAGE)

    def step(self, closure: Any = None) -> Any:
        return self._optimizer.step(closure) if closure is not None else self._optimizer.step()

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._optimizer, attr)

    def __getstate__(self) -> Any:
        return self._optimizer.__getstate__()

    def __setstate__(self, state: Any) -> None:
        return self._optimizer.__setstate__(state)

    def __repr__(self) -> str:
        return self._optimizer.__repr__()

    def state_dict(self) -> Any:
        return self._optimizer.state_dict()

    def load_state_dict(self, state_dict: Any) -> Any:
        return self._optimizer.load_state_dict(state_dict)

    def zero_grad(self, *args: Any, **kwargs: Any) -> Any:
        return self._optimizer.zero_grad(*args, **kwargs)

    def add_param_group(self, param_group: Any) -> Any:
        return self._optimizer.add_param_group(param_group)
