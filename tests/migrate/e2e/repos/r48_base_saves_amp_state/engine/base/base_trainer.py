"""The base of every trainer: the epoch loop, and amp's state kept in the checkpoints."""

import torch
from apex import amp

import toydata


class BaseTrainer:
    def __init__(self, model, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.step = 0

    def train(self, data, steps):
        for _ in range(steps):
            loss = self.train_step(toydata.batch(data, self.step))
            toydata.log(self.step, "loss", loss)
            self.step += 1

    def train_step(self, batch):
        raise NotImplementedError

    def save_checkpoint(self, path):
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "amp": amp.state_dict(), "step": self.step}, path)

    def resume(self, path):
        checkpoint = torch.load(path, map_location=self.device)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        self.step = checkpoint["step"]
