"""Logging helpers: a gradient norm with apex's loss scale of the loss id undone."""

import torch
from apex import amp


@torch.no_grad()
def grad_norm(module, cfg, loss_id):
    loss_scale = 1.0
    if cfg.amp and cfg.opt_level in ("O1", "O2"):
        loss_scale = amp._amp_state.loss_scalers[loss_id].loss_scale()
    norms = [p.grad.norm() for p in module.parameters() if p.grad is not None]
    return torch.stack(norms).norm().item() / float(loss_scale)
