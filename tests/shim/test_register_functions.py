"""``amp.register_{half,float,promote}_function``: replay of ``api/register_functions`` and
the rules of spec §8.1 (queued, applied by the next O1 initialize, no effect otherwise)."""

from __future__ import annotations

import re
import types

import pytest
import torch

from apexcompat import amp
from conftest import golden_files, golden_params

REGISTER_TRACES = {n for n in golden_files("api") if n.startswith("register_functions")}
_REGISTER = {
    "half": amp.register_half_function,
    "float": amp.register_float_function,
    "promote": amp.register_promote_function,
}


def _user_module() -> types.ModuleType:
    """A module like a user's ``user_ops.py`` with one function per policy."""
    module = types.ModuleType("user_ops")
    for kind in ("half", "float", "promote", "late"):
        setattr(module, f"{kind}_fn", lambda *tensors: tensors[0] * 1)
    return module


def _tensors(spec: str):
    dtypes = {"f16": torch.float16, "f32": torch.float32}
    return [torch.rand(3, dtype=dtypes[name.strip()]) for name in spec.split(",")]


def _o1(verbosity: int = 0):
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return amp.initialize(model, optimizer, opt_level="O1", verbosity=verbosity)


def _error(exc: BaseException) -> dict:
    return {"type": type(exc).__name__, "message": str(exc)}


@golden_params("api", names=REGISTER_TRACES)
def test_register_functions_golden(golden_path):
    import json

    expected = json.loads(golden_path.read_text())["result"]
    user_ops = _user_module()
    got = {}
    calls = {}
    for key in expected:
        match = re.match(r"^(half|float|promote)_function\((.*)\) ->$", key)
        if match:
            kind, args = match.groups()
            _REGISTER[kind](user_ops, f"{kind}_fn")
            calls[key] = (f"{kind}_fn", args)
        elif key == "register_missing_name_error":
            with pytest.raises(Exception) as info:
                amp.register_half_function(user_ops, "nope")
            got[key] = _error(info.value)
        elif not re.match(r"^registered_after_initialize\((.*)\) ->$", key):
            raise AssertionError(f"replay does not know trace key {key!r}")
    _o1()
    for key in expected:
        match = re.match(r"^registered_after_initialize\((.*)\) ->$", key)
        if match:
            amp.register_half_function(user_ops, "late_fn")
            calls[key] = ("late_fn", match.group(1))
    for key, (fn_name, args) in calls.items():
        got[key] = str(getattr(user_ops, fn_name)(*_tensors(args)).dtype)
    assert got == expected


def test_missing_name_message_uses_str_of_the_owner():
    class Ops:
        pass

    with pytest.raises(ValueError, match=r"^No function named nope in module .*Ops'>\.$"):
        amp.register_float_function(Ops, "nope")


def test_registration_waits_for_an_o1_initialize_and_is_consumed():
    user_ops = _user_module()
    original = user_ops.half_fn
    amp.register_half_function(user_ops, "half_fn")
    assert user_ops.half_fn is original  # queued only
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O2", verbosity=0)
    assert user_ops.half_fn is original  # no effect at O2
    _o1()
    assert user_ops.half_fn(torch.rand(2)).dtype == torch.float16
    from apexcompat.amp.amp import _USER_CAST_REGISTRY

    assert _USER_CAST_REGISTRY == []


def test_registered_function_runs_unchanged_inside_disable_casts_and_other_threads():
    import threading

    user_ops = _user_module()
    amp.register_half_function(user_ops, "half_fn")
    _o1()
    with amp.disable_casts():
        assert user_ops.half_fn(torch.rand(2)).dtype == torch.float32
    seen = []
    worker = threading.Thread(target=lambda: seen.append(user_ops.half_fn(torch.rand(2)).dtype))
    worker.start()
    worker.join()
    assert seen == [torch.float32]


def test_list_arguments_and_kwargs_are_cast():
    user_ops = types.ModuleType("user_ops")
    user_ops.cat_fn = lambda xs, other=None: (torch.cat(xs), other)
    amp.register_half_function(user_ops, "cat_fn")
    _o1()
    joined, other = user_ops.cat_fn([torch.rand(2), torch.rand(2)], other=torch.rand(2))
    assert joined.dtype == torch.float16 and other.dtype == torch.float16


def test_promote_with_three_float_types_raises_apex_error():
    user_ops = _user_module()
    amp.register_promote_function(user_ops, "promote_fn")
    _o1()
    with pytest.raises(NotImplementedError, match="^Do not know how to handle these types to promote: "):
        user_ops.promote_fn(torch.rand(2).half(), torch.rand(2), torch.rand(2).double())


def test_half_function_reuses_parameter_cast_until_cache_cleared():
    user_ops = types.ModuleType("user_ops")
    user_ops.ident = lambda w: w
    amp.register_half_function(user_ops, "ident")
    handle_model = _o1()
    weight = torch.nn.Parameter(torch.rand(3))
    first = user_ops.ident(weight)
    assert user_ops.ident(weight) is first
    with torch.no_grad():
        weight.add_(1.0)  # in-place update: the stale cast must not be reused
    updated = user_ops.ident(weight)
    assert updated is not first and torch.allclose(updated.float(), weight.detach(), atol=1e-2)
    amp._amp_state.handle._clear_cache()
    assert user_ops.ident(weight) is not updated
    del handle_model


def test_registering_a_torch_function_does_not_patch_torch():
    sigmoid = torch.sigmoid
    amp.register_float_function(torch, "sigmoid")
    _o1()
    assert torch.sigmoid is sigmoid
    half = torch.rand(3).half()
    assert torch.sigmoid(half).dtype == torch.float32
    assert torch.tanh(half).dtype == torch.float16  # only the registered function
    with amp.disable_casts():
        assert torch.sigmoid(half).dtype == torch.float16


def test_reset_restores_patched_attributes():
    from apexcompat.amp._amp_state import reset_state

    user_ops = _user_module()
    original = user_ops.float_fn
    amp.register_float_function(user_ops, "float_fn")
    _o1()
    assert user_ops.float_fn is not original
    reset_state()
    assert user_ops.float_fn is original
    assert torch.sigmoid(torch.rand(2).half()).dtype == torch.float16
