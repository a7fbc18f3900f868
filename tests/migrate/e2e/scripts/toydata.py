"""Synthetic data, a small model and the output lines the end-to-end scripts share.

No apex in here: the migration must leave this file alone.  Batches are a function of the
global step, so a run resumed from a checkpoint sees the data an uninterrupted run saw.
"""

import torch
import torch.nn as nn

N_SAMPLES, D_IN, D_HIDDEN, D_OUT, BATCH = 256, 16, 32, 4, 32


def make_data(seed=0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(N_SAMPLES, D_IN, generator=gen)
    w = torch.randn(D_IN, D_OUT, generator=gen) / D_IN ** 0.5
    y = torch.tanh(x @ w) + 0.05 * torch.randn(N_SAMPLES, D_OUT, generator=gen)
    return x, y


def make_labels(y):
    return y.argmax(dim=1)


def batch(data, step):
    x, y = data
    start = (step % (N_SAMPLES // BATCH)) * BATCH
    return x[start:start + BATCH], y[start:start + BATCH]


def make_mlp(batchnorm=False):
    # A bias right before a BatchNorm is cancelled by it (zero gradient): leave it out.
    layers = [nn.Linear(D_IN, D_HIDDEN, bias=not batchnorm)]
    if batchnorm:
        layers.append(nn.BatchNorm1d(D_HIDDEN))
    layers += [nn.ReLU(), nn.Linear(D_HIDDEN, D_OUT)]
    return nn.Sequential(*layers)


def log(step, name, value):
    print(f"metric {name} {step} {float(value):.9g}", flush=True)


def save_params(model, path):
    """Final parameters and buffers as fp32 on the CPU (the comparison the tests make)."""
    model = getattr(model, "module", model)
    torch.save({k: v.detach().float().cpu() for k, v in model.state_dict().items()}, path)
