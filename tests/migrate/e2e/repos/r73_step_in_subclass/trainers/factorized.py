"""The factorized variant: the generator's output is split in two halves whose product is
kept small, and the classifier sees the detached output (its loss trains it alone, but
its backward still scales for the generator's optimizer too)."""

import torch.nn.functional as F

import toydata
from .base import BaseTrainer


class FactorizedTrainer(BaseTrainer):
    def train(self, data, start, steps):
        self.gen.train()
        for step in range(start, start + steps):
            x, y = (t.to(self.device) for t in toydata.batch(data, step))
            labels = toydata.make_labels(y)

            out = self.gen(x)
            fake = self.disc(out.detach())
            self.d_losses["disc"] = F.relu(1.0 - self.disc(y)).mean() + F.relu(1.0 + fake).mean()
            self.d_optim.zero_grad()
            self.d_backward()
            self.d_optim.step()

            half = out.shape[1] // 2
            self.g_losses["pixel"] = F.mse_loss(out, y)
            self.g_losses["factor"] = 0.01 * (out[:, :half] * out[:, half:]).pow(2).mean()
            self.g_losses["gen"] = -0.05 * self.disc(out).mean()
            self.ac_losses["ac"] = 0.1 * F.cross_entropy(self.aux(out.detach()), labels)

            self.g_optim.zero_grad()
            self.ac_optim.zero_grad()
            self.ac_backward()
            self.ac_optim.step()
            self.g_backward()
            self.g_optim.step()

            values = self.clear_losses()
            toydata.log(step, "loss", values["pixel"])
