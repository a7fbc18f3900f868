"""Two steppers the launcher chooses between at run time: the plain one, and one that scales
its loss through apex.amp (the launcher initialized the optimizer it is handed).  Neither is
called by name anywhere: the launcher picks the class and builds it once."""

import torch
import torch.nn.functional as F

from apex import amp


class PlainStepper:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device

    def step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


class MixedStepper(PlainStepper):
    def step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()
