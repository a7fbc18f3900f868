"""Unit tests for apexcompat._compat: every helper agrees with what torch really does."""

from __future__ import annotations

import warnings

import pytest
import torch
from packaging.version import Version

from apexcompat import _compat

TORCH = _compat.torch_version()


@pytest.fixture
def no_torch_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        warnings.simplefilter("error", FutureWarning)
        yield


def test_torch_version_drops_local_suffix():
    assert TORCH == Version(torch.__version__.split("+")[0])
    assert TORCH.local is None


@pytest.mark.parametrize(
    "device, expected",
    [("cpu", "cpu"), ("cuda", "cuda"), ("cuda:1", "cuda"), (torch.device("cuda", 0), "cuda")],
)
def test_device_type_of(device, expected):
    assert _compat.device_type_of(device) == expected


def test_is_autocast_enabled_tracks_cpu_region(no_torch_warnings):
    assert _compat.is_autocast_enabled("cpu") is False
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert _compat.is_autocast_enabled("cpu") is True
        # A CPU region says nothing about CUDA.
        assert _compat.is_autocast_enabled("cuda") is False
        with torch.autocast("cpu", enabled=False):
            assert _compat.is_autocast_enabled("cpu") is False
        assert _compat.is_autocast_enabled("cpu") is True
    assert _compat.is_autocast_enabled("cpu") is False


def test_get_autocast_dtype_defaults_and_region(no_torch_warnings):
    assert _compat.get_autocast_dtype("cpu") == torch.bfloat16
    assert _compat.get_autocast_dtype("cuda") == torch.float16
    if _compat.cpu_float16_autocast_supported():
        with torch.autocast("cpu", dtype=torch.float16):
            assert _compat.get_autocast_dtype("cpu") == torch.float16
        assert _compat.get_autocast_dtype("cpu") == torch.bfloat16


def test_set_autocast_enabled_and_dtype_round_trip(no_torch_warnings):
    before_dtype = _compat.get_autocast_dtype("cpu")
    try:
        _compat.set_autocast_dtype("cpu", torch.bfloat16)
        _compat.set_autocast_enabled("cpu", True)
        assert _compat.is_autocast_enabled("cpu") is True
        a = torch.ones(2, 2)
        assert torch.mm(a, a).dtype == torch.bfloat16
    finally:
        _compat.set_autocast_enabled("cpu", False)
        _compat.set_autocast_dtype("cpu", before_dtype)
        torch.clear_autocast_cache()
    assert _compat.is_autocast_enabled("cpu") is False
    assert torch.mm(torch.ones(2, 2), torch.ones(2, 2)).dtype == torch.float32


def test_unknown_device_state_is_a_clear_error():
    with pytest.raises((RuntimeError, ValueError)):
        _compat.is_autocast_enabled("no_such_device")


def test_cpu_float16_autocast_probe_matches_torch(no_torch_warnings):
    supported = _compat.cpu_float16_autocast_supported()
    assert supported == (TORCH >= Version("2.2"))
    if supported:
        a = torch.ones(3, 3)
        with torch.autocast("cpu", dtype=torch.float16):
            assert torch.mm(a, a).dtype == torch.float16
    # Probing inside an active region leaves it untouched.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        _compat.cpu_float16_autocast_supported.cache_clear()
        assert _compat.cpu_float16_autocast_supported() == supported
        assert _compat.get_autocast_dtype("cpu") == torch.bfloat16
        assert _compat.is_autocast_enabled("cpu") is True


def test_cpu_half_matmul_probe_matches_torch():
    supported = _compat.cpu_half_matmul_supported()
    assert supported == (TORCH >= Version("2.2"))
    lin = torch.nn.Linear(3, 2).half()
    x = torch.ones(4, 3, dtype=torch.float16)
    if supported:
        lin(x).sum().backward()
        assert lin.weight.grad.dtype == torch.float16
    else:
        with pytest.raises(RuntimeError):
            lin(x)


def test_unscale_kernel_probe_cpu(no_torch_warnings):
    has_kernel = _compat.has_amp_unscale_kernel("cpu")
    assert has_kernel == (TORCH >= Version("2.3"))
    grads = [torch.tensor([8.0, float("nan")]), torch.tensor([16.0])]
    found_inf = torch.zeros(1)
    if has_kernel:
        torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, torch.full((1,), 0.125))
        assert found_inf.item() == 1.0
        assert grads[1].item() == 2.0
    else:
        with pytest.raises(NotImplementedError):
            torch._amp_foreach_non_finite_check_and_unscale_(grads, found_inf, torch.full((1,), 0.125))


def test_unscale_kernel_probe_is_cached_per_device_type():
    _compat._has_amp_unscale_kernel.cache_clear()
    first = _compat.has_amp_unscale_kernel("cpu")
    assert _compat.has_amp_unscale_kernel(torch.device("cpu")) == first
    info = _compat._has_amp_unscale_kernel.cache_info()
    assert (info.misses, info.hits) == (1, 1)


def test_unscale_kernel_probe_cuda_follows_availability(no_torch_warnings):
    assert _compat.has_amp_unscale_kernel("cuda") == torch.cuda.is_available()


@pytest.mark.parametrize("use_fused", [True, False])
def test_foreach_copy_converts_dtypes(monkeypatch, use_fused):
    if use_fused and not _compat.has_foreach_copy():
        pytest.skip(f"torch {TORCH} has no _foreach_copy_")
    monkeypatch.setattr(_compat, "has_foreach_copy", lambda: use_fused)
    src = [torch.tensor([1.5, -2.25], dtype=torch.float16), torch.tensor([3.0], dtype=torch.float16)]
    dst = [torch.zeros(2), torch.zeros(1)]
    _compat.foreach_copy_(dst, src)
    assert [d.dtype for d in dst] == [torch.float32, torch.float32]
    assert dst[0].tolist() == [1.5, -2.25] and dst[1].tolist() == [3.0]
    _compat.foreach_copy_([], [])


def test_has_foreach_copy_matches_torch():
    assert _compat.has_foreach_copy() == hasattr(torch, "_foreach_copy_")
    assert _compat.has_foreach_copy() == (TORCH >= Version("2.1"))


def test_grad_scaler_class(no_torch_warnings):
    cls = _compat.grad_scaler_class()
    if TORCH >= Version("2.3"):
        assert cls is torch.amp.GradScaler
        assert _compat.has_device_generic_grad_scaler()
    else:
        assert cls is torch.cuda.amp.GradScaler
        assert not _compat.has_device_generic_grad_scaler()


def test_new_grad_scaler_cpu_skips_an_overflow(no_torch_warnings):
    if not _compat.grad_scaler_supports_device("cpu"):
        assert TORCH < Version("2.3")
        with pytest.raises(RuntimeError, match="2.3"):
            _compat.new_grad_scaler("cpu")
        return
    scaler = _compat.new_grad_scaler("cpu", init_scale=65536.0, growth_interval=1)
    param = torch.nn.Parameter(torch.ones(2))
    opt = torch.optim.SGD([param], lr=1.0)
    scaler.scale(param.sum()).backward()
    param.grad[0] = float("inf")
    assert scaler.step(opt) is None
    scaler.update()
    assert param.tolist() == [1.0, 1.0]
    assert scaler.get_scale() == 32768.0
    opt.zero_grad()
    scaler.scale(param.sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert param.tolist() == [0.0, 0.0]
    assert scaler.get_scale() == 65536.0


def test_new_grad_scaler_cuda_without_gpu_is_disabled_not_deprecated():
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        scaler = _compat.new_grad_scaler("cuda")
    assert not scaler.is_enabled()
    assert not [w for w in caught if issubclass(w.category, (DeprecationWarning, FutureWarning))]
    assert _compat.grad_scaler_supports_device("cuda") is False


def test_state_dict_post_hook_edits_every_module_in_place(no_torch_warnings):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Sequential(torch.nn.Linear(2, 1))).half()
    seen = []

    def upcast(module, state_dict, prefix, local_metadata):
        seen.append(prefix)
        for name, _ in module.named_parameters(recurse=False):
            state_dict[prefix + name] = state_dict[prefix + name].float()

    handles = [_compat.register_state_dict_post_hook(m, upcast) for m in model.modules()]
    sd = model.state_dict()
    assert sorted(seen) == ["", "0.", "1.", "1.0."]
    assert {v.dtype for v in sd.values()} == {torch.float32}
    for handle in handles:
        handle.remove()
    assert {v.dtype for v in model.state_dict().values()} == {torch.float16}


def test_autocast_cache_probe_matches_a_training_forward_after_eval():
    reuses = _compat.autocast_cache_reuses_no_grad_casts()
    assert reuses == (TORCH < Version("2.11"))  # measured in every minor 2.2-2.15
    lin = torch.nn.Linear(2, 2)
    x = torch.ones(3, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.no_grad():
            lin(x)
        out = lin(x)
    assert out.requires_grad is not reuses
    # The documented workaround: no caching for the no-grad forward.
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, cache_enabled=False):
            lin(x)
        out = lin(x)
    assert out.requires_grad


def test_autocast_cache_probe_leaves_an_enclosing_region_working():
    lin = torch.nn.Linear(2, 2)
    x = torch.ones(3, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        _compat.autocast_cache_reuses_no_grad_casts.cache_clear()
        _compat.autocast_cache_reuses_no_grad_casts()
        assert _compat.is_autocast_enabled("cpu")
        out = lin(x)
    assert out.dtype == torch.bfloat16 and out.requires_grad
    out.float().sum().backward()
    assert lin.weight.grad is not None
