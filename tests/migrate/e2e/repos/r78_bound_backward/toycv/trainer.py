"""The training launcher (no apex here): it runs the forward pass over the chunks of each batch,
hands every chunk's loss to its backward method, clips the gradients and steps.  A script may
replace the backward with a function of its own (``override_backward``)."""

import types

import torch
import torch.nn.functional as F
from torch.nn.utils import clip_grad

import toydata


class Launcher(object):
    def __init__(self, model, optimizer, device, max_norm=1.0):
        self._model = model
        self._optimizer = optimizer
        self._device = device
        self._max_norm = max_norm
        self._step = 0

    @property
    def optimizer(self):
        return self._optimizer

    @property
    def model(self):
        return self._model

    def compute_loss_gradient(self, chunks):
        total = 0.0
        for x, y in chunks:
            x, y = x.to(self._device), y.to(self._device)
            out = self._model(x)

            # every chunk carries its share of the batch's loss
            total_loss = F.mse_loss(out.float(), y) / len(chunks)

            self.backward(total_loss, self.optimizer)
            total += total_loss.item()
        return total

    def apply_gradient(self):
        self._optimizer.step()
        self._optimizer.zero_grad()
        self._step += 1

    def train_iters(self, data, steps, forward_times=1):
        for _ in range(steps):
            x, y = toydata.batch(data, self._step)
            chunks = list(zip(x.chunk(forward_times), y.chunk(forward_times)))
            loss = self.compute_loss_gradient(chunks)
            # clip gradient
            clip_grad.clip_grad_norm_(self._model.parameters(), max_norm=self._max_norm)
            toydata.log(self._step, "loss", loss)
            self.apply_gradient()

    def backward(self, total_loss, optimizer, **kwargs):
        total_loss.backward()

    def override_backward(self, fn):
        self.backward = types.MethodType(fn, self)

    def state(self):
        return {"model": self._model.state_dict(), "optimizer": self._optimizer.state_dict(), "step": self._step}

    def load(self, state):
        self._model.load_state_dict(state["model"])
        self._optimizer.load_state_dict(state["optimizer"])
        self._step = state["step"]
