"""A small span scorer and the batches it learns from (no apex here).  A batch is a
function of its step, so a resumed run sees what an uninterrupted one saw."""

import torch
import torch.nn as nn

FEATURES, LABELS = 10, 4


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(FEATURES, 32), nn.GELU(), nn.Linear(32, LABELS))

    def forward(self, x):
        return self.layers(x)


def batch(step):
    """Inputs labelled by which of their first LABELS features is largest."""
    rng = torch.Generator().manual_seed(1300 + step)
    x = torch.randn(48, FEATURES, generator=rng)
    return x, x[:, :LABELS].argmax(1)
