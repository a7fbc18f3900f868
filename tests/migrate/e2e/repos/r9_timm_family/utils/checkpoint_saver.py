"""Checkpoints with the loss scaler's state under the scaler's own key (no apex here)."""

import torch


def save_checkpoint(path, model, optimizer, step, amp_scaler=None):
    state = {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    if amp_scaler is not None:
        state[amp_scaler.state_dict_key] = amp_scaler.state_dict()
    torch.save(state, path)


def resume_checkpoint(path, model, optimizer, loss_scaler=None):
    """Load ``path`` into the objects given; the step to go on from."""
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if loss_scaler is not None and loss_scaler.state_dict_key in checkpoint:
        loss_scaler.load_state_dict(checkpoint[loss_scaler.state_dict_key])
    return checkpoint["step"]
