"""The documented examples of a step in another method than the scaled backward
(``_plain_step_callers``): where a method of the class runs a plain backward and then calls
the stepping method, the file keeps apex.amp (APX220); where every caller scales its loss
first, or runs its plain backward only where the GradScaler is off, the step goes through
the GradScaler.  ``InitializeRule`` carries them."""

from __future__ import annotations

from typing import List

from .base import Example

#: optim_step() steps what backward_step() scaled for amp_step(), but plain_step() reaches it
#: after a plain backward
PLAIN_STEP = """\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level="O1")

    def backward_step(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def optim_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()

    def amp_step(self, x):
        loss = self.model(x).sum()
        self.backward_step(loss)
        self.optim_step()

    def plain_step(self, x):
        self.model(x).sum().backward()
        self.optim_step()
"""

#: the class's own methods all scale, but a function of the same file drives an instance:
#: a plain backward, then the stepping method
OUTSIDE_CALLER = PLAIN_STEP.replace(
    """
    def plain_step(self, x):
        self.model(x).sum().backward()
        self.optim_step()
""",
    """

def finetune(trainer, batches):
    for x in batches:
        trainer.model(x).sum().backward()
        trainer.optim_step()
""",
)


def _kept(source: str, todo: str) -> str:
    """``source`` kept on apex.amp through the shim, ``todo`` above ``optim_step()``'s step."""
    return source.replace("from apex import amp\n", "from apexcompat import amp\n").replace(
        "    def optim_step(self):\n", "    def optim_step(self):\n" + todo
    )


EXAMPLES: List[Example] = [
    Example(
        # stepped through the GradScaler, plain_step()'s unscaled gradients would be divided by
        # the loss scale (apex stepped them as they were): the file keeps apex.amp
        "step-method-reached-after-a-plain-backward-keeps-apex",
        before=PLAIN_STEP,
        after=_kept(
            PLAIN_STEP,
            """\
        # TODO(apexcompat): plain_step() runs a plain backward, self.model(x).sum().backward(),
        #   and then optim_step(), which would step through the GradScaler: its unscaled
        #   gradients would be divided by the loss scale; this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
""",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the plain backward is in a function of the file driving an instance (which object
        # ``trainer`` is is not followed): stepped through the GradScaler, its gradients would
        # be divided by the loss scale, so the file keeps apex.amp
        "step-method-called-on-an-instance-after-a-plain-backward-keeps-apex",
        before=OUTSIDE_CALLER,
        after=_kept(
            OUTSIDE_CALLER,
            """\
        # TODO(apexcompat): finetune() runs a plain backward, trainer.model(x).sum().backward(),
        #   and then trainer.optim_step(), which would step through the GradScaler: its unscaled
        #   gradients would be divided by the loss scale; this file keeps apex.amp semantics
        #   through apexcompat.amp, migrate it by hand
""",
        ),
        codes=("APX102", "APX220"),
    ),
    Example(
        # the same with plain_step() scaling its loss through backward_step() too: every path
        # into optim_step() is scaled, so its step goes through the GradScaler
        "step-method-reached-after-scaled-backwards-only-goes-native",
        before=PLAIN_STEP.replace(
            "        self.model(x).sum().backward()\n",
            "        loss = self.model(x).sum()\n        self.backward_step(loss)\n",
        ),
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer
        self.scaler = torch.amp.GradScaler("cuda")

    def backward_step(self, loss):
        self.scaler.scale(loss).backward()

    def optim_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def amp_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).sum()
        self.backward_step(loss)
        self.optim_step()

    def plain_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16):
            loss = self.model(x).sum()
        self.backward_step(loss)
        self.optim_step()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # the caller's plain backward runs in the else of the test the initialize is under: the
        # GradScaler is off there, and its step steps the gradients as they are
        "step-method-reached-after-a-plain-backward-with-the-scaler-off-goes-native",
        before="""\
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.fp16 = fp16
        if fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.model, self.optimizer = model, optimizer

    def backward_step(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def optim_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()

    def train_step(self, x):
        loss = self.model(x).sum()
        if self.fp16:
            self.backward_step(loss)
        else:
            loss.backward()
        self.optim_step()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.fp16 = fp16
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.model, self.optimizer = model, optimizer

    def backward_step(self, loss):
        self.scaler.scale(loss).backward()

    def optim_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def train_step(self, x):
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(x).sum()
        if self.fp16:
            self.backward_step(loss)
        else:
            loss.backward()
        self.optim_step()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
    Example(
        # plain_batch() runs a plain backward and steps, but its only call is under `if not
        # self.fp16:`, where the GradScaler (switched by fp16) is off: its step through that
        # disabled scaler steps the gradients as they are, so the file goes native
        "step-method-with-a-plain-backward-called-only-with-the-scaler-off-goes-native",
        before="""\
import torch
from apex import amp


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.fp16 = fp16
        if fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        self.model, self.optimizer = model, optimizer

    def plain_batch(self, x):
        loss = self.model(x).sum()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()

    def train_batch(self, x):
        if not self.fp16:
            return self.plain_batch(x)
        loss = self.model(x).sum()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optim_step()

    def optim_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()
""",
        after="""\
import torch


class Trainer:
    def __init__(self, model, optimizer, fp16):
        self.fp16 = fp16
        use_amp = bool(fp16)
        self.scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        self.model, self.optimizer = model, optimizer

    def plain_batch(self, x):
        loss = self.model(x).sum()
        loss.backward()
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()

    def train_batch(self, x):
        if not self.fp16:
            return self.plain_batch(x)
        with torch.autocast("cuda", dtype=torch.float16, enabled=self.scaler.is_enabled()):
            loss = self.model(x).sum()
        self.scaler.scale(loss).backward()
        self.optim_step()

    def optim_step(self):
        self.scaler.step(self.optimizer)
        self.scaler.update()
        self.optimizer.zero_grad()
""",
        codes=("APX101", "APX201", "APX209", "APX301", "APX311"),
    ),
]
