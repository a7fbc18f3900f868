"""APX314: a step at a gradient-accumulation boundary of a loop that scales every micro-batch's
loss without delay_unscale is reported (apex grew its loss scale per backward, a GradScaler
grows it per step); a step that runs on every iteration, or a loop that delays the unscale,
is not."""

from __future__ import annotations

import textwrap

import pytest

from migrate.engine import migrate_source
from migrate.settings import Settings

LOOP = """\
from apex import amp


def train(args, model, optimizer, batches):
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    {loop}:
        loss = model(x).sum()
        if args.fp16:
            with amp.scale_loss(loss, optimizer{delay}) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
{step}
"""

EVERY_ITERATION_UNDER_THE_SAME_TEST = """\
        if args.fp16:
            optimizer.step()
"""
AT_A_BOUNDARY = """\
        if (i + 1) % args.accumulate == 0:
            optimizer.step()
            optimizer.zero_grad()
"""
AT_A_BOUNDARY_IN_AN_ELIF = """\
        if args.dry_run:
            pass
        elif i % args.accumulate == 0:
            optimizer.step()
"""
AFTER_THE_LOOP = """\
        optimizer.step()
    optimizer.step()
"""


def _growth_findings(loop: str, step: str, delay: str = "") -> list:
    source = LOOP.format(loop=loop, step=step.rstrip("\n"), delay=delay)
    result = migrate_source(source.encode(), "train.py", Settings())
    assert result.changed and result.internal_error is None
    return [f for f in result.findings if f.code == "APX314"]


@pytest.mark.parametrize("loop", ["for i, x in enumerate(batches)", "while i < len(batches)"])
@pytest.mark.parametrize("step", [AT_A_BOUNDARY, AT_A_BOUNDARY_IN_AN_ELIF])
def test_a_step_at_an_accumulation_boundary_is_reported_once(loop: str, step: str) -> None:
    found = _growth_findings(loop, step)
    assert len(found) == 1
    assert found[0].severity == "warning" and found[0].fixed
    assert "growth_interval=2000 // <backwards per step>" in found[0].message


@pytest.mark.parametrize("step", [EVERY_ITERATION_UNDER_THE_SAME_TEST, AFTER_THE_LOOP])
def test_a_step_on_every_iteration_is_not_reported(step: str) -> None:
    assert _growth_findings("for i, x in enumerate(batches)", step) == []


@pytest.mark.parametrize(
    "delay, reported",
    [
        (", delay_unscale=(i + 1) % args.accumulate != 0", False),
        (", delay_unscale=False", True),
        (", 0, None, False", True),
    ],
)
def test_delay_unscale_decides(delay: str, reported: bool) -> None:
    found = _growth_findings("for i, x in enumerate(batches)", AT_A_BOUNDARY, delay)
    assert bool(found) is reported, textwrap.shorten(str(found), 200)
