"""Runners (no apex here): the base registers hooks on itself and runs the loop; the simple
runner's step runs the forward pass and stores the summed loss for the hooks."""

import weakref

import torch

import toydata


class RunnerBase:
    def __init__(self):
        self._hooks = []

    def register_hooks(self, hooks):
        for h in hooks:
            # hooks and runner must not own each other
            h.trainer = weakref.proxy(self)
        self._hooks.extend(hooks)

    def train(self, start_iter, max_iter):
        for self.iter in range(start_iter, max_iter):
            self.inner_iter = 0
            for h in self._hooks:
                h.before_step()
            self.run_step()
            for h in self._hooks:
                h.after_step()

    def run_step(self):
        raise NotImplementedError


class SimpleRunner(RunnerBase):
    def __init__(self, model, data, optimizer, device):
        super().__init__()
        model.train()
        self.model = model
        self.data = data
        self.optimizer = optimizer
        self.device = device

    def run_step(self):
        x, y = toydata.batch(self.data, self.iter)
        x, y = x.to(self.device), y.to(self.device)
        loss_dict = self.model(x, y)
        losses = sum(loss_dict.values())
        if not torch.isfinite(losses).all():
            raise FloatingPointError(f"loss became infinite or NaN at iteration {self.iter}")
        toydata.log(self.iter, "loss", losses)
        self.step_outputs = {"loss_for_backward": losses}
        self.inner_iter += 1

    def state(self):
        return {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "iter": self.iter + 1}
