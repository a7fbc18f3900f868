"""The trainer: it gets the optimizer holder from the launcher and scales the generator's loss
through it (self.optimizer.G), stepping the holder."""

import torch

try:
    from apex import amp
except ImportError:
    pass


class Trainer():
    def __init__(self, args, model, criterion, optimizer):
        self.args = args
        self.device = args.device
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer

    def train_step(self, x, y):
        self.model.train()
        self.criterion.train()
        self.optimizer.zero_grad()

        x, y = x.to(self.device), y.to(self.device)
        output = self.model(x)

        loss = self.criterion(output, y)
        if self.args.amp:
            with amp.scale_loss(loss, self.optimizer.G) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        self.optimizer.step()
        return loss.item()
