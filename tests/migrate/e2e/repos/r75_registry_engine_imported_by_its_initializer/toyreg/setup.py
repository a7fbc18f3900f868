"""Builds the model and its optimizer and sets apex up for them (enabled by a flag); importing
it registers the engines (the engine module is imported here, so it must not import this one
at its top)."""

import torch
from apex import amp

import toydata
from toyreg import engine  # noqa: F401  (registers the engines)
from toyreg.registry import ENGINES


def build(opts, device):
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=opts.lr, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opts.opt_level, enabled=opts.amp, verbosity=0)
    return ENGINES[opts.engine](model, optimizer, opts.amp)
