"""A pair encoder for in-batch retrieval and a span classifier, with the batches both train on
(no apex here: the migration must leave this file alone).  Batches are a function of the step,
so a resumed run sees the data an uninterrupted one saw."""

import torch
import torch.nn as nn

DIM, CLASSES = 12, 5


class PairEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(DIM, 32), nn.Tanh(), nn.Linear(32, 16))

    def forward(self, x):
        return self.body(x)


class SpanReader(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(DIM, 24), nn.ReLU(), nn.Linear(24, CLASSES))

    def forward(self, x):
        return self.body(x)


def pairs(step):
    """Queries and their passages: each passage is a noisy copy of its query."""
    rng = torch.Generator().manual_seed(500 + step)
    queries = torch.randn(24, DIM, generator=rng)
    passages = queries + 0.3 * torch.randn(24, DIM, generator=rng)
    return queries, passages


def spans(step):
    """Inputs whose class is the index of their largest of the first CLASSES features."""
    rng = torch.Generator().manual_seed(900 + step)
    x = torch.randn(32, DIM, generator=rng)
    return x, x[:, :CLASSES].argmax(1)
