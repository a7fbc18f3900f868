"""A loop's setup pass (``rules/_amp_setup_pass``): ``if epoch == args.start:`` creating the
optimizer and initializing in an epoch loop.

The GradScaler goes into that ``if``'s body only where it provably lives as long as the
optimizer it scales; every other variant keeps the APX220 refusal ("assigns anew on each
pass").  The rule examples show the plain shape and the optimizer made before the loop; these
cases cover the other ways the proof can fail.
"""

from __future__ import annotations

import pytest

from migrate.engine import migrate_source
from migrate.settings import Settings

HEAD = "import torch\nfrom apex import amp\n\n\ndef main(args, model, loaders):\n"
#: the setup pass, ``{pre}`` before the loop and ``{gap}`` between the optimizer and the initialize
SHAPE = (
    HEAD
    + """\
{pre}    for epoch in range(args.epochs):
        if epoch == args.start:
            {make} = torch.optim.SGD(model.parameters(), lr=0.1)
{gap}            if args.fp16:
                model, {make} = amp.initialize(model, {make}, opt_level="O1")
        for x in loaders[epoch]:
            loss = model(x).sum()
            with amp.scale_loss(loss, {make}) as scaled_loss:
                scaled_loss.backward()
            {make}.step()
{post}"""
)

REFUSAL = "assigns anew on each pass"

CASES = [
    # (id, pre, gap, optimizer, post, native)
    ("native", "", "", "optimizer", "", True),
    ("bound-before-the-loop-too", "    optimizer = None\n", "", "optimizer", "", False),
    ("continue-between", "", "            if args.skip:\n                continue\n", "optimizer", "", False),
    ("an-attribute-optimizer", "", "", "args.optimizer", "", False),
    ("scaler-state-saved", "", "", "optimizer", '        torch.save(amp.state_dict(), "amp.pt")\n', False),
]


def _source(pre: str, gap: str, make: str, post: str) -> str:
    return SHAPE.format(pre=pre, gap=gap, make=make, post=post)


@pytest.mark.parametrize("pre, gap, make, post, native", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_setup_pass_goes_native_only_where_proven(pre, gap, make, post, native):
    result = migrate_source(_source(pre, gap, make, post).encode(), "train.py", Settings())
    refusals = [f.message for f in result.all_findings() if f.code == "APX220"]
    if native:
        assert refusals == []
        assert "GradScaler" in result.new.decode()
    else:
        assert len(refusals) == 1 and REFUSAL in refusals[0]


def test_a_try_inside_the_loop_keeps_the_refusal():
    """A handler in the loop could catch what the setup body raises after the optimizer is
    made: the next passes would run with the optimizer and without the GradScaler."""
    source = _source("", "", "optimizer", "").replace(
        "        if epoch == args.start:\n",
        "        try:\n          if epoch == args.start:\n",
    )
    source = source.replace("        for x in loaders", "        except RuntimeError:\n            pass\n        for x in loaders")
    compile(source, "train.py", "exec")
    result = migrate_source(source.encode(), "train.py", Settings())
    assert any(REFUSAL in f.message for f in result.all_findings() if f.code == "APX220")
