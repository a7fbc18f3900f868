"""The holder route's proof of a class that reads ``self.amp`` as apex.amp or None
(``migrate.holder_route``): the shapes it edits and the exact reasons it refuses."""

import pytest

from migrate.holder_route import HELPER_NAME, apply_holder_edit, holder_route
from migrate.rules import checkpoints

LEARNER = """\
import torch


class Learner:
    def __init__(self, net):
        self.net = net
        self.optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
        self.amp = None

    def train_step(self, x, y):
{before}        for i in range(2):
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            if self.amp is not None:
                with self.amp.scale_loss(loss, self.optimizer, delay_unscale=i == 0) as scaled:
                    scaled.backward()
            else:
                loss.backward()
{between}        self.optimizer.step()
"""


def route(before="        self.optimizer.zero_grad()\n", between=""):
    source = LEARNER.format(before=before, between=between).encode()
    return source, holder_route("/r/learner.py", "learner.py", source, "amp")


def test_the_plain_shape_is_edited_and_compiles():
    source, edit = route()
    assert not isinstance(edit, str), edit
    new = apply_holder_edit(source, edit).decode()
    compile(new, "learner.py", "exec")
    assert "self.scaler = None" in new and "self.amp" not in new
    assert '            with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler is not None and ' \
           "self.scaler.is_enabled()):\n                loss = " in new
    assert "                self.scaler.scale(loss).backward()\n" in new
    assert "        if self.scaler is not None:\n            self.scaler.step(self.optimizer)\n" in new


def test_a_clip_between_the_loop_and_the_step_is_refused():
    _source, why = route(between="        torch.nn.utils.clip_grad_norm_(self.net.parameters(), 1.0)\n")
    assert why == "self.optimizer.step() is not one statement right after the scaled backward's block in " \
                  "train_step() in learner.py"


def test_a_forward_pass_before_the_loop_is_refused():
    _source, why = route(before="        out = self.net(x)\n")
    assert why.startswith("train_step() in learner.py calls something with arguments (line 11) before the loop")


@pytest.mark.parametrize("read, reason", [
    ("print(self.amp)", "other than in an `is None` / `is not None` test"),
    ("self.amp = object()", "as an assignment other than self.<attr> = None in __init__()"),
    ("flag = self.amp == None", "in a comparison other than `is None` / `is not None`"),
])
def test_other_reads_are_refused_with_their_line(read, reason):
    source = LEARNER.format(before="", between="").replace(
        "    def train_step", f"    def report(self):\n        {read}\n\n    def train_step").encode()
    why = holder_route("/r/learner.py", "learner.py", source, "amp")
    assert isinstance(why, str) and why.startswith("self.amp is read at learner.py:11 ") and reason in why, why


def test_the_helper_name_is_the_checkpoint_rules():
    assert HELPER_NAME == checkpoints.HELPER_NAME


def test_the_bfloat16_target_edits_no_holder():
    """The holder's autocast is float16's: under --dtype bfloat16 both files keep apex.amp."""
    from migrate.pipeline import migrate_repository
    from migrate.rules._amp_repo_examples import HOLDER_REPO
    from migrate.rules.base import example_files
    from migrate.settings import Settings

    files = example_files(HOLDER_REPO)
    jobs = [(name, text.encode()) for name, text in files]
    results = migrate_repository(jobs, [f"/r/{n}" for n, _ in files], Settings(dtype="bfloat16"), 1, ["/r"])
    new = {name: r.new.decode() for (name, _), r in zip(files, results)}
    assert new["model.py"] == dict(files)["model.py"]
    assert "from apexcompat import amp" in new["helpers.py"]


def test_a_form_feed_does_not_shift_the_lines():
    """str.splitlines splits at a form feed, ast does not: the edit follows ast's lines."""
    source = LEARNER.format(before="", between="").replace("import torch\n", "import torch\n\x0c\n").encode()
    edit = holder_route("/r/learner.py", "learner.py", source, "amp")
    assert not isinstance(edit, str), edit
    new = apply_holder_edit(source, edit).decode()
    assert "\x0c" in new and "self.scaler = None" in new and "self.amp" not in new
