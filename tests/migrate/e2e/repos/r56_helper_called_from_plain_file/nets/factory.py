"""Builds a two-stage regressor (an encoder and a head, each with its own optimizer) on a
device; under fp16, apex's initialize takes all four and keeps one loss scaler per loss."""

import torch
import torch.nn as nn


def build(cfg, device):
    encoder = nn.Sequential(nn.Linear(6, 24), nn.Tanh()).to(device)
    head = nn.Linear(24, 3).to(device)
    opt_encoder = torch.optim.SGD(encoder.parameters(), lr=0.05, momentum=0.9)
    opt_head = torch.optim.SGD(head.parameters(), lr=0.05, momentum=0.9)
    if cfg.fp16:
        from apex import amp

        [encoder, head], [opt_encoder, opt_head] = amp.initialize(
            [encoder, head], [opt_encoder, opt_head], opt_level=cfg.opt_level, num_losses=2, verbosity=0
        )
    return encoder, head, [opt_encoder, opt_head]
