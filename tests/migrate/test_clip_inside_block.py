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
        "scaler.step(optimizer)"
    )
