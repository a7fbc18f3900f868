"""Checkpoints and a gradient-norm helper; amp's loss-scaler state is saved beside the
optimizer's when amp is on."""

import torch

try:
    from apex import amp
except ImportError:
    amp = None


def load_checkpoint(config, model, optimizer):
    checkpoint = torch.load(config.resume, map_location="cpu")
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if "amp" in checkpoint and config.amp_opt_level != "O0" and checkpoint["opt_level"] != "O0":
        amp.load_state_dict(checkpoint["amp"])
    return checkpoint["step"]


def save_checkpoint(config, step, model, optimizer):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
             "opt_level": config.amp_opt_level}
    if config.amp_opt_level != "O0":
        state["amp"] = amp.state_dict()
    torch.save(state, config.ckpt_out)


def get_grad_norm(parameters, norm_type=2):
    grads = [p.grad for p in parameters if p.grad is not None]
    return torch.norm(torch.stack([torch.norm(g.detach(), norm_type) for g in grads]), norm_type)
