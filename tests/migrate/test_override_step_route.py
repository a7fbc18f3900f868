"""The override-step route's edit of a subclass's step hook (``migrate.override_step_route``):
the shape it edits, the exact reasons it refuses, and the pipeline's check that the base's
rewrite steps the overridden method through the GradScaler the edit names."""

import pytest

from migrate.engine import MigrationResult
from migrate.holder_route import apply_holder_edit
from migrate.override_step_route import base_step_gap, override_step_route
from migrate.pipeline import _override_base_gap
from migrate.repo_plan import FilePlan

HEIR = """\
from trainers.half import HalfTrainer


class RingTrainer(HalfTrainer):
    def _apex_step(self):
{body}"""

SHOWN = "trainers/ring.py"


def _route(body: str, unscaling: str = "", text: str = HEIR):
    source = text.format(body=body).encode()
    return source, override_step_route(SHOWN, SHOWN, source, "RingTrainer", "_apex_step", "optimizer", "scaler",
                                       unscaling)


def test_the_step_inside_skip_synchronize_goes_through_the_scaler():
    source, edit = _route(
        "        with self.optimizer.skip_synchronize():\n"
        "            self.optimizer.step()  # reduced already\n"
    )
    assert apply_holder_edit(source, edit).decode() == HEIR.format(body=(
        "        with self.optimizer.skip_synchronize():\n"
        "            self.scaler.step(self.optimizer)  # reduced already\n"
        "            self.scaler.update()\n"
    ))


def test_gradient_reads_before_the_step_are_unscaled_first():
    source, edit = _route(
        "        self.optimizer.synchronize()\n"
        "        for group in self.optimizer.param_groups:\n"
        "            for p in group[\"params\"]:\n"
        "                p.grad.mul_(0.5)\n"
        "        self.optimizer.step()\n"
    )
    assert apply_holder_edit(source, edit).decode() == HEIR.format(body=(
        "        self.optimizer.synchronize()\n"
        "        self.scaler.unscale_(self.optimizer)\n"
        "        for group in self.optimizer.param_groups:\n"
        "            for p in group[\"params\"]:\n"
        "                p.grad.mul_(0.5)\n"
        "        self.scaler.step(self.optimizer)\n"
        "        self.scaler.update()\n"
    ))


@pytest.mark.parametrize("body, why", [
    ("        if self.ready:\n            self.optimizer.step()\n",
     "the step of RingTrainer._apex_step() in trainers/ring.py is nested in a statement other than with (line 6), "
     "so some calls may not step"),
    ("        self.optimizer.step()\n        self.optimizer.step()\n",
     "RingTrainer._apex_step() in trainers/ring.py does not step self.optimizer exactly once, and nothing else"),
    ("        self.optimizer.step()\n        self.scheduler.step()\n",
     "RingTrainer._apex_step() in trainers/ring.py does not step self.optimizer exactly once, and nothing else"),
    ("        opt = self.optimizer\n        self.optimizer.step()\n",
     "RingTrainer._apex_step() in trainers/ring.py uses self.optimizer other than to step it (line 6)"),
    ("        self.optimizer.zero_grad()\n        self.optimizer.step()\n",
     "RingTrainer._apex_step() in trainers/ring.py uses self.optimizer other than to step it (line 6)"),
    ("        self.extra.backward()\n        self.optimizer.step()\n",
     "RingTrainer._apex_step() in trainers/ring.py calls backward itself (line 6)"),
    ("        if self.done:\n            return\n        self.optimizer.step()\n",
     "RingTrainer._apex_step() holds a return (line 7)"),
    ("        self.optimizer.step(closure=None)\n",
     "RingTrainer._apex_step() in trainers/ring.py passes arguments to self.optimizer.step()"),
    ("        x = 1; self.optimizer.step()\n",
     "the step at trainers/ring.py:6 does not stand on lines of its own"),
])
def test_shapes_the_route_refuses(body, why):
    assert _route(body)[1] == why


def test_a_gradient_read_is_refused_where_the_base_unscales_itself():
    _source, why = _route("        print(self.model.weight.grad)\n        self.optimizer.step()\n",
                          unscaling="HalfTrainer.clip() reads them too")
    assert why == (
        "RingTrainer._apex_step() in trainers/ring.py reads the gradients before its step, but HalfTrainer.clip() "
        "reads them too: the base's rewrite may unscale them before the call (a second unscale_ raises)"
    )


def test_a_file_calling_the_hook_elsewhere_is_refused():
    text = HEIR + "\n    def finish(self):\n        self._apex_step()\n"
    _source, why = _route("        self.optimizer.step()\n", text=text)
    assert why == "trainers/ring.py names _apex_step at line 9 besides its definition (another call may reach it)"


BASE = """\
class HalfTrainer:
    def _apex_step(self):
{body}"""


def test_the_base_check_wants_the_step_and_its_update_together():
    good = BASE.format(body="        self.scaler.step(self.optimizer)\n        self.scaler.update()\n")
    assert base_step_gap(good, "HalfTrainer", "_apex_step", "optimizer", "scaler") is None
    plain = BASE.format(body="        self.optimizer.step()\n")
    assert base_step_gap(plain, "HalfTrainer", "_apex_step", "optimizer", "scaler") == (
        "HalfTrainer._apex_step() does not step self.optimizer through self.scaler with an update() right after"
    )
    plan = FilePlan(component=0, scaler_name="scaler", override_steps=(("HalfTrainer", "_apex_step", "optimizer"),))
    assert _override_base_gap(plan, MigrationResult("half.py", b"", good.encode())) is None
    assert _override_base_gap(plan, MigrationResult("half.py", b"", plain.encode())) == (
        "in half.py, HalfTrainer._apex_step() does not step self.optimizer through self.scaler with an update() "
        "right after, which the edit of its override would mirror"
    )
