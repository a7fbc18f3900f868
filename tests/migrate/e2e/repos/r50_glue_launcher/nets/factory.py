"""Builds the regressor and its optimizer on a device; under fp16, apex's initialize takes
them both."""

import torch
import torch.nn as nn


def build(cfg, device):
    model = nn.Sequential(nn.Linear(6, 24), nn.Tanh(), nn.Linear(24, 3)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if cfg.fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.opt_level, verbosity=0)
    return model, optimizer
