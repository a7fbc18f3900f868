"""A small Trainer: the forward in train_step, the scaled backward and the step in their own methods."""

import torch
import torch.nn.functional as F
from apex import amp

import toydata


class Trainer:
    def __init__(self, model, optimizer, device="cpu", clip_grad=None):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.clip_grad = clip_grad
        self.step = 0

    def train_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        self.model.train()
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        self.backward(loss)
        self.optimizer_step()
        return loss.item()

    def backward(self, loss):
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()

    def optimizer_step(self):
        if self.clip_grad:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.clip_grad)
        self.optimizer.step()

    def fit(self, data, steps):
        for _ in range(steps):
            loss = self.train_step(toydata.batch(data, self.step))
            toydata.log(self.step, "loss", loss)
            self.step += 1

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "amp": amp.state_dict(), "step": self.step}, path)

    def load(self, path):
        checkpoint = torch.load(path, map_location=self.device)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        self.step = checkpoint["step"]
