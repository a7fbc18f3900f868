"""Repository examples of a GradScaler a file makes on its own beside apex.amp's sites
(sockeye's trainer: ``self._scaler`` only under its own ``using_amp`` flag, apex's loss scaling
under the other, initialized by the launcher): it never stands in for apex's GradScaler.  Where
the plan across the files is dropped, the trainer keeps apex.amp through the shim with the
launcher, its own GradScaler untouched (``_amp_sites.find_scalers`` finds none for a file the
initialize rule left on the shim); where it holds, the launcher's GradScaler reaches the trainer
(tests/migrate/e2e/repos/r105).  Appended to ``REPOSITORY_EXAMPLES``."""

from __future__ import annotations

from typing import List

from .base import Example

#: the launcher sets apex up under a flag and hands the trainer the flags; the trainer clips
#: after the backward of another method, which drops the plan (APX327 on the planned run)
OWN_SCALER_BESIDE_APEX = """\
# file: train.py
import torch

from trainer import Trainer


def main(args, model, optimizer, data):
    if args.apex_amp:
        import apex.amp

        model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1")
    trainer = Trainer(model, optimizer, using_amp=args.amp, using_apex_amp=args.apex_amp)
    trainer.fit(data)
# file: trainer.py
import torch

try:
    import apex.amp
except ImportError:
    pass


class Trainer:
    def __init__(self, model, optimizer, using_amp=False, using_apex_amp=False):
        self.model = model
        self.optimizer = optimizer
        self.using_amp = using_amp
        if using_amp:
            self._scaler = torch.amp.GradScaler("cuda")
        self.using_apex_amp = using_apex_amp

    def _backward(self, loss):
        if self.using_amp:
            loss = self._scaler.scale(loss)
        if self.using_apex_amp:
            with apex.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    def fit(self, data):
        for x, y in data:
            with torch.autocast("cuda", enabled=self.using_amp):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
            self._backward(loss)
            if self.using_amp:
                self._scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            if self.using_amp:
                self._scaler.step(self.optimizer)
                self._scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
"""

#: the same, migrated: both files keep apex.amp through the shim, the own GradScaler as it was
OWN_SCALER_BESIDE_APEX_KEPT = """\
# file: train.py
import torch

from trainer import Trainer


def main(args, model, optimizer, data):
    if args.apex_amp:
        import apexcompat.amp

        # TODO(apexcompat): the GradScaler plan across files was dropped: in trainer.py,
        #   gradients used after the scaled backward: torch.nn.utils.clip_grad_norm_(...) saw
        #   gradients apex had unscaled, but self.scaler keeps them scaled until
        #   self.scaler.step(self.optimizer) (the scaled backward is not in this function): call
        #   self.scaler.unscale_(self.optimizer) before it, once per step; this file keeps
        #   apex.amp semantics through apexcompat.amp, migrate it by hand
        model, optimizer = apexcompat.amp.initialize(model, optimizer, opt_level="O1")
    trainer = Trainer(model, optimizer, using_amp=args.amp, using_apex_amp=args.apex_amp)
    trainer.fit(data)
# file: trainer.py
import torch

try:
    import apexcompat.amp
except ImportError:
    pass


class Trainer:
    def __init__(self, model, optimizer, using_amp=False, using_apex_amp=False):
        self.model = model
        self.optimizer = optimizer
        self.using_amp = using_amp
        if using_amp:
            self._scaler = torch.amp.GradScaler("cuda")
        self.using_apex_amp = using_apex_amp

    def _backward(self, loss):
        if self.using_amp:
            loss = self._scaler.scale(loss)
        if self.using_apex_amp:
            # TODO(apexcompat): amp.initialize is not in this file, so the scaler cannot reach this
            #   amp.scale_loss (the GradScaler plan across files was dropped: in trainer.py,
            #   gradients used after the scaled backward: torch.nn.utils.clip_grad_norm_(...) saw
            #   gradients apex had unscaled, but self.scaler keeps them scaled until
            #   self.scaler.step(self.optimizer) (the scaled backward is not in this function): call
            #   self.scaler.unscale_(self.optimizer) before it, once per step); this file keeps
            #   apex.amp semantics through apexcompat.amp, migrate it by hand
            with apexcompat.amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    def fit(self, data):
        for x, y in data:
            with torch.autocast("cuda", enabled=self.using_amp):
                loss = torch.nn.functional.mse_loss(self.model(x), y)
            self._backward(loss)
            if self.using_amp:
                self._scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            if self.using_amp:
                self._scaler.step(self.optimizer)
                self._scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
"""

OWN_SCALER_EXAMPLES: List[Example] = [
    Example(
        # before, the trainer's apex sites took self._scaler (made only when using_amp) while the
        # launcher kept apex.amp: the file came out native, its apex branch and its plain step
        # (the else of `if self.using_amp`) failing with an AttributeError
        "own-grad-scaler-of-a-native-branch-never-stands-in-for-apex",
        before=OWN_SCALER_BESIDE_APEX,
        after=OWN_SCALER_BESIDE_APEX_KEPT,
        codes=("APX102", "APX220"),
    ),
]
