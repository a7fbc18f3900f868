"""The initialize rule on real-world shapes (testers' reports realworld-A/B): the scaler of an
``amp.initialize`` in the ``else:`` branch of a guard exists on the fp32 path too (B P4); a
forward pass the tool cannot wrap is manual work, with the TODO in the file (A P-autocast,
B P9); a forward already wrapped for one ``scale_loss`` is not asked for again by another
(A P-spurious-todo)."""

from __future__ import annotations

import warnings
from typing import List

import pytest

from helpers_driver import run_cli
from migrate.engine import migrate_source
from migrate.rules.base import TODO_PREFIX
from migrate.settings import Settings


def migrate(text: str):
    result = migrate_source(text.encode(), "t.py", Settings())
    assert result.parse_error is None and result.internal_error is None, result.internal_error
    return result


def manual(result) -> List[str]:
    return [f.code for f in result.all_findings() if f.needs_manual_work()]


# --- B P4: initialize in the else branch of a guard ------------------------------------------

ELSE_BRANCH = """\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, opt_level=None):
        self.model, self.optimizer = model, optimizer
        self.opt_level = opt_level
        if opt_level is None:
            pass
        else:
            self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)

    def step(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        if self.opt_level is None:
            loss.backward()
        else:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        self.optimizer.step()
"""


def test_scaler_of_an_else_branch_initialize_is_created_on_every_path():
    text = migrate(ELSE_BRANCH).new.decode()
    lines = text.splitlines()
    created = [line for line in lines if "self.scaler = torch.amp.GradScaler(" in line]
    assert created == ['        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)']
    assert '        use_amp = opt_level is not None and opt_level != "O0"' in lines
    assert lines.index(created[0]) > lines.index("        if opt_level is None:")


def test_else_branch_initialize_runs_on_the_fp32_path():
    torch = pytest.importorskip("torch")
    namespace: dict = {}
    exec(compile(migrate(ELSE_BRANCH).new.decode(), "t.py", "exec"), namespace)
    model = torch.nn.Linear(4, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        namespace["Trainer"](model, optimizer).step(torch.randn(2, 4), torch.randn(2, 4))
    assert not torch.equal(before, model.weight.detach())


def test_elif_and_else_chains_switch_on_the_failed_earlier_tests():
    source = """\
from apex import amp


def main(args, model, optimizer, loader):
    if args.mode == "fp32":
        pass
    elif args.mode == "debug":
        print("debug")
    else:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x in loader:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""
    text = migrate(source).new.decode()
    assert '    use_amp = args.mode != "fp32" and args.mode != "debug"\n' in text
    assert "    else:\n" not in text  # the emptied else went
    assert '    scaler = torch.amp.GradScaler("cuda", enabled=use_amp)\n    for x in loader:' in text


# --- A P-autocast / B P9: autocast that cannot be placed is manual work -----------------------

HELPER = """\
import torch
from apex import amp


def compute_loss(model, x):
    return model(x).sum()


model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x in [torch.randn(2, 4)]:
    loss = compute_loss(model, x)
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""

OUT_OF_SIGHT = """\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, objective):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.objective = objective

    def train_step(self, batch):
        loss = self.objective(batch)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
"""

INFERENCE = """\
import torch
from apex import amp

model = torch.nn.Linear(4, 4).cuda().eval()
model = amp.initialize(model, opt_level="O1")
with torch.no_grad():
    out = model(torch.randn(2, 4).cuda())
"""


def test_loss_from_a_helper_that_gets_the_model_is_wrapped():
    result = migrate(HELPER)
    assert '    with torch.autocast("cuda", dtype=torch.float16):\n        loss = compute_loss(model, x)\n' in (
        result.new.decode()
    )
    assert TODO_PREFIX not in result.new.decode()
    assert manual(result) == []


@pytest.mark.parametrize(("source", "code"), [(OUT_OF_SIGHT, "APX210"), (INFERENCE, "APX206")])
def test_unplaced_autocast_is_manual_work_with_a_todo_in_the_file(source, code):
    first = migrate(source)
    assert manual(first) == [code]
    assert first.new.decode().count(TODO_PREFIX) == 1
    second = migrate_source(first.new, "t.py", Settings())
    assert second.new == first.new
    assert manual(second) == [code], "the next run still counts it as manual work"


def test_check_exits_one_while_an_autocast_is_left_to_do(tmp_path):
    (tmp_path / "t.py").write_text(OUT_OF_SIGHT)
    (tmp_path / "i.py").write_text(INFERENCE)
    assert run_cli(["--allow-no-vcs", "."], tmp_path, rules=None).returncode == 1
    proc = run_cli(["--check", "."], tmp_path, rules=None)
    assert proc.returncode == 1
    assert proc.stdout.decode().splitlines()[-1].startswith("0 files would be rewritten, 2 sites need manual work")


# --- A P-spurious-todo: one forward, two scale_loss sites ------------------------------------

ACCUMULATION = """\
from apex import amp


class Trainer(object):
    def __init__(self, model, optimizer, accum_grad):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.accum_grad = accum_grad

    def train(self, data_generator):
        self.optimizer.zero_grad()
        for i, (x, y) in enumerate(data_generator):
            loss = self.model.loss(x, y)
            loss = loss / self.accum_grad
            if (i + 1) % self.accum_grad == 0:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
                self.optimizer.step()
                self.optimizer.zero_grad()
            else:
                with amp.scale_loss(loss, self.optimizer, delay_unscale=True) as scaled_loss:
                    scaled_loss.backward()
"""


def test_forward_wrapped_for_one_branch_is_not_asked_for_by_the_other():
    result = migrate(ACCUMULATION)
    text = result.new.decode()
    assert text.count("torch.autocast(") == 1
    assert TODO_PREFIX not in text
    assert "APX210" not in [f.code for f in result.all_findings()]


# --- sweep: an exit guard between the loss and its scale_loss ---------------------------------

GUARDED = """\
import torch
from apex import amp


def train(model, optimizer, batches, fp16, world_size):
    if fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if world_size > 1:
            loss *= world_size
        {guard}
        if fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize("leave", ["return out", "raise RuntimeError(loss)", "continue", "break"])
def test_forward_before_an_if_that_only_leaves_is_wrapped(leave):
    result = migrate(
        GUARDED.format(guard=f"if not torch.isfinite(loss):\n            print(loss)\n            {leave}")
    )
    text = result.new.decode()
    assert manual(result) == []
    # the forward pass and the loss arithmetic under autocast, the guard after it, unwrapped
    assert "enabled=use_amp):\n            out = model(x)\n" in text, text
    assert "                loss *= world_size\n        if not torch.isfinite(loss):\n" in text, text


@pytest.mark.parametrize(
    "guard",
    [
        # the guard steps the optimizer, assigns the loss, or has an else: not a plain exit
        "if not torch.isfinite(loss):\n            optimizer.step()\n            continue",
        "if not torch.isfinite(loss):\n            loss = out.sum()\n            continue",
        "if not torch.isfinite(loss):\n            continue\n        else:\n            print(loss)",
    ],
)
def test_an_if_that_does_more_than_leave_still_stops_the_search(guard):
    result = migrate(GUARDED.format(guard=guard))
    assert "APX210" in manual(result) or "APX220" in manual(result), result.new.decode()


GUARD_BEFORE_LOSS_ARITHMETIC = """\
import torch
from apex import amp


def train(model, optimizer, batches, batch_size):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in batches:
        out = model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if not torch.isfinite(loss):
            return None
        loss *= batch_size / 64
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
"""


def test_an_if_that_only_leaves_between_the_forward_and_the_last_loss_change_goes_inside_the_autocast():
    result = migrate(GUARD_BEFORE_LOSS_ARITHMETIC)
    text = result.new.decode()
    assert manual(result) == []
    assert (
        '        with torch.autocast("cuda", dtype=torch.float16):\n'
        "            out = model(x)\n"
        "            loss = torch.nn.functional.mse_loss(out, y)\n"
        "            if not torch.isfinite(loss):\n"
        "                return None\n"
        "            loss *= batch_size / 64\n"
        "        scaler.scale(loss).backward()\n"
    ) in text, text


BYSTANDERS = """\
import torch
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
for x, y in loader:
    out = model(x)
    loss = criterion(out, y)
    {between}
    optimizer.zero_grad()
    with amp.scale_loss(loss, optimizer) as scaled_loss:
        scaled_loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "between",
    [
        "with torch.no_grad():\n        acc = (out.argmax(1) == y).float().mean()",
        "for meter in meters:\n        meter.update(loss.item())",
        "try:\n        log(loss.item())\n    except OSError:\n        pass",
        # a break of its own loop stays in that loop
        "for meter in meters:\n        if meter.full:\n            break",
    ],
    ids=["no-grad-metrics", "logging-loop", "try-log", "loop-with-a-break"],
)
def test_statements_that_leave_the_loss_alone_stay_outside_the_autocast(between):
    result = migrate(BYSTANDERS.format(between=between))
    text = result.new.decode()
    assert manual(result) == []
    assert (
        '    with torch.autocast("cuda", dtype=torch.float16):\n'
        "        out = model(x)\n"
        "        loss = criterion(out, y)\n"
        f"    {between.splitlines()[0]}\n"
    ) in text, text


@pytest.mark.parametrize(
    "between",
    [
        # rebinds the loss, steps or calls a backward: the search stops there
        "for loss in [loss * 2]:\n        pass",
        "with torch.no_grad() as loss:\n        pass",
        "with torch.no_grad():\n        out.sum().backward()",
        "for sub in extra:\n        sub.optimizer.step()",
    ],
    ids=["loop-target", "with-target", "backward", "step"],
)
def test_statements_that_touch_the_loss_or_the_step_still_stop_the_search(between):
    result = migrate(BYSTANDERS.format(between=between))
    assert {"APX210", "APX220"} & set(manual(result)), result.new.decode()


# --- sweep: the loss computed in an if/else beside a native autocast branch ---------------------

BRANCHES = """\
import torch
from apex import amp


def train(model, optimizer, loader, with_apex, mixed_precision):
    scaler = torch.amp.GradScaler("cuda", enabled=mixed_precision)
    if with_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for x, y in loader:
{forward}
        del x
        if with_apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
"""

APEX_BRANCH = "        if with_apex:\n            out = model(x)\n            loss = out.sum()\n"
NATIVE_BRANCH = (
    "        else:\n"
    "            with torch.autocast('cuda', enabled=mixed_precision):\n"
    "                loss = model(x).sum()\n"
)


def test_the_apex_branch_of_a_forward_if_gets_its_own_autocast():
    result = migrate(BRANCHES.format(forward=APEX_BRANCH + NATIVE_BRANCH))
    text = result.new.decode()
    assert manual(result) == [], text
    assert (
        "        if with_apex:\n"
        '            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):\n'
        "                out = model(x)\n"
        "                loss = out.sum()\n"
    ) in text, text
    # the native branch keeps its autocast, on wherever the apex scaler is too
    assert "enabled=mixed_precision or use_amp):\n                loss = model(x).sum()\n" in text, text


@pytest.mark.parametrize(
    "forward",
    [
        # no else (on that path the loss would come from before the if), in an if that holds
        # a with (a plain if is wrapped whole)
        "        if with_apex:\n            with torch.no_grad():\n                pass\n"
        "            loss = model(x).sum()\n",
        # a branch with no model call, a branch that steps, a branch that leaves
        APEX_BRANCH + "        else:\n            for _ in range(1):\n                loss = y.sum()\n",
        APEX_BRANCH + NATIVE_BRANCH + "            optimizer.step()\n",
        APEX_BRANCH + NATIVE_BRANCH + "            continue\n",
    ],
    ids=["no-else", "no-model-call", "steps", "leaves"],
)
def test_a_forward_if_that_is_not_one_loss_per_branch_still_stops_the_search(forward):
    result = migrate(BRANCHES.format(forward=forward))
    assert {"APX210", "APX220"} & set(manual(result)), result.new.decode()
