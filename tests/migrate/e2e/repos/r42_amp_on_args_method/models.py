"""Model setup handed the options object: the network, its optimizer and the data.  The
options are read here for plain settings only (never for apex)."""

import torch

import toydata


def build(opts, device):
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=opts.lr, momentum=0.9)
    return model, optimizer


def describe(opts, step):
    """A progress line every ``opts.report_every`` steps."""
    if opts.report_every and step % opts.report_every == 0:
        print(f"reached step {step} (lr {opts.lr})")
