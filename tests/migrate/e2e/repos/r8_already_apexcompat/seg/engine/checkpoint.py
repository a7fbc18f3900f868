"""Save/load with the amp loss-scaler state (apex's format, written by apexcompat.amp)."""

import torch
from apexcompat import amp


def save_checkpoint(path, model, optimizer, step):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "amp": amp.state_dict(), "step": step}, path)


def load_checkpoint(path, model, optimizer, device):
    checkpoint = torch.load(path, map_location=device)
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    amp.load_state_dict(checkpoint["amp"])
    return checkpoint["step"]
