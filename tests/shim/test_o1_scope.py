"""The scope of O1 on torch.autocast (spec §12 "O1 scope"): after an O1 initialize every op
in the calling thread gets O1 dtypes -- loss code outside ``forward``, evaluation code,
models never passed to initialize -- other threads are unaffected, no stale weight casts are
ever used, and resetting amp turns autocast off again."""

from __future__ import annotations

import copy
import threading
import warnings

import pytest
import torch
import torch.nn.functional as F

from apexcompat import _compat, amp
from apexcompat.amp._amp_state import reset_state

needs_cpu_fp16 = pytest.mark.skipif(
    not _compat.cpu_float16_autocast_supported(), reason="CPU float16 autocast needs torch >= 2.2"
)
pytestmark = needs_cpu_fp16


def _mlp(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def _o1(model=None, lr=0.1):
    model = model if model is not None else _mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    return amp.initialize(model, optimizer, opt_level="O1", verbosity=0)


def _nesting_level() -> int:
    level = torch.autocast_increment_nesting() - 1
    torch.autocast_decrement_nesting()
    return level


def test_loss_code_outside_forward_and_models_not_passed_get_o1_dtypes():
    model, _ = _o1()
    x, target = torch.rand(2, 8), torch.rand(2, 4)
    out = model(x)
    assert out.dtype == torch.float16
    assert F.mse_loss(out, target).dtype == torch.float32  # loss computed outside forward
    assert F.cross_entropy(out, torch.tensor([0, 3])).dtype == torch.float32
    other = torch.nn.Linear(8, 3)  # never passed to initialize
    assert other(x).dtype == torch.float16
    with torch.no_grad():  # evaluation code
        assert torch.mm(x, x.t()).dtype == torch.float16
        assert (out.float() + out).dtype == torch.float32


def test_other_threads_are_not_affected():
    _o1()
    seen = {}

    def work():
        seen["mm"] = torch.mm(torch.rand(2, 2), torch.rand(2, 2)).dtype
        seen["enabled"] = _compat.is_autocast_enabled("cpu")

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert seen == {"mm": torch.float32, "enabled": False}
    assert torch.mm(torch.rand(2, 2), torch.rand(2, 2)).dtype == torch.float16


def test_initialize_in_a_worker_thread_leaves_the_main_thread_alone():
    seen = {}

    def work():
        _o1()
        seen["worker"] = torch.mm(torch.rand(2, 2), torch.rand(2, 2)).dtype

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert seen["worker"] == torch.float16
    assert not _compat.is_autocast_enabled("cpu")
    assert torch.mm(torch.rand(2, 2), torch.rand(2, 2)).dtype == torch.float32


def test_reset_state_turns_autocast_off_and_restores_the_dtype():
    dtype_before = _compat.get_autocast_dtype("cpu")
    _o1()
    assert _compat.is_autocast_enabled("cpu")
    assert _compat.get_autocast_dtype("cpu") == torch.float16
    reset_state()
    assert not _compat.is_autocast_enabled("cpu")
    assert _compat.get_autocast_dtype("cpu") == dtype_before
    assert _nesting_level() == 0
    assert not hasattr(amp._amp_state, "handle")


def test_second_o1_initialize_does_not_stack_regions():
    _o1()
    _o1()
    _o1()
    assert _nesting_level() == 1
    reset_state()
    assert _nesting_level() == 0
    assert not _compat.is_autocast_enabled("cpu")


def test_handle_interface():
    _o1()
    handle = amp._amp_state.handle
    assert type(handle).__name__ == "AmpHandle"
    assert handle.is_active()
    reset_state()
    assert not handle.is_active()


def _train_step(model, optimizer, x, y):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()


def test_eval_after_training_sees_updated_weights():
    model, optimizer = _o1(lr=0.5)
    x, y = torch.rand(4, 8), torch.rand(4, 4)
    for _ in range(3):
        _train_step(model, optimizer, x, y)
        with torch.no_grad():
            # an eval forward between backward and step fills the weight-cast cache ...
            optimizer.zero_grad()
            loss = F.mse_loss(model(x), y)
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                pass
            model(x)
        with amp.scale_loss(F.mse_loss(model(x), y), optimizer) as scaled_loss:
            scaled_loss.backward()
        model(x).sum()  # ... and so does a grad-mode forward after scale_loss
        optimizer.step()  # weights change: every cached cast is stale now
        with torch.no_grad():
            got = model(x)
            with amp.disable_casts():
                fresh = copy.deepcopy(model).half()(x.half())
        assert torch.equal(got, fresh)


def test_step_runs_with_casts_disabled_and_passes_the_closure_through():
    model, optimizer = _o1()
    seen = []

    def closure():
        seen.append(_compat.is_autocast_enabled("cpu"))
        return torch.tensor(1.5)

    inner_step = optimizer.step
    assert optimizer.step(closure) == torch.tensor(1.5)
    assert seen == [False]
    assert _compat.is_autocast_enabled("cpu")
    assert optimizer.step is not None and inner_step.__func__ is optimizer.step.__func__


def test_lr_scheduler_created_after_initialize_does_not_warn():
    model, optimizer = _o1()
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _train_step(model, optimizer, torch.rand(2, 8), torch.rand(2, 4))
        scheduler.step()


@pytest.mark.skipif(not _compat.grad_scaler_supports_device("cpu"), reason="CPU GradScaler needs torch >= 2.3")
def test_o1_training_matches_the_hand_written_native_loop():
    steps = 12
    data = [(torch.rand(16, 8), torch.rand(16, 4)) for _ in range(steps)]

    native = _mlp(seed=3)
    native_opt = torch.optim.SGD(native.parameters(), lr=0.05, momentum=0.9)
    scaler = _compat.new_grad_scaler("cpu", init_scale=2.0**16)
    for x, y in data:
        native_opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            loss = F.mse_loss(native(x), y)
        scaler.scale(loss).backward()
        scaler.step(native_opt)
        scaler.update()

    model = _mlp(seed=3)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
    for x, y in data:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)  # loss computed outside forward, as in the native loop
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()

    for got, want in zip(model.parameters(), native.parameters()):
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-7)
    assert not torch.equal(model[0].weight, _mlp(seed=3)[0].weight)  # it did train


def test_backward_inside_scale_loss_runs_uncast():
    """torch would apply the thread-wide autocast to backward ops; apex and the native loop
    run backward uncast, so scale_loss switches casts off around its block."""
    model, optimizer = _o1()
    seen = []
    out = model(torch.rand(2, 8))
    out.register_hook(lambda grad: seen.append(_compat.is_autocast_enabled("cpu")))
    with amp.scale_loss(F.mse_loss(out, torch.rand(2, 4)), optimizer) as scaled_loss:
        scaled_loss.backward()
    assert seen == [False]
    assert _compat.is_autocast_enabled("cpu")


def test_training_step_in_another_thread_warns_once():
    model, optimizer = _o1()
    caught = []

    def work():
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            for _ in range(2):
                _train_step(model, optimizer, torch.rand(2, 8), torch.rand(2, 4))
        caught.extend(str(w.message) for w in record if issubclass(w.category, RuntimeWarning))

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert len(caught) == 1 and "only in the thread that called amp.initialize" in caught[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _train_step(model, optimizer, torch.rand(2, 8), torch.rand(2, 4))  # own thread: silent


def test_region_caches_weight_casts_only_where_torch_keeps_no_grad_casts_apart(monkeypatch):
    """pytorch#112583 (torch <= 2.4 at least): a no_grad weight cast cached inside a region is
    reused by grad-enabled ops.  There the O1 region must run without the cache."""
    buggy = _compat.autocast_cache_reuses_no_grad_casts()
    _o1()
    assert torch.is_autocast_cache_enabled() is (not buggy)
    reset_state()
    monkeypatch.setattr(_compat, "autocast_cache_reuses_no_grad_casts", lambda: True)
    model, optimizer = _o1()
    assert not torch.is_autocast_cache_enabled()
    x, y = torch.rand(2, 8), torch.rand(2, 4)
    with torch.no_grad():
        model(x)
    loss = F.mse_loss(model(x), y)
    assert loss.requires_grad
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    assert all(p.grad is not None for p in model.parameters())
    reset_state()
    assert torch.is_autocast_cache_enabled()


def test_deep_copied_optimizer_wrapper_steps_its_own_parameters():
    """An optimizer-like wrapper (apex's LARC style) keeps instance attributes through
    copy.deepcopy, so the O1 step must not be tied to the original object."""
    from apexcompat.amp.amp import _wrap_step

    class Wrapper:
        def __init__(self, optim):
            self.optim = optim

        @property
        def param_groups(self):
            return self.optim.param_groups

        def step(self, closure=None):
            return self.optim.step(closure)

    model, _ = _o1()
    wrapper = Wrapper(torch.optim.SGD(model.parameters(), lr=1.0))
    _wrap_step(wrapper)
    wrapper_copy = copy.deepcopy(wrapper)
    for p in list(model.parameters()) + wrapper_copy.param_groups[0]["params"]:
        p.grad = torch.ones_like(p)
    before = [p.detach().clone() for p in model.parameters()]
    copies_before = [p.detach().clone() for p in wrapper_copy.param_groups[0]["params"]]
    wrapper_copy.step()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert not any(torch.equal(a, b) for a, b in zip(copies_before, wrapper_copy.param_groups[0]["params"]))
