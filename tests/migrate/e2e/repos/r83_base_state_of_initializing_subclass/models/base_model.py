"""The base of every model (DL-Art-School's BaseModel): it keeps the optimizers, and saves and
resumes the training state, amp's with it when the options name an opt level."""

import torch
from apex import amp


class BaseModel:
    def __init__(self, opt):
        self.opt = opt
        self.device = opt["device"]
        self.optimizers = []

    def save_training_state(self, path, step):
        state = {"net": self.net.state_dict(), "optimizers": [o.state_dict() for o in self.optimizers],
                 "step": step}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def resume_training(self, path):
        state = torch.load(path, map_location="cpu")
        self.net.load_state_dict(state["net"])
        for o, saved in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(saved)
        if "amp" in state:
            amp.load_state_dict(state["amp"])
        return state["step"]
