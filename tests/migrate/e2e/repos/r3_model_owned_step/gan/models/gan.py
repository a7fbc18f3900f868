"""Generator, discriminator and the adversarial update, owned by the model."""

import torch
import torch.nn as nn
from apex import amp

TARGET = (2.0, -1.0)


class GAN(nn.Module):
    LATENT = 4

    def __init__(self):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(self.LATENT, 16), nn.ReLU(), nn.Linear(16, 2))
        self.discriminator = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.criterion = nn.BCEWithLogitsLoss()

    @staticmethod
    def real_batch(gen):
        # the target distribution: 2-d points around TARGET
        return torch.randn(32, 2, generator=gen) * 0.5 + torch.tensor(TARGET)

    def train_step(self, data, optimizer_g, optimizer_d):
        real, noise = data["real"], data["noise"]

        # discriminator: real -> 1, fake -> 0
        optimizer_d.zero_grad()
        fake = self.generator(noise)
        out_real = self.discriminator(real)
        out_fake = self.discriminator(fake.detach())
        loss_d = (self.criterion(out_real, torch.ones_like(out_real))
                  + self.criterion(out_fake, torch.zeros_like(out_fake)))
        with amp.scale_loss(loss_d, optimizer_d, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        optimizer_d.step()

        # generator: make the discriminator say 1
        optimizer_g.zero_grad()
        out = self.discriminator(fake)
        loss_g = self.criterion(out, torch.ones_like(out))
        with amp.scale_loss(loss_g, optimizer_g, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        optimizer_g.step()

        distance = (fake.detach().float().mean(0) - torch.tensor(TARGET, device=fake.device)).norm()
        return {"loss_d": loss_d.item(), "loss_g": loss_g.item(), "distance": distance.item()}
