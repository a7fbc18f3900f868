"""The apex.amp rule families' documented examples, run through the whole rule pipeline.

apex.amp rewrites span several rules (initialize creates the scaler that scale_loss, step,
clipping and checkpoints use; imports cleans up last), so every example is checked on the
full pipeline: the output is exactly the documented one, compiles, carries the documented
finding codes, and a second run changes nothing and reports the same manual work once.
"""

from __future__ import annotations

from typing import List, Tuple, Type

import pytest

from migrate.engine import migrate_source
from migrate.rules import ALL_RULES
from migrate.rules.amp_initialize import InitializeRule
from migrate.rules.base import TODO_PREFIX, Example, Rule
from migrate.rules.casting_hooks import CastingHooksRule
from migrate.rules.checkpoints import CheckpointRule
from migrate.rules.clipping import ClippingRule
from migrate.rules.imports import ImportsRule
from migrate.rules.scale_loss import ScaleLossRule
from migrate.rules.step import StepRule

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


def migrate(text: str, example: Example):
    result = migrate_source(text.encode(), "example.py", example.settings)
    assert result.parse_error is None
    assert getattr(result, "internal_error", None) is None, result.internal_error
    return result


def check_second_run(first, example: Example) -> None:
    again = migrate(first.new.decode(), example)
    assert again.new == first.new, "second run changed the output:\n" + again.new.decode()
    manual_first = sorted((f.code, f.message) for f in first.findings if not f.fixed)
    manual_again = sorted((f.code, f.message) for f in again.findings if not f.fixed)
    assert manual_again == manual_first
    text = first.new.decode()
    for line in text.splitlines():
        if TODO_PREFIX.strip() in line:
            assert text.count(line.strip()) == 1, f"TODO written twice: {line}"


@pytest.mark.parametrize(("rule", "example"), CHANGE_CASES, ids=_ids(CHANGE_CASES))
def test_example_rewrites(rule: Type[Rule], example: Example) -> None:
    result = migrate(example.before, example)
    new = result.new.decode()
    assert new == example.after, f"\n--- got ---\n{new}\n--- expected ---\n{example.after}"
    compile(new, "example.py", "exec")
    assert sorted(f.code for f in result.findings) == sorted(example.codes)
    check_second_run(result, example)


@pytest.mark.parametrize(("rule", "example"), NOOP_CASES, ids=_ids(NOOP_CASES))
def test_example_leaves_code_alone(rule: Type[Rule], example: Example) -> None:
    result = migrate(example.before, example)
    assert result.new.decode() == example.before
    assert sorted(f.code for f in result.findings) == sorted(example.codes)


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
