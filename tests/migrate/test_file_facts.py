"""Which words a file's code names (``migrate.file_facts``): the gate that keeps the apex
rules off files that only mention apex in comments or docstrings."""

from migrate.engine import migrate_source
from migrate.file_facts import words_in_code
from migrate.settings import Settings

WORDS = frozenset({"apex", "amp_C"})


def test_comments_and_docstrings_do_not_count():
    source = b'"""Ported from apex."""\n# apex used to live here\ndef f():\n    """apex too"""\n    return 1\n'
    assert words_in_code(source, WORDS) == frozenset()


def test_imports_names_attributes_and_strings_count():
    assert words_in_code(b"from apex import amp\n", WORDS) == {"apex"}
    assert words_in_code(b"import amp_C\n", WORDS) == {"amp_C"}
    assert words_in_code(b"x = mod.apex_helper\n", WORDS) == {"apex"}
    assert words_in_code(b"importlib.import_module('apex.amp')\n", WORDS) == {"apex"}


def test_a_todo_of_ours_opens_every_gate():
    source = b"# TODO(apexcompat): something left for a person\nx = 1\n"
    assert words_in_code(source, WORDS) == WORDS


def test_a_file_the_stdlib_cannot_parse_runs_every_rule():
    assert words_in_code(b"import apex\ndef (:\n", WORDS) is None


def test_gated_rules_leave_a_comment_only_file_to_the_torch_spelling_rule():
    source = b"# trained with apex once\nimport torch\nscaler = torch.cuda.amp.GradScaler()\n"
    result = migrate_source(source, "t.py", Settings())
    assert b"torch.amp.GradScaler" in result.new
    assert b"# trained with apex once" in result.new
