"""``if optimizer is None: model = amp.initialize(model, optimizer, ...)``: an inference initialize.

The index (stdlib ``ast``, ``repo_index.none_in_block``) and the rules (LibCST,
``rules/_amp_none_optimizer.proven_none``) must agree on where an enclosing ``if`` proves the
optimizer name None: apex returns the models alone there, so the call is no training initialize.
"""

from __future__ import annotations

import libcst as cst
import pytest

from migrate.repo_index import summarise
from migrate.rules._amp_none_optimizer import proven_none

BODY = "    model = amp.initialize(model, opt, opt_level='O1')\n"

CASES = [
    # (id, the if around the initialize, the optimizer proven None there)
    ("body-of-is-none", "if opt is None:\n" + BODY, True),
    ("else-of-is-not-none", "if opt is not None:\n    pass\nelse:\n" + BODY, True),
    ("elif-after-is-not-none", "if opt is not None:\n    pass\nelif fp16:\n" + BODY, True),
    ("body-of-is-not-none", "if opt is not None:\n" + BODY, False),
    ("else-of-is-none", "if opt is None:\n    pass\nelse:\n" + BODY, False),
    ("rebound-in-the-block", "if opt is None:\n    opt = make()\n" + BODY, False),
    ("another-name-tested", "if sched is None:\n" + BODY, False),
]


def _source(block: str) -> str:
    inner = "".join("    " + line + "\n" for line in block.splitlines())
    return "from apex import amp\n\n\ndef setup(model, opt, fp16):\n" + inner + "    return model\n"


@pytest.mark.parametrize("block, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_rules_prove_the_optimizer_none(block, expected):
    module = cst.parse_module(_source(block))
    parents = {}

    class Links(cst.CSTVisitor):
        def on_visit(self, node):
            for child in node.children:
                parents[child] = node
            return True

    module.visit(Links())
    call = next(n for n in parents if isinstance(n, cst.Call) and "initialize" in module.code_for_node(n.func))
    assert proven_none(parents, call, "opt") is expected


@pytest.mark.parametrize("block, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_index_counts_no_training_initialize_there(block, expected):
    source = _source(block)
    summary = summarise("setup.py", "setup.py", source.encode())
    assert summary is not None
    assert [s.training for s in summary.amp_sites if s.member == "initialize"] == [not expected]
