"""Gradient uses between the scaled backward and the step, and steps after the loop, on the
real-world shapes of the testers' reports (realworld-A P-clip, P-accum-unscale, P-flush;
realworld-B P3).

apex unscaled the gradients when the ``amp.scale_loss`` block exited; GradScaler keeps them
scaled until ``scaler.step``.  A clip (any spelling) or other gradient use before the step gets
one ``scaler.unscale_(opt)`` per step phase, only where the step surely follows; a use on every
micro-step with the step at the accumulation boundary is reported (an unscale_ there would run
twice before ``update()`` and raise).  A step after the loop that applies leftover accumulated
gradients runs through the scaler only when some gradient is left (``GradScaler.step`` raises
on an optimizer without gradients).  The migrated scripts are also run on this machine's CPU
with an enabled ``GradScaler("cpu")``.
"""

from __future__ import annotations

import textwrap
import types
import warnings
from typing import List, Tuple

import pytest

from migrate.engine import migrate_source
from migrate.settings import Settings


MINE = ("APX31", "APX32")


def migrate(source: str) -> Tuple[str, list]:
    result = migrate_source(textwrap.dedent(source).encode(), "t.py", Settings())
    assert result.parse_error is None and result.internal_error is None, result.internal_error
    text = result.new.decode()
    compile(text, "t.py", "exec", dont_inherit=True)
    second = migrate_source(result.new, "t.py", Settings())
    assert second.new == result.new, "a second run changes nothing"
    # (the sites of the step and clipping rules; other rules' TODOs are tested with them)
    open_first = sorted((f.code, f.message) for f in result.all_findings() if not f.fixed and f.code[:5] in MINE)
    open_second = sorted((f.code, f.message) for f in second.all_findings() if not f.fixed and f.code[:5] in MINE)
    assert open_second == open_first, "a second run reports the same open sites"
    return text, result.all_findings()


def codes(findings) -> List[str]:
    return sorted(f.code for f in findings)


def body_lines(text: str) -> List[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


def code_only(text: str) -> str:
    """``text`` without its comment lines."""
    return "\n".join(line for line in text.splitlines() if not line.strip().startswith("#"))


# --- P-clip / P3: clipping on any parameters gets scaler.unscale_ first --------------------

R3 = """\
import torch
from apex import amp

model = torch.nn.Linear(4, 4).cuda()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x in [torch.randn(2, 4).cuda()]:
    loss = model(x).sum()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
"""


def test_module_level_clip_on_model_parameters_gets_unscale():
    text, findings = migrate(R3)
    lines = body_lines(text)
    i = lines.index("scaler.scale(loss).backward()")
    assert lines[i : i + 5] == [
        "scaler.scale(loss).backward()",
        "scaler.unscale_(optimizer)",
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        "scaler.step(optimizer)",
        "scaler.update()",
    ]
    assert "APX325" in codes(findings)
    assert not [f for f in findings if f.needs_manual_work()]


@pytest.mark.parametrize(
    "imports, call",
    [
        ("from torch.nn.utils import clip_grad_norm_", "clip_grad_norm_(model.parameters(), 0.5)"),
        ("from torch import nn", "nn.utils.clip_grad_value_(model.parameters(), 0.5)"),
        ("import torch.nn as tnn", "tnn.utils.clip_grad_norm_(model.parameters(), 0.5)"),
        ("from torch.nn.utils.clip_grad import clip_grad_norm_ as cgn", "cgn(model.parameters(), 0.5)"),
        ("from torch.nn import utils", "utils.clip_grad_norm_(params, max_norm=0.5)"),
        ("import torch", "torch.nn.utils.clip_grad_norm(model.parameters(), 0.5)"),
    ],
)
def test_every_spelling_of_the_clip_functions(imports, call):
    source = f"""\
import torch
{imports}
from apex import amp


def train(model, optimizer, loader, params):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        {call}
        optimizer.step()
"""
    text, findings = migrate(source)
    lines = body_lines(text)
    assert lines[lines.index(call) - 1] == "scaler.unscale_(optimizer)"
    assert lines.count("scaler.unscale_(optimizer)") == 1
    assert "APX325" in codes(findings)


def test_unaliased_clip_of_another_library_is_not_rewritten_but_sees_unscaled_gradients():
    """mylib's clip_grad_norm_ is no torch clip (left as written), but it is handed the
    optimizer between the scaled backward and the step: an opaque call that may read the
    gradients apex had unscaled, so scaler.unscale_ goes before it (APX325)."""
    source = """\
    from apex import amp
    from mylib import clip_grad_norm_


    def train(model, optimizer, loader):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            clip_grad_norm_(optimizer, 1.0)
            optimizer.step()
    """
    text, findings = migrate(source)
    lines = body_lines(text)
    assert lines[lines.index("clip_grad_norm_(optimizer, 1.0)") - 1] == "scaler.unscale_(optimizer)"
    assert "from mylib import clip_grad_norm_" in text and "APX325" in codes(findings)


def test_clip_at_the_accumulation_boundary_is_unscaled_there():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, k):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for i, x in enumerate(loader):
            loss = model(x).sum() / k
            with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % k != 0) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % k == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
    """
    text, findings = migrate(source)
    assert "            scaler.unscale_(optimizer)\n            torch.nn.utils.clip_grad_norm_(" in text
    assert not [f for f in findings if f.needs_manual_work()]


def test_one_unscale_per_phase_before_the_first_use():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, args):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if args.clip_value:
                torch.nn.utils.clip_grad_value_(model.parameters(), args.clip_value)
            else:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_norm)
            norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
            optimizer.step()
    """
    text, _ = migrate(source)
    assert text.count("scaler.unscale_(optimizer)") == 1
    assert "        scaler.unscale_(optimizer)\n        if args.clip_value:" in text


def test_clip_in_a_loop_over_param_groups_is_unscaled_before_the_loop():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            for group in optimizer.param_groups:
                torch.nn.utils.clip_grad_norm_(group["params"], 1.0)
            optimizer.step()
    """
    text, _ = migrate(source)
    assert text.count("scaler.unscale_(optimizer)") == 1
    assert "        scaler.unscale_(optimizer)\n        for group in optimizer.param_groups:" in text


def test_step_inside_a_with_block_still_follows_the_use():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            norms = [p.grad.norm() for p in model.parameters() if p.grad is not None]
            with torch.no_grad():
                torch.nn.utils.clip_grad_value_(model.parameters(), 1.0); optimizer.step()
    """
    text, findings = migrate(source)
    assert text.count("scaler.unscale_(optimizer)") == 1
    assert "        scaler.unscale_(optimizer)\n        norms = [" in text
    assert not [f for f in findings if f.needs_manual_work()]


def test_every_optimizer_of_the_scale_loss_is_unscaled():
    source = """\
    import torch
    from apex import amp


    def train(model, opt_a, opt_b, loader):
        model, [opt_a, opt_b] = amp.initialize(model, [opt_a, opt_b], opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, [opt_a, opt_b]) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt_a.step()
            opt_b.step()
    """
    text, _ = migrate(source)
    assert "scaler.unscale_(opt_a)\n        scaler.unscale_(opt_b)\n        torch.nn.utils.clip_grad_norm_" in text


def test_gan_phases_unscale_only_the_optimizer_whose_step_follows():
    source = """\
    import torch
    from apex import amp


    def train(net_d, net_g, opt_d, opt_g, loader):
        [net_d, net_g], [opt_d, opt_g] = amp.initialize([net_d, net_g], [opt_d, opt_g], opt_level="O1", num_losses=2)
        for x in loader:
            loss_d = net_d(x).mean()
            with amp.scale_loss(loss_d, opt_d, loss_id=0) as scaled:
                scaled.backward()
            opt_d.step()
            loss_g = net_d(net_g(x)).mean()
            with amp.scale_loss(loss_g, opt_g, loss_id=1) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(net_g.parameters(), 1.0)
            opt_g.step()
    """
    text, _ = migrate(source)
    assert "unscale_(opt_d)" not in text
    # num_losses=2: opt_g is stepped after loss id 1's losses, so its own GradScaler unscales
    assert "scalers[1].unscale_(opt_g)\n        torch.nn.utils.clip_grad_norm_(net_g.parameters(), 1.0)" in text
    assert "scalers[1].step(opt_g)\n        scalers[1].update()" in text


def test_clip_on_the_fp32_path_is_left_alone():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, fp16):
        if fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            if fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            optimizer.step()
    """
    text, findings = migrate(source)
    assert text.count("scaler.unscale_(optimizer)") == 1
    assert "scaler.unscale_(optimizer)\n            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)" in text
    assert not [f for f in findings if f.needs_manual_work()]


def test_grad_reads_get_unscale_with_a_warning():
    source = """\
    from apex import amp


    def train(model, optimizer, loader, log):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            total = 0.0
            for p in model.parameters():
                if p.grad is not None:
                    total += p.grad.norm().item() ** 2
            log(total)
            optimizer.step()
    """
    text, findings = migrate(source)
    assert "        scaler.unscale_(optimizer)\n        for p in model.parameters():" in text
    [warning] = [f for f in findings if f.code == "APX325"]
    assert warning.severity == "warning" and warning.fixed


def test_uses_after_the_step_are_left_alone():
    """After scaler.step the gradients are unscaled already (EMA, logging of norms)."""
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, ema, log_norm):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
            ema.update(model.parameters())
            log_norm(amp.master_params(optimizer))
            torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
    """
    text, findings = migrate(source)
    assert "unscale_" not in text
    assert not [f for f in findings if f.needs_manual_work()]


# --- P-accum-unscale: a use on every micro-step, the step at the boundary -------------------

R14 = """\
import torch
from apex import amp


def train_one_epoch(config, model, criterion, data_loader, optimizer, get_grad_norm):
    model, optimizer = amp.initialize(model, optimizer, opt_level=config.AMP_OPT_LEVEL)
    for idx, (samples, targets) in enumerate(data_loader):
        outputs = model(samples)
        loss = criterion(outputs, targets)
        loss = loss / config.TRAIN.ACCUMULATION_STEPS
        if config.AMP_OPT_LEVEL != "O0":
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if config.TRAIN.CLIP_GRAD:
                grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), config.TRAIN.CLIP_GRAD)
            else:
                grad_norm = get_grad_norm(amp.master_params(optimizer))
        else:
            loss.backward()
            if config.TRAIN.CLIP_GRAD:
                grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), config.TRAIN.CLIP_GRAD)
            else:
                grad_norm = get_grad_norm(model.parameters())
        if (idx + 1) % config.TRAIN.ACCUMULATION_STEPS == 0:
            optimizer.step()
            optimizer.zero_grad()
"""


def test_per_micro_step_clipping_scales_its_threshold_and_a_norm_helper_is_reported():
    text, findings = migrate(R14)
    assert "unscale_" not in code_only(text)
    # the clip keeps apex's effect: threshold times the scale, the norm divided back
    assert (
        "grad_norm = (torch.nn.utils.clip_grad_norm_((p for group in optimizer.param_groups for p in "
        'group["params"]), config.TRAIN.CLIP_GRAD * scaler.get_scale()) / scaler.get_scale())'
    ) in text
    assert codes(findings).count("APX328") == 1
    # a norm of the scaled gradients read by a helper has no such rewrite
    manual = [f for f in findings if f.needs_manual_work()]
    assert [f.code for f in manual] == ["APX326"] and "no exact native equivalent" in manual[0].message
    assert text.count("# TODO(apexcompat): per-micro-step gradient use:") == 1
    assert "amp.master_params" not in text and "apex" not in code_only(text)


@pytest.mark.parametrize(
    "clip",
    [
        "torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)",
        "torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)",
    ],
)
def test_clip_outside_a_conditional_step_scales_its_threshold(clip):
    source = f"""\
import torch
from apex import amp


def train(model, optimizer, loader, skip):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        {clip}
        if not skip: optimizer.step()
"""
    text, findings = migrate(source)
    assert "unscale_" not in code_only(text)
    assert "1.0 * scaler.get_scale())" in text
    assert "APX328" in codes(findings) and not [f for f in findings if f.needs_manual_work()]


def test_clip_after_a_conditional_step_scales_its_threshold():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, k):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for i, x in enumerate(loader):
            loss = model(x).sum() / k
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % k == 0:
                optimizer.step()
                optimizer.zero_grad()
            grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), float("inf"))
            ema.update(model.parameters())
    """
    text, findings = migrate(source)
    assert "unscale_" not in code_only(text)
    assert 'float("inf") * scaler.get_scale()) / scaler.get_scale())' in text
    assert not [f for f in findings if f.needs_manual_work()]


# --- APX327: the tool cannot tell the phase ---------------------------------------------------


def test_clip_before_a_flush_step_is_reported():
    source = """\
    import torch
    from apex import amp


    def train(model, optimizer, loader, k):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for i, x in enumerate(loader):
            loss = model(x).sum() / k
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % k == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    """
    text, findings = migrate(source)
    assert text.count("scaler.unscale_(optimizer)\n") == 1  # at the boundary only
    [todo] = [f for f in findings if f.code == "APX327"]
    assert "after the loop" in todo.message and todo.needs_manual_work()
    assert "APX312" in codes(findings)


def test_clip_whose_step_is_in_another_method_is_reported():
    source = """\
    import torch
    from apex import amp


    class Trainer:
        def __init__(self, model, optimizer):
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

        def backward(self, loss):
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)

        def step(self):
            self.optimizer.step()
    """
    text, findings = migrate(source)
    assert "unscale_" not in code_only(text)
    [todo] = [f for f in findings if f.code == "APX327"]
    assert "self.optimizer.step() is not in this function" in todo.message


# --- P-flush: the step after the loop -------------------------------------------------------

R9 = """\
import torch
from apex import amp

model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
batches = [torch.randn(2, 4) for _ in range(4)]
for i, x in enumerate(batches):
    loss = model(x).sum() / 2
    with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % 2 != 0) as scaled_loss:
        scaled_loss.backward()
    if (i + 1) % 2 == 0:
        optimizer.step()
        optimizer.zero_grad()
optimizer.step()  # flush leftover gradients
optimizer.zero_grad()
"""


def test_flush_step_after_the_loop_is_guarded():
    text, findings = migrate(R9)
    assert text.endswith(
        'if any(p.grad is not None for group in optimizer.param_groups for p in group["params"]):\n'
        "    scaler.step(optimizer)  # flush leftover gradients\n"
        "    scaler.update()\n"
        "optimizer.zero_grad()\n"
    )
    assert "APX312" in codes(findings)


def test_flush_step_of_a_trainer_per_epoch_is_guarded():
    source = """\
    from apex import amp


    class Trainer(object):
        def __init__(self, model, optimizer, accum_grad):
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
            self.accum_grad = accum_grad

        def train(self, epochs, data_generator):
            for epoch in range(epochs):
                for i, x in enumerate(data_generator):
                    loss = self.model(x) / self.accum_grad
                    if (i + 1) % self.accum_grad == 0:
                        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                            scaled_loss.backward()
                        self.optimizer.step()
                        self.optimizer.zero_grad()
                    else:
                        with amp.scale_loss(loss, self.optimizer, delay_unscale=True) as scaled_loss:
                            scaled_loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
    """
    text, findings = migrate(source)
    assert (
        "            if any(p.grad is not None for group in self.optimizer.param_groups for p in group[\"params\"]):\n"
        "                self.scaler.step(self.optimizer)\n"
        "                self.scaler.update()\n"
        "            self.optimizer.zero_grad()\n"
    ) in text
    assert codes(findings).count("APX312") == 1


def test_step_after_an_inner_accumulation_loop_is_not_a_flush():
    """The inner loop accumulates, the outer loop steps: a regular step, no guard."""
    source = """\
    from apex import amp


    def train(model, optimizer, loader):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for batch in loader:
            for chunk in batch:
                loss = model(chunk).sum()
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            optimizer.step()
            optimizer.zero_grad()
    """
    text, findings = migrate(source)
    assert "any(p.grad" not in text and "APX312" not in codes(findings)


def test_step_after_the_loop_following_a_final_backward_is_not_a_flush():
    source = """\
    from apex import amp


    def train(model, optimizer, loader, last):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for x in loader:
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        loss = model(last).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    """
    text, findings = migrate(source)
    assert "any(p.grad" not in text and "APX312" not in codes(findings)


def test_flush_sharing_its_line_is_reported():
    source = """\
    from apex import amp


    def train(model, optimizer, loader, k):
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for i, x in enumerate(loader):
            loss = model(x).sum()
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            if (i + 1) % k == 0:
                optimizer.step()
        optimizer.step(); optimizer.zero_grad()
    """
    text, findings = migrate(source)
    [todo] = [f for f in findings if f.code == "APX313"]
    assert todo.needs_manual_work() and "# TODO(apexcompat): step with possibly no gradients:" in text


# --- the migrated scripts run: CPU, enabled GradScaler("cpu") --------------------------------


def on_cpu(text: str) -> str:
    """The migrated text with the CUDA scaler/autocast moved to the CPU (autocast off, so the
    numbers compare with plain fp32 exactly up to rounding)."""
    text = text.replace('torch.amp.GradScaler("cuda")', 'torch.amp.GradScaler("cpu")')
    text = text.replace('torch.autocast("cuda", dtype=torch.float16)', 'torch.autocast("cpu", enabled=False)')
    return text.replace(".cuda()", "")


def run(text: str) -> types.SimpleNamespace:
    namespace: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        exec(compile(text, "<migrated>", "exec"), namespace)
    return types.SimpleNamespace(**namespace)


def test_migrated_clip_updates_like_apex():
    torch = pytest.importorskip("torch")
    text, _ = migrate(R3)
    source = on_cpu(text).replace("import torch\n", "import torch\ntorch.manual_seed(0)\n", 1)
    ns = run(source)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(2, 4)
    model(x).sum().backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    assert ns.scaler.get_scale() == 65536.0  # the scaler was on
    assert torch.allclose(ns.model.weight, model.weight, atol=1e-6)


@pytest.mark.parametrize("batches", [4, 3])
def test_migrated_flush_runs_with_and_without_leftover_gradients(batches):
    torch = pytest.importorskip("torch")
    text, _ = migrate(R9.replace("range(4)", f"range({batches})"))
    source = on_cpu(text).replace("import torch\n", "import torch\ntorch.manual_seed(0)\n", 1)
    ns = run(source)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    data = [torch.randn(2, 4) for _ in range(batches)]
    for i, x in enumerate(data):
        (model(x).sum() / 2).backward()
        if (i + 1) % 2 == 0:
            optimizer.step()
            optimizer.zero_grad()
    optimizer.step()
    assert torch.allclose(ns.model.weight, model.weight, atol=1e-6)


ACCUMULATED_CLIP = """\
import torch
from apex import amp

model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
batches = [torch.randn(2, 4) * 10 for _ in range(6)]
norms = []
for i, x in enumerate(batches):
    loss = model(x).pow(2).sum() / 3
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    norms.append(torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 0.5))
    if (i + 1) % 3 == 0:
        optimizer.step()
        optimizer.zero_grad()
"""


def test_migrated_per_micro_step_clip_updates_like_apex():
    """apex clipped the unscaled accumulated gradients after every backward; the migrated
    clip of the scaled ones at 0.5 * scale gives the same weights and the same norms."""
    torch = pytest.importorskip("torch")
    text, findings = migrate(ACCUMULATED_CLIP)
    assert "APX328" in codes(findings)
    ns = run(on_cpu(text).replace("import torch\n", "import torch\ntorch.manual_seed(0)\n", 1))
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    norms = []
    for i, x in enumerate([torch.randn(2, 4) * 10 for _ in range(6)]):
        (model(x).pow(2).sum() / 3).backward()
        norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5))
        if (i + 1) % 3 == 0:
            optimizer.step()
            optimizer.zero_grad()
    assert ns.scaler.get_scale() == 65536.0  # the scaler was on throughout
    assert torch.allclose(ns.model.weight, model.weight, rtol=1e-5, atol=1e-6)
    assert torch.allclose(torch.stack(ns.norms), torch.stack(norms), rtol=1e-5)
    # without the scaled threshold the clip would have cut 65536 times too hard
    assert max(n.item() for n in norms) > 0.5


def test_one_grad_scaler_per_loss_id_unscales_the_optimizer_it_steps():
    """num_losses=2, opt_d after loss id 0 and opt_g after loss id 1: each optimizer's own
    GradScaler unscales it before its clipping (amp.master_params or a plain clip), steps and
    updates it; the other scaler is never touched in that phase."""
    source = """\
    import torch
    from apex import amp


    def train(net_d, net_g, opt_d, opt_g, loader):
        [net_d, net_g], [opt_d, opt_g] = amp.initialize([net_d, net_g], [opt_d, opt_g], opt_level="O1", num_losses=2)
        for x in loader:
            loss_d = net_d(x).mean()
            with amp.scale_loss(loss_d, opt_d, loss_id=0) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(opt_d), 1.0)
            opt_d.step()
            loss_g = net_d(net_g(x)).mean()
            with amp.scale_loss(loss_g, opt_g, loss_id=1) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(net_g.parameters(), 1.0)
            opt_g.step()
    """
    text, _ = migrate(source)
    assert 'scalers = [torch.amp.GradScaler("cuda") for _ in range(2)]' in text
    assert "scalers[0].scale(loss_d).backward()\n        scalers[0].unscale_(opt_d)\n" in text
    assert "scalers[0].step(opt_d)\n        scalers[0].update()" in text
    assert "scalers[1].scale(loss_g).backward()\n        scalers[1].unscale_(opt_g)\n" in text
    assert "scalers[1].step(opt_g)\n        scalers[1].update()" in text
    assert "scalers[0].unscale_(opt_g)" not in text and "scalers[1].unscale_(opt_d)" not in text
