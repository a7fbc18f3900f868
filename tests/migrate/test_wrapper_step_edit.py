"""Wrappers whose step can be handed the GradScaler (``optimizer_wrappers.
scaler_steppable_attribute``) and the edit of their step (``migrate.wrapper_step_edit``)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from migrate.optimizer_wrappers import scaler_steppable_attribute
from migrate.wrapper_step_edit import edit_wrapper_step


def steppable(text: str):
    return scaler_steppable_attribute(ast.parse(textwrap.dedent(text)).body[0])


COUNTING = """\
class Warm:
    def __init__(self, params):
        self.calls = 0
        self.inner = torch.optim.SGD(params, lr=0.1)

    def step(self):
        self.inner.step()
        self.calls += 1
"""


def test_a_step_with_work_of_its_own_around_the_inner_step_is_steppable():
    assert steppable(COUNTING) == "inner"


@pytest.mark.parametrize(
    "step",
    [
        "def step(self, closure=None):\n        self.inner.step()\n",  # takes arguments already
        "def step(self):\n        if self.calls:\n            self.inner.step()\n",  # not on every path
        "def step(self):\n        self.inner.step()\n        self.inner.step()\n",  # twice
        "def step(self):\n        self.calls += 1; self.inner.step()\n",  # shares its line
        "def step(self):\n        scaler = self.calls\n        self.inner.step()\n",  # the name is taken
        "def step(self):\n        return self.inner.step()\n",  # not a statement of its own
    ],
)
def test_other_steps_are_not_steppable(step):
    text = COUNTING.replace("def step(self):\n        self.inner.step()\n        self.calls += 1\n", step)
    assert steppable(text) is None


def test_a_method_rebinding_the_held_optimizer_undoes_the_proof():
    assert steppable(COUNTING + "\n    def reset(self, params):\n        self.inner = None\n") is None


def test_the_edit_gives_the_step_a_scaler_parameter_and_keeps_the_other_path():
    new = edit_wrapper_step(COUNTING.encode(), "Warm", "inner").decode()
    assert "    def step(self, scaler=None):\n" in new
    assert (
        "        if scaler is None:\n            self.inner.step()\n        else:\n"
        "            scaler.step(self.inner)\n        self.calls += 1\n"
    ) in new
    compile(new, "warm.py", "exec", dont_inherit=True)
    assert edit_wrapper_step(new.encode(), "Warm", "inner") is None  # a second edit finds no one-parameter step


def test_the_edit_follows_the_files_indentation():
    two = COUNTING.replace("    ", "  ")
    new = edit_wrapper_step(two.encode(), "Warm", "inner").decode()
    assert "    if scaler is None:\n      self.inner.step()\n    else:\n      scaler.step(self.inner)\n" in new


def test_the_handed_step_finding_names_the_wrapper_class_and_its_file_as_data():
    """The driver finds the wrapper to edit from the finding's ``about`` (its file, its class),
    not from the words of its message; the JSON report does not show it."""
    from migrate.pipeline import migrate_repository
    from migrate.rules._amp_repo_examples import POLY_STORED_BACK, POLY_WRAPPER
    from migrate.rules.base import example_files
    from migrate.rules.step import HANDED_CODE
    from migrate.settings import Settings

    files = example_files(POLY_WRAPPER + POLY_STORED_BACK)
    keys = [f"/repo/{name}" for name, _ in files]
    results = migrate_repository([(n, t.encode()) for n, t in files], keys, Settings(), 1, ["/repo"])
    handed = [f for r in results for f in r.findings if f.code == HANDED_CODE and f.path == "train.py"]
    assert [f.about for f in handed] == [("/repo/lr.py", "PolySGD")]
    assert "about" not in handed[0].to_dict()
