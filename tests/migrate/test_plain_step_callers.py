"""A stepping method whose step goes through the GradScaler, called on an instance outside its
class (``_plain_step_callers``): a plain backward before the call keeps the file on apex.amp
(APX220 naming the caller), wherever the caller sits in the file; a caller whose plain
backward cannot run before the call leaves it native, and one that scales first passes this
check (its forward pass outside autocast is what refuses it: ``test_outside_loss_callers``)."""

from __future__ import annotations

import pytest

from migrate.engine import migrate_source
from migrate.rules._plain_step_caller_examples import OUTSIDE_CALLER
from migrate.settings import Settings

SETTINGS = Settings(target="native")
CALLER = """

def finetune(trainer, batches):
    for x in batches:
        trainer.model(x).sum().backward()
        trainer.optim_step()
"""


def _refusal(source: str) -> str:
    result = migrate_source(source.encode(), "train.py", SETTINGS)
    assert result.internal_error is None and result.parse_error is None
    return next((f.message for f in result.findings if f.code == "APX220"), "")


def test_a_function_driving_an_instance_after_a_plain_backward_keeps_apex() -> None:
    assert "finetune() runs a plain backward, trainer.model(x).sum().backward(), and then trainer.optim_step()" in (
        _refusal(OUTSIDE_CALLER)
    )


def test_the_top_level_of_a_script_is_a_caller_too() -> None:
    script = OUTSIDE_CALLER.split("\n\ndef finetune")[0] + (
        "\n\ntrainer = Trainer(model, optimizer)\nfor x in batches:\n"
        "    trainer.model(x).sum().backward()\n    trainer.optim_step()\n"
    )
    assert "the module's top level runs a plain backward" in _refusal(script)


def test_a_caller_that_scales_first_passes_the_step_check_but_its_forward_pass_is_float32() -> None:
    """It hands the loss to the scaled backward helper: no plain backward before the step.
    Its forward pass, though, would run outside autocast (``test_outside_loss_callers``):
    the site gets no autocast region, which keeps the file on apex.amp in a run."""
    caller = CALLER.replace("trainer.model(x).sum().backward()", "trainer.backward_step(trainer.model(x).sum())")
    source = OUTSIDE_CALLER.split("\n\ndef finetune")[0] + caller
    result = migrate_source(source.encode(), "train.py", SETTINGS)
    assert _refusal(source) == ""
    (float32,) = [f for f in result.findings if f.code == "APX210"]
    assert "finetune() calls trainer.backward_step(...) on an object" in float32.message


@pytest.mark.parametrize(
    "caller",
    [
        CALLER.replace(
            "        trainer.model(x).sum().backward()\n        trainer.optim_step()\n",
            "        if x is None:\n            trainer.model(x).sum().backward()\n"
            "        else:\n            trainer.optim_step()\n",
        ),
        CALLER.replace("        trainer.model(x).sum().backward()\n", "        trainer.amp_step(x)\n"),
    ],
    ids=["other-branch", "no-backward"],
)
def test_a_caller_without_a_plain_backward_before_the_call_leaves_it_native(caller: str) -> None:
    source = OUTSIDE_CALLER.split("\n\ndef finetune")[0] + caller
    result = migrate_source(source.encode(), "train.py", SETTINGS)
    assert _refusal(source) == ""
    assert b"scaler.step(self.optimizer)" in result.new and b"apex" not in result.new
