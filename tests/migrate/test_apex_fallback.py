"""``ApexFallbackRule`` keeps a file's own GradScaler path only where dropping apex's path
is proven: each case below breaks one condition, and then neither APX284 nor APX285 is
reported (the apex.amp rules decide, as without the rule).  The positive shapes are the
rule's EXAMPLES (``apex_fallback``)."""

from __future__ import annotations

import pytest

from migrate.engine import migrate_source
from migrate.rules._apex_fallback_examples import TRIED_IN_MAIN
from migrate.settings import Settings

_SCALER_PATH = """\
        if scaler is not None:
            scaler.scale(loss).backward()
"""

CASES = [
    # (id, what is replaced in TRIED_IN_MAIN, by what)
    (
        "kept-branch-steps-before-it-reads-the-scaler",
        _SCALER_PATH,
        _SCALER_PATH.replace("scaler.scale(loss)", "optim.zero_grad()\n            scaler.scale(loss)"),
    ),
    ("handler-makes-no-grad-scaler", "scaler = torch.cuda.amp.GradScaler()", "scaler = NoGradScaler()"),
    ("handler-catches-no-name-error", "except:  # noqa: E722", "except RuntimeError:"),
    ("no-autocast-in-the-file", "amp_mode = torch.cuda.amp.autocast()", "amp_mode = contextlib.nullcontext()"),
    ("apex-used-outside-the-branch", "    return loss.item()", "    amp.master_params(optim)\n    return loss.item()"),
    ("amp-bound-to-none-without-apex", "except ImportError:\n    pass", "except ImportError:\n    amp = None"),
    ("branch-on-another-test", "        if scaler is not None:", "        if use_amp:"),
    (
        "try-holds-more-than-the-initialize",
        '            model, optim = amp.initialize(model, optim, opt_level="O1")\n',
        '            model, optim = amp.initialize(model, optim, opt_level="O1")\n            print("apex")\n',
    ),
]


@pytest.mark.parametrize("old, new", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_nothing_dropped_where_not_proven(old, new):
    assert old in TRIED_IN_MAIN
    source = TRIED_IN_MAIN.replace(old, new)
    result = migrate_source(source.encode(), "train.py", Settings())
    codes = {f.code for f in result.findings}
    assert not codes & {"APX284", "APX285"}, sorted(codes)


def test_the_unchanged_shape_is_dropped():
    """The cases above differ from a shape the rule does rewrite."""
    result = migrate_source(TRIED_IN_MAIN.encode(), "train.py", Settings())
    assert {"APX284", "APX285"} <= {f.code for f in result.findings}
