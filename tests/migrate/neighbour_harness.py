"""Runs one rule's documented examples as tests (helper M3's families): the output matches,
compiles, the findings have the expected codes, and a second run changes nothing and
reports the same manual work once."""

from __future__ import annotations

from typing import List, Type

from migrate.engine import migrate_source
from migrate.rules.base import TODO_PREFIX, Example, Rule


def run(rule: Type[Rule], example: Example):
    return migrate_source(example.before.encode(), "example.py", example.settings, rules=[rule])


def check_example(rule: Type[Rule], example: Example) -> None:
    result = run(rule, example)
    assert result.parse_error is None
    new = result.new.decode()
    expected = example.before if example.after is None else example.after
    assert new == expected, f"\n--- got ---\n{new}\n--- expected ---\n{expected}"
    compile(new, "example.py", "exec")
    assert sorted(f.code for f in result.findings) == sorted(example.codes)
    if not result.changed:
        return  # a second run sees the same input
    again = migrate_source(result.new, "example.py", example.settings, rules=[rule])
    assert again.new == result.new, "second run changed the output"
    manual_first = sorted((f.code, f.message) for f in result.findings if not f.fixed)
    manual_again = sorted((f.code, f.message) for f in again.findings if not f.fixed)
    assert manual_again == manual_first
    for line in new.splitlines():
        if TODO_PREFIX.strip() in line:
            assert new.count(line.strip()) == 1, f"TODO repeated: {line}"


def example_ids(examples: List[Example]) -> List[str]:
    return [e.id for e in examples]
