"""The autocast route for a loss a method computes from what its callers hand it (APX253,
``migrate/rules/_amp_handed_outputs.py``): the refusals not covered by the rule examples each
name their reason in the TODO, and the whole amp instance keeps the shim."""

from __future__ import annotations

import pytest

from migrate.rules._amp_repo_examples import HANDED_OUTPUTS
from migrate.rules.base import example_files
from migrate.settings import Settings
from test_rule_examples import _migrate_files

#: the reason each variant of HANDED_OUTPUTS is refused with: (old text, new text, reason)
REFUSALS = {
    "parameter-of-the-caller": (
        "    def gen_update(self, data):\n        fake = None\n",
        "    def gen_update(self, data, fake=None):\n",
        "gen_losses() is handed fake, a parameter of gen_update(), computed by its callers",
    ),
    "expression-handed": (
        "            self.gen_losses(x, y, fake, pred_fake)",
        "            self.gen_losses(x, y, fake, pred_fake * 1)",
        "gen_losses() is handed `pred_fake * 1` by gen_update(), no name it binds itself",
    ),
    "override-in-a-subclass": (
        "        return data[0][t] * 2, data[1][t]\n",
        "        return data[0][t] * 2, data[1][t]\n\n    def dis_losses(self, pred_fake, pred_real):\n        pass\n",
        "dis_losses() computes the loss from what it is handed, and Trainer in fs_vid2vid.py overrides it",
    ),
    "bound-elsewhere-from-an-attribute": (
        "        fake = None\n",
        "        fake = self.last_fake\n",
        "gen_update() binds what it hands gen_losses() in `fake = self.last_fake`, where no autocast region "
        "can hold it",
    ),
    "subclass-override-reaching-a-backward": (
        "        return data[0][t] * 2, data[1][t]\n",
        "        self.warm_up(data)\n        return data[0][t] * 2, data[1][t]\n\n"
        "    def warm_up(self, data):\n        self.net_G(data[0][0]).sum().backward()\n",
        "gen_update() binds what it hands gen_losses() in `x, y = self.frame(data, t)`, where no autocast region "
        "can hold it",
    ),
    "generator-caller": (
        "            self.gen_losses(x, y, fake, pred_fake)\n",
        "            self.gen_losses(x, y, fake, pred_fake)\n            yield t\n",
        "gen_update(), which calls gen_losses(), is a generator or a coroutine",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refusal_names_its_reason_and_keeps_the_shim(case):
    old, new, reason = REFUSALS[case]
    assert old in HANDED_OUTPUTS
    files = example_files(HANDED_OUTPUTS.replace(old, new))
    results = _migrate_files(files, Settings())
    messages = [f.message for r in results for f in r.findings if not f.fixed]
    assert any(reason in m for m in messages), messages
    assert not any(f.code == "APX253" for r in results for f in r.findings)
    for (name, before), result in zip(files, results):
        code = [line for line in result.new.decode("utf-8").splitlines() if not line.lstrip().startswith("#")]
        assert not [line for line in code if "GradScaler" in line or "torch.autocast" in line], name
        if "apex" in before:
            assert "from apexcompat import amp" in code, name


def test_a_call_through_super_in_a_caller_stays_outside_autocast() -> None:
    """``super().<m>()`` may reach a backward of a class in another file (or outside the
    walked files): the callers' autocast regions stop before it."""
    old = "            fake = self.net_G(x)\n"
    files = example_files(HANDED_OUTPUTS.replace(old, old + "            super().log_step(t)\n"))
    results = _migrate_files(files, Settings())
    new = dict((name, r.new.decode("utf-8")) for (name, _), r in zip(files, results))["vid2vid.py"]
    assert any(f.code == "APX253" for r in results for f in r.findings)
    lines = new.splitlines()
    at = next(i for i, line in enumerate(lines) if "super().log_step(t)" in line)
    assert lines[at] == "            super().log_step(t)", new  # not indented into a with block
    assert "torch.autocast" in lines[at + 1], new  # the run after it has its own region
