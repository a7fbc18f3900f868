"""Training tools usable with or without apex: hand them apex.amp as ``amp`` when it is on."""

import torch


class Checkpointer:
    """Writes and reads model, optimizer, step and (when given) amp's loss-scaler state."""

    def __init__(self, model, optimizer, amp=None):
        self.model = model
        self.optimizer = optimizer
        self.amp = amp

    def save(self, path, step):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": step}
        if self.amp is not None:
            state["amp"] = self.amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.amp is not None and "amp" in state:
            self.amp.load_state_dict(state["amp"])
        return state["step"]


def clip_gradients(amp, optimizer, max_norm):
    """Clips what the optimizer will step (apex's master parameters when ``amp`` is given)."""
    params = amp.master_params(optimizer) if amp is not None else (
        p for group in optimizer.param_groups for p in group["params"])
    return torch.nn.utils.clip_grad_norm_(params, max_norm)
