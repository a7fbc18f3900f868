"""The trainer: scales each micro-batch's loss, steps at the accumulation boundary."""

import torch.nn.functional as F
from apex import amp

from engine.base import BaseTrainer

__all__ = ["Trainer"]


class Trainer(BaseTrainer):
    def __init__(self, model, optimizer, device, accumulate=1):
        super().__init__(model, optimizer, device)
        self.accumulate = accumulate

    def train_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        self.model.train()
        loss = F.mse_loss(self.model(x), y) / self.accumulate
        boundary = (self.step + 1) % self.accumulate == 0
        with amp.scale_loss(loss, self.optimizer, delay_unscale=not boundary) as scaled_loss:
            scaled_loss.backward()
        if boundary:
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss.item() * self.accumulate
