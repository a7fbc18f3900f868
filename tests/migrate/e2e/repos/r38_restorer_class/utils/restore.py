"""Restorers: what a run needs to go on after an interruption, in one file."""

import os

import torch
from apex import amp


class KeyedRestorer:
    """Keeps whatever objects it is handed by keyword (an older interface no script builds)."""

    def __init__(self, opts, **objects):
        self.objects = objects
        self.amp = opts.fp16

    def save(self, path):
        state = {name: obj.state_dict() for name, obj in self.objects.items()}
        if self.amp:
            state["amp"] = amp.state_dict()
        torch.save(state, path)


class RunRestorer:
    """Resumes from ``opts.resume`` when it exists; counts steps and saves every few."""

    def __init__(self, opts, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.amp = opts.fp16
        self.every = opts.save_every
        self.step_done = 0
        if opts.resume and os.path.isfile(opts.resume):
            self.restore(opts.resume)

    def step(self):
        self.step_done += 1
        if self.step_done % self.every == 0:
            self.save("restore.pt")

    def save(self, path):
        state = {"step": self.step_done, "model": self.model.state_dict(),
                 "optimizer": self.optimizer.state_dict()}
        if self.amp:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def restore(self, path):
        state = torch.load(path, map_location="cpu")
        self.step_done = state["step"]
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.amp:
            amp.load_state_dict(state["amp"])
