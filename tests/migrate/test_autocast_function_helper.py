"""The ``autocast_function(dtype)`` helper the casting-hooks rule writes for
``@amp.half_function``/``@amp.float_function`` (``rules/casting_hooks.HELPER``), run on
CPU: autocast reported on and its switch a no-op, CUDA tensors stood in for by a tensor
subclass.  It casts what apex's decorators cast: a floating tensor argument, or a list or
tuple holding nothing but floating tensors (at any depth, keeping its type), positional or
keyword; a dict, a list with anything else in it and CPU tensors pass unchanged."""

from __future__ import annotations

import contextlib
import functools
import types
from typing import Any, Dict

import pytest

from migrate.rules.casting_hooks import HELPER

torch = pytest.importorskip("torch")


class _OnCuda(torch.Tensor):
    """A CPU tensor the helper takes for a CUDA one."""

    @property
    def is_cuda(self) -> bool:  # type: ignore[override]
        return True


def _cuda(*shape: int) -> Any:
    return torch.ones(*shape).as_subclass(_OnCuda)


def _helper() -> Any:
    fake = types.SimpleNamespace(
        is_autocast_enabled=lambda *a: True,
        autocast=lambda *a, **k: contextlib.nullcontext(),
        is_tensor=torch.is_tensor,
    )
    namespace: Dict[str, Any] = {"torch": fake, "functools": functools}
    exec(compile(HELPER, "helper.py", "exec"), namespace)
    return namespace["autocast_function"]


def _dtypes(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return type(value)(_dtypes(v) for v in value)
    if isinstance(value, dict):
        return {k: _dtypes(v) for k, v in value.items()}
    return value.dtype if torch.is_tensor(value) else value


def test_the_helper_casts_what_apex_casts() -> None:
    seen = _helper()(torch.float16)(lambda *args, **kwargs: (_dtypes(args), _dtypes(kwargs)))
    half, single = torch.float16, torch.float32
    args, kwargs = seen(
        _cuda(2), [_cuda(2), (_cuda(1), _cuda(1))], (_cuda(2),), [_cuda(2), 3], {"a": _cuda(2)}, torch.ones(2),
        torch.ones(2, dtype=torch.int64).as_subclass(_OnCuda), listed=[_cuda(1)], plain=_cuda(1),
    )
    assert args == (half, [half, (half, half)], (half,), [single, 3], {"a": single}, single, torch.int64)
    assert kwargs == {"listed": [half], "plain": half}
