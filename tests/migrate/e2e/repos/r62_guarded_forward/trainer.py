"""A speech-recipe trainer shape: the task module computes its own loss and statistics, the
forward pass runs inside a try that skips a batch on out-of-memory, a non-finite loss skips
the backward, and the loss scaler state travels in the checkpoints under apex."""

import math

import torch
from apex import amp

OOM_STRING = "out of memory"


class Task(torch.nn.Module):
    """The network and its loss: a call returns the statistics of a batch."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, batch):
        x, y = batch
        return {"loss": torch.nn.functional.mse_loss(self.net(x), y), "count": x.shape[0]}


class Trainer:
    def __init__(self, net, device, opt_level, lr=0.05):
        self.device = device
        self.task = Task(net).to(device)
        self.optimizer = torch.optim.SGD(self.task.parameters(), lr=lr, momentum=0.9)
        self.task, self.optimizer = amp.initialize(self.task, self.optimizer, opt_level=opt_level, verbosity=0)
        self.skipped = 0

    def train_one_step(self, batch):
        batch = [t.to(self.device) for t in batch]
        try:
            stats = self.task(batch)
        except RuntimeError as err:
            if OOM_STRING in str(err):
                self.skipped += 1
                return None
            else:
                raise err
        value = stats["loss"].item()
        if not math.isfinite(value):
            return None
        with amp.scale_loss(stats["loss"], self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return value

    def state(self, step):
        return {"task": self.task.state_dict(), "optimizer": self.optimizer.state_dict(), "amp": amp.state_dict(),
                "step": step}

    def restore(self, checkpoint):
        self.task.load_state_dict(checkpoint["task"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        return checkpoint["step"]
