"""The trainer most runs use: each iteration updates the critic, then the auxiliary
classifier with the generator's share of its loss, then the generator."""

import torch
import torch.nn.functional as F

import toydata
from .base import BaseTrainer


class CombinedTrainer(BaseTrainer):
    def train(self, data, start, steps):
        self.gen.train()
        self.clear_losses()
        for step in range(start, start + steps):
            x, y = (t.to(self.device) for t in toydata.batch(data, step))
            labels = toydata.make_labels(y)

            out = self.gen(x)
            real = self.disc(y)
            fake = self.disc(out.detach())
            self.d_losses["disc"] = F.relu(1.0 - real).mean() + F.relu(1.0 + fake).mean()

            self.d_optim.zero_grad()
            self.d_backward()
            self.d_optim.step()

            self.g_losses["pixel"] = F.mse_loss(out, y)
            self.g_losses["gen"] = -0.05 * self.disc(out).mean()

            self.g_optim.zero_grad()
            if self.aux is not None:
                self.ac_losses["ac"] = 0.1 * F.cross_entropy(self.aux(out), labels)
                self.ac_optim.zero_grad()
                self.ac_backward()
                self.ac_optim.step()

            self.g_backward()
            self.g_optim.step()

            values = self.clear_losses()
            toydata.log(step, "loss", values["pixel"])
