"""Checkpoint helpers that work with or without apex: pass apex.amp as ``amp`` to include its state."""

import torch


def snapshot(path, model, optimizer, step, amp=None):
    state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    if amp is not None:
        state["amp"] = amp.state_dict()
    torch.save(state, path)


def restore(path, model, optimizer, amp=None):
    state = torch.load(path, map_location="cpu")
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if amp is not None and "amp" in state:
        amp.load_state_dict(state["amp"])
    return state["step"]
