"""APX331 finds a clip however the file spells it: ``NativeClipRule`` asks the scope
analysis only about calls that may be one (an attribute or a name spelled like a clip, or
a name an import binds under an alias), so an aliased clip must still be warned, and a
loop without a clip gets no warning."""

from __future__ import annotations

import pytest

from migrate.engine import migrate_source
from migrate.rules.native_clip import NativeClipRule
from migrate.settings import Settings

LOOP = """\
import torch
{imports}
# ported from apex amp


def fit(model, optimizer, batches, max_norm):
    scaler = torch.amp.GradScaler("cuda")
    for x, y in batches:
        with torch.autocast("cuda", dtype=torch.float16):
            loss = torch.nn.functional.mse_loss(model(x), y)
        scaler.scale(loss).backward()
        {clip}(model.parameters(), max_norm)
        scaler.step(optimizer)
        scaler.update()
"""

SPELLINGS = [
    ("", "torch.nn.utils.clip_grad_norm_"),
    ("from torch.nn.utils import clip_grad_norm_ as clip", "clip"),
    ("from torch.nn.utils import clip_grad_value_ as cut", "cut"),
    ("import torch.nn.utils as U", "U.clip_grad_norm_"),
]


def _codes(imports: str, clip: str) -> list:
    source = LOOP.format(imports=imports, clip=clip).encode()
    result = migrate_source(source, "train.py", Settings(), rules=[NativeClipRule])
    return [f.code for f in result.findings]


@pytest.mark.parametrize("imports, clip", SPELLINGS)
def test_a_clip_between_the_scaled_backward_and_the_step_is_warned(imports: str, clip: str) -> None:
    assert _codes(imports, clip) == ["APX331"]


@pytest.mark.parametrize(
    "imports, call",
    [
        ("from torch.nn.utils import clip_grad_norm_ as clip", "print"),
        ("import torch.nn.utils as U", "U.parameters_to_vector"),
        ("from torch.nn import utils as clip_grad_norm_", "clip_grad_norm_.parameters_to_vector"),
    ],
)
def test_a_call_that_is_no_clip_is_not_warned(imports: str, call: str) -> None:
    assert _codes(imports, call) == []


def test_a_scaled_backward_written_only_in_a_comment_changes_nothing() -> None:
    # the text test says "may have work" at once (the call's shape on one line); the rule's
    # own look at the tree finds no call, and the file is left as it is, unreported
    source = (
        "import torch\n\n\ndef fit(model, optimizer, batches, max_norm):\n"
        '    """Unlike scaler.scale(loss).backward(), this loop scales nothing."""\n'
        "    for x, y in batches:\n        loss = model(x).sum()\n"
        "        loss.backward()  # not scaler.scale(loss).backward()\n"
        "        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)\n        optimizer.step()\n"
    ).encode()
    assert NativeClipRule.has_work(source)
    result = migrate_source(source, "train.py", Settings(), rules=[NativeClipRule])
    assert result.new == source and result.findings == []


def test_a_scaled_backward_spread_over_lines_is_still_found() -> None:
    # not the one-line shape of the text test: the stdlib parse finds it
    spread = LOOP.format(imports="", clip="torch.nn.utils.clip_grad_norm_").replace(
        "scaler.scale(loss).backward()", "scaler.scale(\n            loss\n        ).backward()"
    )
    assert "scale(loss)" not in spread
    assert NativeClipRule.has_work(spread.encode())
    result = migrate_source(spread.encode(), "train.py", Settings(), rules=[NativeClipRule])
    assert [f.code for f in result.findings] == ["APX331"]
