"""An optimizer with a learning-rate schedule: it holds a torch optimizer and sets its lr
from the training progress it is told at every step (no apex in here)."""

import torch


class ScheduledOptimizer:
    """Holds ``self.optimizer``; ``step(where=...)`` sets the lr for that point of training
    (a linear decay to ``final_ratio`` of the base lr), then steps the held optimizer."""

    def __init__(self, base_lr, final_ratio=0.2):
        self.base_lr = base_lr
        self.final_ratio = final_ratio
        self.optimizer = None

    def prepare(self, params):
        raise NotImplementedError

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    def lr_at(self, where):
        return self.base_lr * (1.0 - (1.0 - self.final_ratio) * where)

    def step(self, *, closure=None, where=None):
        if where is None:
            raise RuntimeError("ScheduledOptimizer.step needs where=")
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr_at(where)
        if closure is None:
            self.optimizer.step()
        else:
            self.optimizer.step(closure)

    def zero_grad(self):
        self.optimizer.zero_grad()

    def get_state(self):
        return {"optim": self.optimizer.state_dict()}

    def set_state(self, state):
        self.optimizer.load_state_dict(state["optim"])


class ScheduledSGD(ScheduledOptimizer):
    def __init__(self, base_lr, momentum=0.9):
        super().__init__(base_lr)
        self.momentum = momentum

    def prepare(self, params):
        self.optimizer = torch.optim.SGD(params, lr=self.base_lr, momentum=self.momentum)
        return self
