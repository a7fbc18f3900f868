"""The networks, kept as model.model.G and model.model.D (no apex here)."""

import torch.nn as nn

import toydata


class Model(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.model = nn.Module()
        self.model.G = toydata.make_mlp()
        self.model.D = nn.Sequential(nn.Linear(toydata.D_OUT, 16), nn.ReLU(), nn.Linear(16, 1))
        self.to(args.device)

    def forward(self, x):
        return self.model.G(x)
