"""Checkpoint helpers: model, optimizer and amp's loss-scaler state in one file.  The loader
also serves evaluate.py, which restores the model alone."""

import torch
from apex import amp


def save_checkpoint(path, model, optimizer, step):
    state = {"step": step, "state_dict": model.state_dict(), "optimizer": optimizer.state_dict()}
    state["amp"] = amp.state_dict()
    torch.save(state, path)


def load_checkpoint(path, model, optimizer=None, with_amp=True):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    if optimizer is None:
        return checkpoint["step"]
    optimizer.load_state_dict(checkpoint["optimizer"])
    if with_amp and "amp" in checkpoint:
        amp.load_state_dict(checkpoint["amp"])
    return checkpoint["step"]
