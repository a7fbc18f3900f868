"""Every documented example of every rule, through the whole pipeline.

Each ``EXAMPLES`` / ``NOOP_EXAMPLES`` entry of each rule in ``ALL_RULES`` is run through
``migrate_source`` with all rules enabled under the example's settings (as the command line
would), and must give its ``after`` text (``None``: unchanged), report exactly its codes,
compile, and be a fixed point: a second run changes nothing and reports the same remaining
sites.  The docs page of rule codes is generated from the same examples (``migrate.docs``).
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple, Type

import pytest

from migrate.engine import migrate_source
from migrate.pipeline import migrate_repository
from migrate.rules import ALL_RULES
from migrate.rules._edits import todo_key
from migrate.rules.base import Example, Rule, example_files
from toyrules import ToyRule


def collect(rules: Sequence[Type[Rule]]) -> List[Tuple[str, Type[Rule], Example, bool]]:
    cases = []
    for rule in rules:
        for example in rule.EXAMPLES:
            cases.append((f"{rule.__name__}:{example.id}", rule, example, False))
        for example in rule.NOOP_EXAMPLES:
            cases.append((f"{rule.__name__}:noop:{example.id}", rule, example, True))
    return cases


CASES = collect(ALL_RULES)


def open_sites(result):
    """The sites left to the user, by code and message (the first run may add TODO
    comment lines, which moves them, and so the lines a message names)."""
    return sorted((f.code, todo_key(f.message)) for f in result.all_findings() if not f.fixed)


def _migrate_files(files, settings):
    """A repository example through the whole-repository pipeline, in memory."""
    keys = [f"/example-repo/{name}" for name, _ in files]
    jobs = [(name, text.encode("utf-8")) for name, text in files]
    return migrate_repository(jobs, keys, settings, 1, ["/example-repo"])


def check_repository_example(example: Example, noop: bool) -> None:
    before = example_files(example.before)
    first = _migrate_files(before, example.settings)
    for result in first:
        assert result.parse_error is None and result.internal_error is None, result.all_findings()
    new = "".join(f"# file: {name}\n" + r.new.decode("utf-8") for (name, _), r in zip(before, first))
    assert new == (example.before if (noop or example.after is None) else example.after)
    codes = sorted({f.code for r in first for f in r.findings})
    assert codes == sorted(set(example.codes)), f"reported {codes}, documented {sorted(set(example.codes))}"
    for (name, _), result in zip(before, first):
        compile(result.new, name, "exec", dont_inherit=True)
    second = _migrate_files([(name, r.new.decode("utf-8")) for (name, _), r in zip(before, first)], example.settings)
    assert [r.new for r in second] == [r.new for r in first], "a second run must change nothing"
    assert [open_sites(r) for r in second] == [open_sites(r) for r in first]


def check_example(example: Example, noop: bool, rules: Optional[Sequence[Type[Rule]]] = None) -> None:
    if len(example_files(example.before)) > 1:
        return check_repository_example(example, noop)
    before = example.before.encode("utf-8")
    first = migrate_source(before, "example.py", example.settings, rules=rules)
    assert first.parse_error is None, first.parse_error
    assert first.internal_error is None, first.internal_error
    expected = before if (noop or example.after is None) else example.after.encode("utf-8")
    assert first.new.decode("utf-8") == expected.decode("utf-8")
    codes = sorted({f.code for f in first.findings})
    assert codes == sorted(set(example.codes)), f"reported {codes}, documented {sorted(set(example.codes))}"
    compile(first.new, "example.py", "exec", dont_inherit=True)
    if first.new == before:
        return  # the second run would see the same input: the engine is deterministic
    second = migrate_source(first.new, "example.py", example.settings, rules=rules)
    assert second.new == first.new, "a second run must change nothing"
    assert open_sites(second) == open_sites(first), "a second run reports the same remaining sites, once"


@pytest.mark.parametrize("rule, example, noop", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_rule_example(rule, example, noop):
    check_example(example, noop)


def test_every_rule_documents_itself():
    for rule in ALL_RULES:
        assert rule.CODES, f"{rule.__name__} declares no codes"
        assert rule.EXAMPLES or rule.NOOP_EXAMPLES, f"{rule.__name__} has no examples"
        for example in rule.EXAMPLES:
            assert set(example.codes) <= set(rule.CODES) | {c for r in ALL_RULES for c in r.CODES}


def test_example_ids_are_unique_per_rule():
    for rule in ALL_RULES:
        ids = [e.id for e in rule.EXAMPLES + rule.NOOP_EXAMPLES]
        assert len(ids) == len(set(ids)), rule.__name__


# the harness itself, on the driver's toy rule: it must catch a wrong example
@pytest.mark.parametrize("rule, example, noop", [c[1:] for c in collect([ToyRule])], ids=[c[0] for c in collect([ToyRule])])
def test_harness_on_toy_rule(rule, example, noop):
    check_example(example, noop, rules=[ToyRule])


def test_harness_rejects_a_wrong_example():
    wrong = Example("wrong", "from apex import amp\nmodel = amp.initialize(model)\n", "model = other\n", ("APX990",))
    with pytest.raises(AssertionError):
        check_example(wrong, False, rules=[ToyRule])
    wrong_codes = Example("codes", "from apex import amp\nmodel = amp.initialize(model)\n", "model = model\n", ())
    with pytest.raises(AssertionError):
        check_example(wrong_codes, False, rules=[ToyRule])


# --- the rule-code page is generated from these examples ---------------------------------

def test_rule_page_lists_every_code_and_example():
    from migrate.codes import DRIVER_CODES
    from migrate.docs import render_page
    from migrate.rules import all_codes

    page = render_page()
    for code in list(all_codes()) + list(DRIVER_CODES):
        assert f"| `{code}` |" in page, code
    for _, _, example, _ in CASES:
        assert example.before.rstrip("\n") in page, example.id
        if example.after is not None:
            assert example.after.rstrip("\n") in page, example.id


def test_docs_site_page_is_generated_from_migrate_docs():
    """``docs/migrate/rules.md`` holds ``migrate.docs``'s fragment, committed between the
    ``rule-reference`` markers by ``docs/scripts/generate.py``, so the page cannot drift."""
    import importlib.util
    from pathlib import Path

    from migrate.docs import render_fragment

    root = Path(__file__).resolve().parents[2]
    page = root / "docs" / "migrate" / "rules.md"
    script = root / "docs" / "scripts" / "generated_blocks.py"
    if not page.exists() or not script.exists():
        pytest.skip("docs site not in this checkout")
    spec = importlib.util.spec_from_file_location("generated_blocks", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    committed = module.find_blocks(page.read_text(encoding="utf-8"))["rule-reference"].content
    assert committed == render_fragment(), "stale: run python docs/scripts/generate.py --only rules"
