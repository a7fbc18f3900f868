"""Network and optimizer for both scripts, built from the options object (read here for
plain settings only, never for apex)."""

import torch

import toydata


def build(cfg, device):
    net = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=0.9)
    return net, opt
