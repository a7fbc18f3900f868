"""A fitter that makes its own optimizer: the forward and the scaled backward in train_step,
amp's state saved and loaded with the model."""

import torch
import torch.nn.functional as F
from apex import amp

import toydata
from trainers.meters import *


class Fitter:
    def __init__(self, model, device="cpu", lr=1e-3):
        self.model = model
        self.device = device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.step = 0
        self.average = Average()

    def train_step(self, batch):
        x, y = (t.to(self.device) for t in batch)
        self.model.train()
        self.optimizer.zero_grad()
        loss = F.mse_loss(self.model(x), y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, data, steps):
        for _ in range(steps):
            loss = self.train_step(toydata.batch(data, self.step))
            self.average.update(loss)
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
