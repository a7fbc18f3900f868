"""``@amp.half_function`` / ``float_function`` / ``promote_function`` (spec §8.2) and
``amp.disable_casts`` before initialize (spec §8.3): replays of ``api/decorators`` and the
``disable_casts`` entry of ``api/before_initialize``."""

from __future__ import annotations

import json
import re
import warnings

import pytest
import torch

from apexcompat import amp
from conftest import golden_files, golden_params

DECORATOR_TRACES = {n for n in golden_files("api") if n.startswith("decorators")}
_DTYPES = {"f16": torch.float16, "f32": torch.float32}


def _decorated():
    @amp.half_function
    def half_fn(*tensors):
        return tensors[0] * 1

    @amp.float_function
    def float_fn(*tensors):
        return tensors[0] * 1

    @amp.promote_function
    def promote_fn(*tensors):
        return tensors[0] * 1

    return {"half": half_fn, "float": float_fn, "promote": promote_fn}


def _call(fns, key: str) -> str:
    match = re.match(r"^(half|float|promote)_function\(([^)]*)\)( .*)?$", key)
    if match is None:
        raise AssertionError(f"replay does not know trace key {key!r}")
    kind, args, rest = match.group(1), match.group(2), (match.group(3) or "").strip()
    tensors = [torch.rand(3, dtype=_DTYPES[a.strip()]) for a in args.split(",")]
    if rest == "inside disable_casts":
        with amp.disable_casts():
            return str(fns[kind](*tensors).dtype)
    if rest not in ("", "before initialize"):
        raise AssertionError(f"replay does not know trace key {key!r}")
    return str(fns[kind](*tensors).dtype)


@golden_params("api", names=DECORATOR_TRACES)
def test_decorators_golden(golden_path):
    expected = json.loads(golden_path.read_text())["result"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # §12: no deprecation warning when decorating
        fns = _decorated()
    got = {"before": {key: _call(fns, key) for key in expected["before"]}}
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    got["after_O1_initialize"] = {key: _call(fns, key) for key in expected["after_O1_initialize"]}
    assert got == expected


@pytest.mark.parametrize("opt_level", ["O0", "O2", "O3"])
def test_decorators_do_nothing_at_other_opt_levels(opt_level):
    fns = _decorated()
    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level=opt_level, verbosity=0)
    assert fns["half"](torch.rand(2)).dtype == torch.float32
    assert fns["float"](torch.rand(2).half()).dtype == torch.float16


def test_decorated_function_keeps_its_name_and_doc():
    @amp.float_function
    def loss_fn(x):
        """My loss."""
        return x

    assert loss_fn.__name__ == "loss_fn" and loss_fn.__doc__ == "My loss."


def test_disable_casts_before_initialize_golden():
    expected = json.loads(golden_files("api")["before_initialize"].read_text())["result"]["disable_casts"]
    with pytest.raises(Exception) as info:
        with amp.disable_casts():
            pass
    got = {"status": "error", "value_or_error": {"type": type(info.value).__name__, "message": str(info.value)}}
    assert got == expected


def test_disable_casts_turns_autocast_off_and_back_on():
    from apexcompat import _compat

    model = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    x = torch.rand(1, 2)
    with amp.disable_casts():
        assert not _compat.is_autocast_enabled("cpu")
        assert model(x).dtype == torch.float32
        with amp.disable_casts():  # nesting
            pass
        assert not _compat.is_autocast_enabled("cpu")
    assert _compat.is_autocast_enabled("cpu")
    with pytest.raises(KeyError):
        with amp.disable_casts():
            raise KeyError("boom")
    assert model(x).dtype == torch.float16  # restored after an exception too
