"""Argument casting for user functions under O1: apex's half / float / promote wrappers.

Used by ``amp.register_*_function`` and the ``amp.*_function`` decorators, and by the
torch function mode of ``apexcompat._autocast`` (CPU fix-ups, torch-owned registrations).
A wrapped function casts only while the calling thread has an O1 scope with casts enabled;
otherwise it runs unchanged.  Tensors on another device type than the O1 scope's are left
alone (apex likewise touched only CUDA tensors).
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Tuple

import torch

from .. import _autocast
from .._autocast import FLOAT, HALF, PROMOTE

__all__ = ["HALF", "FLOAT", "PROMOTE", "cast_args", "make_cast_wrapper", "is_cast_wrapper"]


def _is_fp_tensor(x: Any) -> bool:
    """A floating tensor, or a list/tuple made only of them (apex's rule)."""
    if isinstance(x, (list, tuple)):
        return all(_is_fp_tensor(y) for y in x)
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _type_string(x: torch.Tensor) -> str:
    # apex reported dtypes by legacy tensor type name, e.g. "HalfTensor".
    return x.type().split(".")[-1]


def _cast_tree(x: Any, cast: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_cast_tree(y, cast) for y in x)
    return cast(x)


def _half_caster(scope: "_autocast.O1Scope") -> Callable[[torch.Tensor], torch.Tensor]:
    target = scope.dtype

    def cast(x: torch.Tensor) -> torch.Tensor:
        if x.device.type != scope.device_type or x.dtype == target:
            return x
        if isinstance(x, torch.nn.Parameter) and x.dtype == torch.float32:
            return scope.cached_half(x)
        return x.to(target)

    return cast


def _float_caster(scope: "_autocast.O1Scope") -> Callable[[torch.Tensor], torch.Tensor]:
    def cast(x: torch.Tensor) -> torch.Tensor:
        if x.device.type != scope.device_type or x.dtype == torch.float32:
            return x
        return x.float()

    return cast


def _fp_types(args: Tuple[Any, ...], kwargs: Dict[str, Any], device_type: str) -> set:
    types = set()

    def visit(x: Any) -> None:
        if isinstance(x, (list, tuple)):
            for y in x:
                visit(y)
        elif isinstance(x, torch.Tensor) and x.is_floating_point() and x.device.type == device_type:
            types.add(x.dtype)

    for x in args:
        visit(x)
    for x in kwargs.values():
        visit(x)
    return types


def _cast_all(args, kwargs, cast):
    new_args = tuple(_cast_tree(x, cast) if _is_fp_tensor(x) else x for x in args)
    new_kwargs = {k: (_cast_tree(v, cast) if _is_fp_tensor(v) else v) for k, v in kwargs.items()}
    return new_args, new_kwargs


def cast_args(policy: str, args: Tuple[Any, ...], kwargs: Dict[str, Any], scope) -> Tuple[tuple, dict]:
    """Apply ``policy`` (HALF, FLOAT or PROMOTE) to a call's arguments for ``scope``."""
    if policy == HALF:
        return _cast_all(args, kwargs, _half_caster(scope))
    if policy == FLOAT:
        return _cast_all(args, kwargs, _float_caster(scope))
    if policy == PROMOTE:
        types = _fp_types(args, kwargs, scope.device_type)
        if len(types) <= 1:
            return tuple(args), dict(kwargs)
        if types == {scope.dtype, torch.float32}:
            return _cast_all(args, kwargs, _float_caster(scope))
        names = {_type_string(torch.empty(0, dtype=t)) for t in types}
        raise NotImplementedError(f"Do not know how to handle these types to promote: {names}")
    raise ValueError(f"unknown cast policy {policy!r}")


_WRAPPED_POLICY = "__apexcompat_cast_policy__"


def make_cast_wrapper(fn: Callable, policy: str) -> Callable:
    """Wrap ``fn`` so that, while the calling thread has an O1 scope with casts enabled, its
    floating tensor arguments are cast by ``policy`` first.  Otherwise ``fn`` runs as is."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        scope = _autocast.current_scope()
        if scope is None or not scope.casts_enabled():
            return fn(*args, **kwargs)
        new_args, new_kwargs = cast_args(policy, args, kwargs, scope)
        return fn(*new_args, **new_kwargs)

    setattr(wrapper, _WRAPPED_POLICY, policy)
    return wrapper


def is_cast_wrapper(fn: Any) -> bool:
    """Whether ``fn`` was produced by :func:`make_cast_wrapper`."""
    return hasattr(fn, _WRAPPED_POLICY)
