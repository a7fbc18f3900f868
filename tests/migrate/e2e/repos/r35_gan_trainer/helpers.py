"""Training helpers with no apex in them: the gradient clip takes (name, parameter) pairs."""

import torch


def clip_named(named_params, max_norm):
    params = [p for _, p in named_params if p.grad is not None]
    return torch.nn.utils.clip_grad_norm_(params, max_norm)
