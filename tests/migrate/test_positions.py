"""Findings point at the file as it was read, although each rule sees the text the earlier
rules left (imports dropped, statements inserted)."""

from __future__ import annotations

import pytest

from migrate.engine import migrate_source
from migrate.findings import Finding
from migrate.positions import LineMap, to_original
from migrate.settings import Settings

OLD = b"a\nb\nc\nd\ne\n"


@pytest.mark.parametrize(
    "new, line, expected",
    [
        (b"a\nc\nd\ne\n", 3, (4, True)),  # b deleted: later lines move up
        (b"a\nb\nX\nY\nc\nd\ne\n", 5, (3, True)),  # two lines inserted before c
        (b"a\nb\nX\nY\nc\nd\ne\n", 4, (3, False)),  # an inserted line: the line it precedes
        (b"a\nB1\nB2\nB3\nc\nd\ne\n", 3, (2, False)),  # inside a replaced stretch
        (b"a\nb\nc\nd\ne\n", 5, (5, True)),
    ],
)
def test_line_map(new: bytes, line: int, expected: tuple) -> None:
    assert LineMap(OLD, new).to_old(line) == expected


def test_chained_edits_and_columns() -> None:
    texts = [OLD, b"a\nc\nd\ne\n", b"x\na\nc\nd\nE!\n"]
    findings = [Finding("f", 4, 3, "APX001", "on d"), Finding("f", 5, 3, "APX001", "on the edited e")]
    moved = to_original(findings, [2, 2], texts)
    assert [(f.line, f.col) for f in moved] == [(4, 3), (5, 1)]


SCRIPT = b'''import torch
from apex import amp
from apex.parallel import DistributedDataParallel as DDP
from apex.optimizers import FusedAdam


def main(args):
    model = Net().cuda()
    optimizer = FusedAdam(model.parameters(), lr=args.lr)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    model = DDP(model, delay_allreduce=True)
    for x, y in loader:
        loss = model(x).sum()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
    torch.save({"amp": amp.state_dict()}, "ckpt.pt")
'''

#: a text each code's site line holds in SCRIPT
SITE_TEXT = {
    "APX201": "amp.initialize",
    "APX202": "amp.initialize",
    "APX301": "amp.scale_loss",
    "APX311": "optimizer.step()",
    "APX401": "amp.state_dict()",
    "APX601": "DDP(model",
    "APX801": "FusedAdam(",
}


def test_every_finding_points_at_its_site_in_the_original() -> None:
    result = migrate_source(SCRIPT, "train.py", Settings())
    assert result.changed
    lines = SCRIPT.decode().splitlines()
    seen = set()
    for finding in result.all_findings():
        text = SITE_TEXT.get(finding.code)
        if text is not None:
            assert text in lines[finding.line - 1], finding
            seen.add(finding.code)
    # the later rules (initialize, scale_loss, step, checkpoint) ran after DDP and FusedAdam
    # had dropped their import lines
    assert {"APX201", "APX301", "APX311", "APX401", "APX801"} <= seen
