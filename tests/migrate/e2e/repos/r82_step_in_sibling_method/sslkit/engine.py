"""The engine: model, optimizer, data, and the precision its config picks ("apex", "native" or
"fp32"); apex is set up in setup(), its loss scaler kept in the engine's state."""

import torch
from apex import amp

import toydata


class Engine:
    def __init__(self, model, optimizer, device, precision="apex", opt_level="O1", clip=1.0):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.precision = precision
        self.opt_level = opt_level
        self.clip = clip
        self.scaler = torch.amp.GradScaler(device) if precision == "native" else None
        self.step_count = 0
        self.losses = []
        self.data = toydata.make_data()

    def setup(self):
        if self.precision == "apex":
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=self.opt_level)

    def batch(self):
        return (t.to(self.device) for t in toydata.batch(self.data, self.step_count))

    def after_backward(self):
        """Clip the gradients; the native scaler's are unscaled first."""
        if self.clip <= 0:
            return
        if self.precision == "native":
            self.scaler.unscale_(self.optimizer)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.clip)

    def state(self):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                 "step_count": self.step_count}
        if self.precision == "apex":
            state["amp"] = amp.state_dict()
        elif self.scaler is not None:
            state["amp"] = self.scaler.state_dict()
        return state

    def restore(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.step_count = state["step_count"]
        if "amp" in state:
            if self.precision == "apex":
                amp.load_state_dict(state["amp"])
            else:
                self.scaler.load_state_dict(state["amp"])
