"""The final tidy of the ``if`` statements the rules emptied (``migrate.emptied_ifs``), on
pairs of (file as read, rules' output): only a ``pass`` the rules wrote is tidied."""

from __future__ import annotations

import libcst as cst

from migrate.emptied_ifs import merged_sites, tidy_emptied_ifs
from migrate.findings import Finding


def tidy(before: str, after: str) -> str:
    return tidy_emptied_ifs(cst.parse_module(before), before.encode(), after.encode())[0].decode()


def test_an_if_the_user_left_empty_with_the_same_test_keeps_both():
    # the user's ``if args.fp16: pass`` and the emptied one cannot be told apart by test:
    # both stay
    before = "if args.fp16:\n    pass\nif args.fp16:\n    amp.register_half_function(torch, 'einsum')\n"
    after = "if args.fp16:\n    pass\nif args.fp16:\n    # removed\n    pass\n"
    assert tidy(before, after) == after


def test_an_emptied_if_goes_and_a_user_comment_naming_apex_above_it_goes_too():
    before = "x = 1\n# apex needs this\nif args.fp16:\n    amp.register_half_function(torch, 'einsum')\ny = 2\n"
    after = "x = 1\n# apex needs this\nif args.fp16:\n    # removed\n    pass\ny = 2\n"
    assert tidy(before, after) == "x = 1\n# removed\ny = 2\n"


def test_a_note_of_the_rules_above_an_emptied_if_stays_though_it_names_apex():
    before = "if args.fp16:\n    amp.register_half_function(torch, 'einsum')\ny = 2\n"
    after = "# apex.amp.foo removed\nif args.fp16:\n    pass\ny = 2\n"
    assert tidy(before, after) == "# apex.amp.foo removed\ny = 2\n"


def test_branches_with_different_comments_stay():
    before = "if a:\n    amp.x()\nelse:\n    amp.y()\n"
    after = "if a:\n    # one\n    pass\nelse:\n    # two\n    pass\n"
    assert tidy(before, after) == after


def test_an_emptied_if_that_was_a_whole_block_leaves_pass_with_its_comment():
    before = "def f(args):\n    if args.fp16:\n        amp.register_half_function(torch, 'einsum')\n"
    after = "def f(args):\n    if args.fp16:\n        # removed\n        pass\n"
    assert tidy(before, after) == "def f(args):\n    # removed\n    pass\n"


def test_merged_todo_sites_count_once_the_later_goes():
    todo = "inference without optimizers: wrap the forward pass"
    first = Finding("f.py", 3, 5, "APX206", todo)
    second = Finding("f.py", 5, 5, "APX206", todo)
    other = Finding("f.py", 9, 1, "APX101", "import removed", True)
    assert merged_sites([second, first, other], [todo]) == [first, other]
    assert merged_sites([first, other], [todo]) == [first, other]
