"""migrate.rules._namespace_gate: which top-level statements may refer into a namespace, and
the rules that use it give the same results as without it."""

from __future__ import annotations

import libcst as cst
import pytest

import run_modes

from migrate.engine import migrate_source
from migrate.rules._namespace_gate import statements_naming, stub_skipped
from migrate.rules.ddp import DistributedDataParallelRule
from migrate.rules.scale_loss import ScaleLossRule
from migrate.rules.torch_amp_spellings import TorchAmpSpellingsRule
from migrate.settings import Settings

within_a_run = run_modes.within_a_run  # the fixture, both ways

AMP_NS = ("torch.cuda.amp", "torch.cpu.amp")


def _kept(source: str, namespaces=AMP_NS):
    module = cst.parse_module(source)
    gate = statements_naming(source, module, namespaces)
    if gate is None:
        return None
    return [i for i, statement in enumerate(module.body) if id(statement) in gate.kept]


@pytest.mark.parametrize(
    "source, kept",
    [
        ("import torch\n\ndef f():\n    return torch.nn.Linear(1, 1)\n", []),
        ("import torch\n\ndef f():\n    return torch.nn.Linear(1, 1)\n\ndef g():\n    with torch.cuda.amp.autocast():\n        pass\n", [2]),
        ("from torch.cuda.amp import autocast as ac\nx = 1\n\ndef g():\n    with ac():\n        pass\n", [2]),
        ("from torch.cuda import amp\n\nclass T:\n    scaler = amp.GradScaler()\n", [1]),
        ("import torch.cuda.amp as A\ny = A\n", [1]),
        ("def g():\n    import torch\n    return torch.cpu.amp.autocast()\n", [0]),  # an import at any depth
        ("import torch\n\n@torch.cuda.amp.custom_fwd\ndef f(x):\n    return x\n", [1]),  # decorators count
        ("import torch\nx = 1; y = torch.cuda.amp\nz = 2\n", [1]),  # ``a; b`` is one LibCST line
        ("import apex.amp\nautocast = 1\n", []),  # names nothing of the namespaces
    ],
)
def test_statements_that_may_name_the_namespace(source: str, kept: list, within_a_run) -> None:
    assert _kept(source) == kept


def test_undecided_for_star_imports_and_unparsable_text(within_a_run) -> None:
    assert _kept("from torch.cuda.amp import *\nautocast()\n") is None
    assert _kept("from torch.cuda import *\nx = amp\n") is None
    if within_a_run == "whole":  # in a run the statements' own texts are read
        module = cst.parse_module("x = 1\n")
        assert statements_naming("print 'py2'\n", module, AMP_NS) is None


@pytest.mark.parametrize(
    "source, stubbable",
    [
        ("import torch\ndef f():\n    return 1\n", True),
        ("import torch\ndef f():\n    global torch\n    torch = None\n", False),
        ("def f():\n    x = 1\n    def g():\n        nonlocal x\n", False),
        ("def f(y=(z := 1)):\n    pass\n", False),
    ],
)
def test_bodies_are_stubbed_only_without_outward_bindings(source: str, stubbable: bool, within_a_run) -> None:
    gate = statements_naming(source, cst.parse_module(source), AMP_NS)
    assert gate is not None and gate.stubbable is stubbable


def test_stubbed_module_keeps_the_kept_statements_and_every_head() -> None:
    source = (
        "import torch\n\n@wraps\ndef f(a: int = 1) -> int:\n    return a * 2\n\n"
        "class C(Base):\n    x = 1\n\ndef g():\n    return torch.cuda.amp.autocast()\n"
    )
    module = cst.parse_module(source)
    gate = statements_naming(source, module, AMP_NS)
    assert gate is not None
    stubbed = stub_skipped(module, gate)
    assert stubbed.body[3] is module.body[3]  # the kept function: the very same node
    assert stubbed.code == (
        "import torch\n\n@wraps\ndef f(a: int = 1) -> int: ...\n\nclass C(Base): ...\n\n"
        "def g():\n    return torch.cuda.amp.autocast()\n"
    )


class _Ungated(TorchAmpSpellingsRule):
    NAMESPACES = ()
    PRUNE_STATEMENTS = False


class _UngatedDDP(DistributedDataParallelRule):
    NAMESPACES = ()


class _UngatedScaleLoss(ScaleLossRule):
    NAMESPACES = ()


#: files where a careless gate would change the result: names bound in several scopes, a
#: function-level import, a module-level class of the same name, a global rebinding
TRICKY = [
    "import torch\n\ndef autocast():\n    return None\n\ndef f():\n    with torch.cuda.amp.autocast():\n        pass\n",
    "import torch\n\ndef f(torch):\n    return torch.cuda.amp.autocast()\n\ndef g():\n    return torch.cuda.amp.autocast()\n",
    "from torch.cuda.amp import GradScaler\n\nclass Trainer:\n    def __init__(self):\n"
    "        self.scaler = GradScaler()\n\ndef other():\n    GradScaler = dict\n    return GradScaler()\n",
    "import torch\n\ndef setup():\n    global amp\n    from torch.cuda import amp\n\ndef train():\n"
    "    with amp.autocast():\n        pass\n",
    "def f():\n    import torch\n    with torch.cuda.amp.autocast(True):\n        pass\n\n"
    "def g(x):\n    return x.cuda.amp\n",
    "import torch\nscaler: torch.cuda.amp.GradScaler = torch.cuda.amp.GradScaler()\n"
    "def f(s: 'torch.cuda.amp.GradScaler'):\n    return isinstance(s, torch.cuda.amp.GradScaler)\n",
]


@pytest.mark.parametrize("source", TRICKY)
def test_gated_rule_gives_what_the_ungated_one_gives(source: str) -> None:
    settings = Settings()
    gated = migrate_source(source.encode(), "t.py", settings, rules=[TorchAmpSpellingsRule])
    ungated = migrate_source(source.encode(), "t.py", settings, rules=[_Ungated])
    assert gated.new == ungated.new
    assert gated.all_findings() == ungated.all_findings()


@pytest.mark.parametrize(
    "rule, ungated, source",
    [
        (DistributedDataParallelRule, _UngatedDDP,
         "import torch\nfrom apex import amp\nmodel = torch.nn.parallel.DistributedDataParallel(model)\n"),
        (ScaleLossRule, _UngatedScaleLoss,
         "from apex.optimizers import FusedAdam\nwith scale_loss(loss, opt) as s:\n    s.backward()\n"),
    ],
)
def test_a_file_naming_nothing_of_the_namespace_is_skipped_with_the_same_result(rule, ungated, source) -> None:
    settings = Settings()
    gated = migrate_source(source.encode(), "t.py", settings, rules=[rule])
    assert gated.new == migrate_source(source.encode(), "t.py", settings, rules=[ungated]).new
    assert gated.all_findings() == migrate_source(source.encode(), "t.py", settings, rules=[ungated]).all_findings()


def _long_module(functions: int) -> str:
    parts = ["import torch\nfrom torch.cuda.amp import autocast\n"]
    for k in range(functions):
        parts.append(f"\n\ndef f{k}(x):\n    y = x * {k}\n    for i in range(3):\n        y = y + i\n    return y\n")
    return "".join(parts)


def _gate_after_edit(monkeypatch, functions: int, edited: int):
    """The gate of a run's second tree, where ``edited`` of the functions changed (new objects,
    their texts printed as the engine prints a rule's output), and the texts parsed whole."""
    from migrate import stdlib_trees
    from migrate.rules import _namespace_gate
    from migrate.rules._tree import StatementTexts, printing_by_statement

    parsed = []
    real = stdlib_trees.parse
    monkeypatch.setattr(_namespace_gate.stdlib_trees, "parse", lambda text: parsed.append(text) or real(text))
    source = _long_module(functions)
    texts = StatementTexts()
    with printing_by_statement(texts):
        before = cst.parse_module(source)
        texts.read_source(before, source)
        statements_naming(source, before, AMP_NS)
        body = list(before.body)
        for index in range(2, 2 + edited):
            body[index] = cst.parse_statement(f"def f{index - 2}(x):\n    with autocast():\n        return x\n")
        after = before.with_changes(body=body)
        new = "".join(texts.text(after, line) for line in after.body)
        gate = statements_naming(new, after, AMP_NS)
    whole_parses = [text for text in parsed if text == new]
    whole_module = cst.parse_module(new)
    whole = statements_naming(new, whole_module, AMP_NS)  # outside a run: from the whole text
    assert gate is not None and whole is not None
    kept = [i for i, line in enumerate(after.body) if id(line) in gate.kept]
    assert kept == [i for i, line in enumerate(whole_module.body) if id(line) in whole.kept]
    return kept, whole_parses


def test_a_few_changed_statements_of_a_long_file_are_read_alone(monkeypatch) -> None:
    kept, whole_parses = _gate_after_edit(monkeypatch, functions=12, edited=2)
    assert kept == [2, 3]  # the two edited functions
    assert whole_parses == []  # the new text is never parsed whole


def test_a_file_mostly_changed_is_read_whole(monkeypatch) -> None:
    kept, whole_parses = _gate_after_edit(monkeypatch, functions=3, edited=3)
    assert kept == [2, 3, 4]
    assert len(whole_parses) == 1
