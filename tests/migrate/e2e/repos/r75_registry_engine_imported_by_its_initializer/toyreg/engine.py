"""The engine: one update scales its loss through apex and steps; the loss scale it ran at is
logged (apex's loss scaler read directly); checkpoints keep amp's state when amp is on."""

import torch
import torch.nn.functional as F
from apex import amp

from toyreg.registry import register


@register
class Regression:
    def __init__(self, model, optimizer, use_amp):
        self.model = model
        self.optimizer = optimizer
        self.use_amp = use_amp
        self.step = 0

    def update(self, x, y):
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.detach()

    def save(self, path):
        checkpoint = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": self.step}
        if self.use_amp:
            checkpoint["amp"] = amp.state_dict()
        torch.save(checkpoint, path)

    def load(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        self.step = checkpoint["step"]


def current_scale():
    return amp._amp_state.loss_scalers[0].loss_scale()
