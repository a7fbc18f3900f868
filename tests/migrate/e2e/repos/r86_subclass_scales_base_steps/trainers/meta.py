"""A trainer that keeps the outputs' size in check and fits a calibration scale to them on
an optimizer of its own after each step: it overrides the base's scaling method only."""

import torch

from .base import Trainer

try:
    from apex import amp
except ImportError:
    amp = None


class MetaTrainer(Trainer):
    def __init__(self, model, args, device):
        super().__init__(model, args, device)
        self.calibration = torch.nn.Parameter(torch.ones((), device=device))
        self.meta_optimizer = torch.optim.SGD([self.calibration], lr=0.1)
        self.seen = []

    def _forward(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y) + 0.01 * out.float().pow(2).mean()
        if self.args.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self._post_step(out)
        return loss

    def _post_step(self, out):
        self.seen.append(out.detach().float().abs().mean())

    def _post_training(self):
        meta_loss = (self.calibration * torch.stack(self.seen).mean() - 1.0).pow(2)
        self.meta_optimizer.zero_grad()
        meta_loss.backward()
        self.meta_optimizer.step()
        self.seen = []
