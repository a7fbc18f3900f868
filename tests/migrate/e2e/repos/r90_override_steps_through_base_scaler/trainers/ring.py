"""A trainer shaped like DeepGNN's Horovod one, without Horovod: its optimizer reduces the
gradients with a silent peer's (zero) when synchronize() is called, its backward hook does
so right after the backward, and its step hook steps inside skip_synchronize() so the step
does not reduce them again."""

import contextlib

import torch

from .half import HalfTrainer


class PeerSGD(torch.optim.SGD):
    """SGD that averages each gradient with a peer's (all zeros) once per step."""

    def __init__(self, params, **kwargs):
        super().__init__(params, **kwargs)
        self.synced = False
        self.skipping = False

    def synchronize(self):
        for group in self.param_groups:
            for param in group["params"]:
                if param.grad is not None:
                    param.grad.mul_(0.5)
        self.synced = True

    @contextlib.contextmanager
    def skip_synchronize(self):
        self.skipping = True
        try:
            yield
        finally:
            self.skipping = False

    def step(self, closure=None):
        if not self.skipping and not self.synced:
            self.synchronize()
        self.synced = False
        return super().step(closure)


class RingTrainer(HalfTrainer):
    def _make_optimizer(self):
        return PeerSGD(self.model.parameters(), lr=0.1, momentum=0.9)

    def _apex_backward(self, scaled_loss):
        scaled_loss.backward()
        self.optimizer.synchronize()

    def _apex_step(self):
        with self.optimizer.skip_synchronize():
            self.optimizer.step()
