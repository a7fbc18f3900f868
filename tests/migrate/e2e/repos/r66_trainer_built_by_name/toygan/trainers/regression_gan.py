"""A trainer the configuration names by module: the generator regresses the targets and is
pushed towards what the critic takes for real ones."""

import torch.nn.functional as F

from toygan.trainers.base import BaseTrainer


class Trainer(BaseTrainer):
    def gen_forward(self, data):
        x, y = data
        fake = self.net_G(x)
        return F.mse_loss(fake, y) + 0.1 * F.softplus(-self.net_D(fake)).mean()

    def dis_forward(self, data):
        x, y = data
        fake = self.net_G(x).detach()
        return F.softplus(self.net_D(fake)).mean() + F.softplus(-self.net_D(y)).mean()
