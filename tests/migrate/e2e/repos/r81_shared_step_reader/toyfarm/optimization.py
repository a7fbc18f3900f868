"""Builds the optimizer by name (torch first, then apex's fused ones) and sets apex up for it
when an opt level is given."""

import logging
from importlib import import_module

import torch

try:
    from apex import amp
    AMP_AVAILABLE = True
except ImportError:
    AMP_AVAILABLE = False

logger = logging.getLogger(__name__)


def initialize_optimizer(model, device, lr, name="SGD", use_amp=None):
    optimizer = _get_optim(model, name, lr)
    model, optimizer = optimize_model(model, device, optimizer, use_amp)
    return model, optimizer


def _get_optim(model, name, lr):
    try:
        constructor = getattr(import_module("torch.optim"), name)
    except AttributeError:
        try:
            constructor = getattr(import_module("apex.optimizers"), name)
        except (AttributeError, ImportError):
            raise AttributeError(f"Optimizer '{name}' not found in 'torch' or 'apex'")
    return constructor(model.parameters(), lr=lr, momentum=0.9)


def optimize_model(model, device, optimizer=None, use_amp=None):
    model, optimizer = _init_amp(model, device, optimizer, use_amp)
    return model, optimizer


def _init_amp(model, device, optimizer=None, use_amp=None):
    model = model.to(device)
    if use_amp and optimizer:
        if AMP_AVAILABLE:
            model, optimizer = amp.initialize(model, optimizer, opt_level=use_amp, verbosity=0)
        else:
            logger.warning("apex is not installed: training without mixed precision")
    return model, optimizer
