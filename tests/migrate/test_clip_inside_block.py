"""A torch clip of the model's parameters inside ``with amp.scale_loss(...)`` clipped apex's
scaled gradients of that backward alone (O1).  Natively it stays after
``scaler.scale(loss).backward()``, which is the same only where every backward is a step; with
gradient accumulation (a step under ``if (i + 1) % accumulate == 0:``, 4 by default) it would
clip the accumulated sum on every micro-step, so the file keeps the shim and says why."""

from __future__ import annotations

from migrate.engine import migrate_source
from migrate.settings import Settings

LOOP = """\
import torch
from apex import amp


def train(model, optimizer, batches, accumulate=4, max_norm=1.0):
    model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    for i, (x, y) in enumerate(batches):
        loss = torch.nn.functional.mse_loss(model(x), y) / accumulate
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
{step}"""
AT_A_BOUNDARY = """\
        if (i + 1) % accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
EVERY_ITERATION = """\
        optimizer.step()
        optimizer.zero_grad()
"""


def _migrate(step: str):
    result = migrate_source(LOOP.format(step=step).encode(), "train.py", Settings())
    assert result.internal_error is None
    return result


def test_a_clip_in_the_block_with_accumulation_keeps_the_shim() -> None:
    result = _migrate(AT_A_BOUNDARY)
    assert b"from apexcompat import amp" in result.new
    blocked = [f for f in result.findings if f.code == "APX220"]
    assert blocked and "clip_grad_norm_(model.parameters(), max_norm) runs inside the amp.scale_loss block" in (
        blocked[0].message
    )


def test_a_clip_in_the_block_before_every_step_stays_after_the_scaled_backward() -> None:
    new = _migrate(EVERY_ITERATION).new.decode()
    assert "amp" not in new.replace("torch.amp", "")
    backward = new.index("scaler.scale(loss).backward()")
    assert backward < new.index("torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)") < new.index(
        "scaler.unscale_(optimizer)"
    ) < new.index("scaler.step(optimizer)")
    assert "TODO" not in new  # APX331 would ask for an unscale_ before the clip


FLAG_LOOP = """\
import argparse

import torch
from apex import amp


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--opt-level", default={default!r})
    parser.add_argument("--accumulate", type=int, default=1)
    args = parser.parse_args()
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    for step in range(8):
        loss = model(torch.randn(2, 4)).mean() / args.accumulate
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_({params}, 1.0)
        if (step + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
MASTERS = "amp.master_params(optimizer)"
O2_SENTENCE = "a run that sets the opt level to O2 trains otherwise than apex did"


def _flag_run(default: str, params: str):
    result = migrate_source(FLAG_LOOP.format(default=default, params=params).encode(), "train.py", Settings())
    assert result.internal_error is None
    return result


def test_a_master_clip_with_the_level_from_a_flag_defaulting_to_o1_is_native_and_names_o2() -> None:
    result = _flag_run("O1", MASTERS)
    new = result.new.decode()
    assert "apex" not in new
    assert new.index("scaler.scale(loss).backward()") < new.index("clip_grad_norm_") < new.index(
        "scaler.unscale_(optimizer)"
    ) < new.index("scaler.step(optimizer)")
    (finding,) = [f for f in result.findings if f.code == "APX330"]
    assert "opt_level=args.opt_level: O1 under the default flags" in finding.message
    assert O2_SENTENCE in finding.message and finding.severity == "warning"
    assert "args.accumulate is 1 under the default flags" in finding.message


def test_a_model_clip_with_the_level_from_a_flag_is_native_without_the_o2_difference() -> None:
    """Under O2 too the model's float16 gradients inside the block are this backward's scaled
    ones, which apex unscaled into the masters after the clip: no O2 difference to name."""
    result = _flag_run("O1", "model.parameters()")
    new = result.new.decode()
    assert "apex" not in new and "TODO" not in new
    assert new.index("clip_grad_norm_(model.parameters(), 1.0)") < new.index("scaler.unscale_(optimizer)")
    (finding,) = [f for f in result.findings if f.code == "APX330"]
    assert O2_SENTENCE not in finding.message
    assert not [f for f in result.findings if f.code == "APX331"]


def test_a_clip_with_the_level_from_a_flag_defaulting_to_o2_keeps_the_shim() -> None:
    result = _flag_run("O2", MASTERS)
    assert b"from apexcompat import amp" in result.new
    assert [f for f in result.findings if f.code == "APX220"]


def test_a_clip_with_the_level_from_a_parameter_keeps_the_shim() -> None:
    source = FLAG_LOOP.format(default="O1", params=MASTERS).replace("args = parser.parse_args()", "args = load()")
    result = migrate_source(source.encode(), "train.py", Settings())
    assert b"from apexcompat import amp" in result.new
    assert [f for f in result.findings if f.code == "APX220"]
