"""Checkpoint helpers: model, optimizer and amp's loss-scaler state in one file."""

import torch
from apex import amp


def save_checkpoint(path, model, optimizer, step):
    torch.save({
        "step": step,
        "state_dict": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "amp": amp.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if "amp" in checkpoint:
        amp.load_state_dict(checkpoint["amp"])
    return checkpoint["step"]
