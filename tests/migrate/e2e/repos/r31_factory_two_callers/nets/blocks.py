"""A generator of 2-d points and a discriminator that judges them at one scale (no apex here:
the migration must leave this file alone)."""

import torch
import torch.nn as nn

LATENT = 4
TARGET = (4.0, -2.0)


class PointGenerator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(LATENT, 16), nn.ReLU(), nn.Linear(16, 2))

    def forward(self, noise):
        return self.body(noise)


class ScaleCritic(nn.Module):
    """Judges the points after shrinking them towards their batch mean by ``1 / 2**level``: the
    coarse critic sees where the cloud sits, the fine one its spread."""

    def __init__(self, level):
        super().__init__()
        self.level = level
        self.body = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, points):
        centre = points.mean(0, keepdim=True)
        return self.body(centre + (points - centre) / 2 ** self.level)


def real_points(gen, device):
    return (torch.randn(32, 2, generator=gen) * 0.5 + torch.tensor(TARGET)).to(device)
