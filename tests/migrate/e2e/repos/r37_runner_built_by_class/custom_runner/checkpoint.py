"""save_checkpoint: model, optimizer, meta and apex's loss-scaler state in one file."""

import torch

try:
    import apex
except ImportError:
    print("apex is not installed")


def save_checkpoint(model, path, optimizer=None, meta=None):
    checkpoint = {"meta": dict(meta or {}), "state_dict": model.state_dict()}
    if optimizer is not None:
        checkpoint["optimizer"] = optimizer.state_dict()
    checkpoint["amp"] = apex.amp.state_dict()
    torch.save(checkpoint, path)
