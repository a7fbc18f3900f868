"""A backward helper method (``backward_step(self, loss)`` scaling the loss it is handed)
whose callers put their forward passes under autocast in the native rewrite: the class's own
calls on ``self`` are followed; a call on another object (a function driving an instance,
``trainer.backward_step(trainer.model(x).sum())``) is not, so its forward pass would train in
float32 beside a GradScaler.  Such a file keeps apex.amp through the shim, naming the caller,
unless the call hands no loss or runs under autocast already."""

from __future__ import annotations

from migrate.pipeline import migrate_repository
from migrate.settings import Settings

SETTINGS = Settings(target="native")

TRAINER = (
    "import torch\nfrom apex import amp\n\n\n"
    "class Trainer:\n"
    "    def __init__(self, model, optimizer):\n"
    "        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level='O1')\n\n"
    "    def train_step(self, x, y):\n"
    "        loss = torch.nn.functional.mse_loss(self.model(x), y)\n"
    "        self.backward_step(loss)\n"
    "        self.optim_step()\n\n"
    "    def backward_step(self, loss):\n"
    "        with amp.scale_loss(loss, self.optimizer) as scaled_loss:\n"
    "            scaled_loss.backward()\n\n"
    "    def optim_step(self):\n"
    "        self.optimizer.step()\n"
    "        self.optimizer.zero_grad()\n"
)

OUTSIDE_DRIVER = (
    "\n\ndef train(trainer, data):\n"
    "    for x, y in data:\n"
    "        trainer.backward_step(trainer.model(x).sum())\n"
    "        trainer.optim_step()\n"
)


def _migrated(text: str, tmp_path):
    """The run's result for the file (the whole pipeline: a rewrite that would train in
    float32 is taken back there)."""
    path = tmp_path / "trainer.py"
    path.write_text(text)
    (result,) = migrate_repository([("trainer.py", text.encode())], [str(path)], SETTINGS, 1, [str(tmp_path)])
    return result


def test_a_loss_handed_in_by_a_call_on_another_object_keeps_the_file_on_the_shim(tmp_path) -> None:
    result = _migrated(TRAINER + OUTSIDE_DRIVER, tmp_path)
    new = result.new.decode()
    assert "from apexcompat import amp" in new and "GradScaler" not in new
    (refusal,) = [f for f in result.findings if f.code == "APX220"]
    assert "train() calls trainer.backward_step(...) on an object, not on self" in refusal.message
    assert "would train in float32" in refusal.message


def test_the_class_alone_goes_native_with_autocast_at_its_own_call(tmp_path) -> None:
    new = _migrated(TRAINER, tmp_path).new.decode()
    assert "amp" not in new.replace("torch.amp", "")
    assert 'with torch.autocast("cuda", dtype=torch.float16):\n            loss = ' in new
    assert "self.scaler.scale(loss).backward()" in new


def test_calls_that_hand_no_loss_or_run_under_autocast_do_not_count(tmp_path) -> None:
    handing_none = OUTSIDE_DRIVER.replace("trainer.backward_step(trainer.model(x).sum())", "trainer.train_step(x, y)")
    under_autocast = OUTSIDE_DRIVER.replace(
        "        trainer.backward_step(trainer.model(x).sum())\n",
        "        with torch.autocast('cuda', dtype=torch.float16):\n"
        "            trainer.backward_step(trainer.model(x).sum())\n",
    )
    for driver in (handing_none, under_autocast):
        result = _migrated(TRAINER + driver, tmp_path)
        assert not [f for f in result.findings if f.code == "APX220"], result.findings
        assert "GradScaler" in result.new.decode()
