"""The trainer: builds its steps, initializes apex for the network and every step's
optimizer, feeds each step the chunks of a batch and keeps amp's state in its checkpoints."""

import torch
from apex import amp

from steps import Step


class Trainer:
    def __init__(self, opt, net, device):
        self.opt = opt
        self.env = {"step": 0, "mega_batch_factor": opt["mega_batch_factor"]}
        self.net = net.to(device)
        self.steps = []
        for name, step_opt in opt["steps"].items():
            step = Step(name, step_opt, self.env, self.net, device)
            step.define_optimizers(opt["lr"])
            self.steps.append(step)
        self.optimizers = [o for s in self.steps for o in s.optimizers]
        if "amp_opt_level" in opt:
            self.env["amp"] = True
            self.net, self.optimizers = amp.initialize(self.net, self.optimizers, opt_level=opt["amp_opt_level"],
                                                       num_losses=len(self.steps))
        else:
            self.env["amp"] = False

    def optimize(self, x, y, it):
        self.env["step"] = it
        chunks = self.env["mega_batch_factor"]
        state = {"x": list(x.chunk(chunks)), "y": list(y.chunk(chunks))}  # moved by each step
        losses = []
        for loss_id, step in enumerate(self.steps):
            for o in step.optimizers:
                o.zero_grad()
            for m in range(chunks):
                step.do_forward_backward(state, m, loss_id)
            step.do_step()
            losses.append(step.last_loss)
        return sum(losses)

    def training_state(self, it):
        state = {"iter": it, "net": self.net.state_dict(), "optimizers": [o.state_dict() for o in self.optimizers]}
        if "amp_opt_level" in self.opt:
            state["amp"] = amp.state_dict()
        return state

    def resume(self, state):
        self.net.load_state_dict(state["net"])
        for o, saved in zip(self.optimizers, state["optimizers"]):
            o.load_state_dict(saved)
        if "amp" in state:
            amp.load_state_dict(state["amp"])
        return state["iter"]
