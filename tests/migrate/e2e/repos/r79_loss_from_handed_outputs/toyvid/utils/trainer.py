"""Builds the networks and their optimizers, sets apex up for both (one loss scaler per
network: num_losses=2) and picks the trainer class by the module named in the configuration."""

import importlib

import torch
import torch.nn as nn
from apex import amp

import toydata


def get_trainer(cfg, net_G, net_D, opt_G, opt_D):
    trainer_lib = importlib.import_module(cfg.trainer_type)
    return trainer_lib.Trainer(cfg, net_G, net_D, opt_G, opt_D)


def get_model_optimizer(cfg, device):
    net_G = toydata.make_mlp().to(device)
    net_D = nn.Sequential(nn.Linear(toydata.D_OUT, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    opt_G = torch.optim.SGD(net_G.parameters(), lr=cfg.lr, momentum=0.9)
    opt_D = torch.optim.SGD(net_D.parameters(), lr=cfg.lr, momentum=0.9)
    return wrap_model_and_optimizer(cfg, net_G, net_D, opt_G, opt_D)


def wrap_model_and_optimizer(cfg, net_G, net_D, opt_G, opt_D):
    [net_G, net_D], [opt_G, opt_D] = amp.initialize(
        [net_G, net_D], [opt_G, opt_D], opt_level=cfg.opt_level, enabled=cfg.amp, num_losses=2, verbosity=0
    )
    return net_G, net_D, opt_G, opt_D
