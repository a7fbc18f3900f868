"""An optimizer wrapper with state of its own (no apex here): a warm-up learning rate derived
from a count of its step() calls, kept on the wrapper and advanced on every call, including the
calls whose inner step apex skipped for an overflow."""

import torch


class WarmupSGD:
    def __init__(self, params, lr, warmup):
        self.base_lr = lr
        self.warmup = warmup
        self.calls = 0
        self.inner = torch.optim.SGD(params, lr=self.rate())

    def rate(self):
        return self.base_lr * min(1.0, (self.calls + 1) / self.warmup)

    def step(self):
        self.inner.step()
        self.calls += 1
        for group in self.inner.param_groups:
            group["lr"] = self.rate()

    def zero_grad(self):
        self.inner.zero_grad()

    def state_dict(self):
        return {"inner": self.inner.state_dict(), "calls": self.calls}

    def load_state_dict(self, state):
        self.inner.load_state_dict(state["inner"])
        self.calls = state["calls"]
