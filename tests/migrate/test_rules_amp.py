"""The apex.amp rule families beyond their documented examples.

apex.amp rewrites span several rules (initialize creates the scaler that scale_loss, step,
clipping and checkpoints use; imports cleans up last).  The examples in each rule module are
the fixture tables; tests/migrate/test_rule_examples.py runs them through the full pipeline
(exact output, codes, compiles, fixed point).  Here: every code is documented, the rules run
in dependency order, TODO comments are written once and wrapped, code selection cannot leave
half a migration, and line endings/indentation survive.
"""

from __future__ import annotations

from typing import List, Optional, Tuple, Type

import pytest

from migrate.engine import migrate_source
from migrate.rules import ALL_RULES
from migrate.rules.amp_initialize import InitializeRule
from migrate.rules.base import TODO_PREFIX, Example, Rule, example_files
from migrate.rules.casting_hooks import CastingHooksRule
from migrate.rules.checkpoints import CheckpointRule
from migrate.rules.clipping import ClippingRule
from migrate.rules.imports import ImportsRule
from migrate.rules.scale_loss import ScaleLossRule
from migrate.rules.step import StepRule
from migrate.settings import Settings

AMP_RULES: List[Type[Rule]] = [
    InitializeRule,
    CheckpointRule,
    ClippingRule,
    StepRule,
    ScaleLossRule,
    CastingHooksRule,
    ImportsRule,
]


def _cases(attr: str) -> List[Tuple[Type[Rule], Example]]:
    return [(rule, ex) for rule in AMP_RULES for ex in getattr(rule, attr)]


def _ids(cases: List[Tuple[Type[Rule], Example]]) -> List[str]:
    return [f"{rule.__name__}:{ex.id}" for rule, ex in cases]


CHANGE_CASES = _cases("EXAMPLES")
NOOP_CASES = _cases("NOOP_EXAMPLES")


def migrate(text: str, settings: Optional[Settings] = None):
    result = migrate_source(text.encode(), "example.py", settings or Settings())
    assert result.parse_error is None
    assert result.internal_error is None, result.internal_error
    return result


# The examples themselves (output, codes, compile, second run) are checked for every rule by
# tests/migrate/test_rule_examples.py; the tests here cover what that harness does not.

TODO_CASES = [
    (rule, ex)
    for rule, ex in CHANGE_CASES
    if ex.after and TODO_PREFIX in ex.after and len(example_files(ex.before)) == 1  # repository ones: their harness
]


@pytest.mark.parametrize(("rule", "example"), TODO_CASES, ids=_ids(TODO_CASES))
def test_todo_comments_are_written_once(rule: Type[Rule], example: Example) -> None:
    again = migrate(example.after, example.settings).new.decode()
    assert again == example.after
    lines = [line.strip() for line in again.splitlines() if TODO_PREFIX.strip() in line]
    assert len(lines) == len(set(lines)), lines
    assert all(len(line) <= 120 for line in again.splitlines()), "TODO comments are wrapped"


GAN = next(ex for ex in InitializeRule.EXAMPLES if ex.id == "gan-two-optimizers-and-loss-id")


def test_selecting_only_later_amp_codes_changes_nothing() -> None:
    """Without the initialize rule no scaler exists, so no other amp rule may rewrite."""
    result = migrate(GAN.before, Settings(select=frozenset({"APX3", "APX4", "APX5"})))
    assert result.new.decode() == GAN.before


def test_ignoring_initialize_keeps_the_file_on_the_shim() -> None:
    result = migrate(GAN.before, Settings(ignore=frozenset({"APX2"})))
    new = result.new.decode()
    assert "from apexcompat import amp" in new and "amp.initialize(" in new and "amp.scale_loss(" in new
    assert "GradScaler" not in new


def test_crlf_and_tabs_survive() -> None:
    source = GAN.before.replace("    ", "\t").replace("\n", "\r\n")
    new = migrate(source).new.decode()
    assert "\r\n" in new and "\n" not in new.replace("\r\n", "")
    assert "\tscalers = [torch.amp.GradScaler(" in new  # num_losses=2: one per loss id
    assert new.replace("\r\n", "\n").replace("\t", "    ") == GAN.after


@pytest.mark.parametrize("rule", AMP_RULES, ids=[r.__name__ for r in AMP_RULES])
def test_examples_use_the_rules_own_codes(rule: Type[Rule]) -> None:
    """Each documented example shows at least one code of the rule it documents."""
    for example in rule.EXAMPLES + rule.NOOP_EXAMPLES:
        if example.codes:
            assert set(example.codes) & set(rule.CODES), example.id


def test_every_amp_code_has_an_example() -> None:
    shown = {code for rule in AMP_RULES for ex in rule.EXAMPLES + rule.NOOP_EXAMPLES for code in ex.codes}
    declared = {code for rule in AMP_RULES for code in rule.CODES}
    assert sorted(declared - shown) == []


def test_amp_rules_run_in_dependency_order() -> None:
    order = [r for r in ALL_RULES if r in AMP_RULES]
    assert order == AMP_RULES
    assert ALL_RULES[-1] is ImportsRule


_TWICE = "amp.initialize is called for training more than once; one GradScaler cannot follow both"


@pytest.mark.parametrize(
    "choice",
    [
        "    model, opt = amp.initialize(model, opt)\n    model, opt = amp.initialize(model, opt, loss_scale=8)\n",
        "    if a:\n        model, opt = amp.initialize(model, opt)\n"
        "    if b:\n        model, opt = amp.initialize(model, opt, loss_scale=8)\n",
        "    try:\n        model, opt = amp.initialize(model, opt)\n"
        "    except RuntimeError:\n        model, opt = amp.initialize(model, opt, loss_scale=8)\n",
    ],
    ids=["in-sequence", "two-ifs", "try-except"],
)
def test_initializes_that_may_both_run_keep_the_shim(choice: str) -> None:
    """Only branches of one if/elif/else are alternatives; anything else may run both."""
    source = (
        "from apex import amp\n\n\ndef main(model, opt, a, b, loss):\n" + choice
        + "    with amp.scale_loss(loss, opt) as scaled:\n        scaled.backward()\n    opt.step()\n"
    )
    result = migrate(source)
    assert "from apexcompat import amp" in result.new.decode() and "GradScaler(" not in result.new.decode()
    assert [f.message for f in result.findings if f.code == "APX220"] == [
        f"{_TWICE}; this file keeps apex.amp semantics through apexcompat.amp, migrate it by hand"
    ]


UNBOUND_SHAPE = """\
import torch
{module_level}

class Trainer:
    def __init__(self, optimizer, fp16):
        self.optimizer = optimizer
        if fp16:
{import_line}

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
"""


@pytest.mark.parametrize(
    "module_level, import_line, expected",
    [
        ("", "            from apex import amp", 1),  # bound in __init__ only: NameError in backward()
        ("", "            from apex import amp as amp_module", 0),  # another name: amp is not apex's here
        ("", "            global amp\n            from apex import amp", 0),  # binds the module's amp
        ("from apex import amp\n", "            from apex import amp", 0),  # bound at module level too
        ("amp = None\n", "            from apex import amp", 0),  # some module binding: not our call
    ],
)
def test_an_amp_member_read_where_amp_is_unbound_is_reported(module_level, import_line, expected):
    result = migrate(UNBOUND_SHAPE.format(module_level=module_level, import_line=import_line))
    found = [f for f in result.findings if f.code == "APX234"]
    assert len(found) == expected, result.findings
    if expected:
        assert found[0].line == 11 and found[0].severity == "warning" and not found[0].fixed
        assert "bound only inside __init__()" in found[0].message and "NameError" in found[0].message
