"""Builds the generator, one critic per scale and their optimizers; with fp16 on, apex's
initialize takes the generator with its optimizer, then the critics with theirs."""

import torch

from .blocks import PointGenerator, ScaleCritic


def build_gan(opt, device):
    gen = PointGenerator().to(device)
    critics = [ScaleCritic(level).to(device) for level in range(opt.scales)]
    opt_g = torch.optim.Adam(gen.parameters(), lr=0.01, betas=(0.5, 0.999))
    opts_c = [torch.optim.Adam(c.parameters(), lr=0.005, betas=(0.5, 0.999)) for c in critics]
    if opt.fp16:
        from apex import amp

        gen, opt_g = amp.initialize(gen, opt_g, opt_level=opt.opt_level, verbosity=0)
        critics, opts_c = amp.initialize(critics, opts_c, opt_level=opt.opt_level, verbosity=0)
    return gen, critics, opt_g, opts_c
