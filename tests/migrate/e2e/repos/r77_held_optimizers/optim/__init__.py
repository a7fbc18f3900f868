"""The optimizer holder: it owns the torch optimizers (self.G, self.D), initializes apex for
them in set_amp and keeps amp's state for the checkpoints."""

import torch

try:
    from apex import amp
except ImportError:
    pass


class Optimizer(object):
    def __init__(self, args, model):
        self.args = args
        self.G = torch.optim.SGD(model.model.G.parameters(), lr=args.lr, momentum=0.9)
        if model.model.D is not None:
            self.D = torch.optim.SGD(model.model.D.parameters(), lr=args.lr)
        else:
            self.D = None

    def set_amp(self, model):
        if not self.args.amp:
            return model

        model = model.to(self.args.device)
        kwargs_amp = {
            "opt_level": self.args.opt_level,
            "loss_scale": self.args.loss_scale,
            "max_loss_scale": self.args.max_loss_scale,
        }
        if model.model.D is None:
            model, self.G = amp.initialize(model, self.G, **kwargs_amp)
        else:
            model, [self.G, self.D] = amp.initialize(model, [self.G, self.D], **kwargs_amp)
        return model

    def zero_grad(self):
        self.G.zero_grad()

    def step(self):
        self.G.step()

    def state_dict(self):
        state = {"G": self.G.state_dict()}
        if self.D is not None:
            state["D"] = self.D.state_dict()
        return state

    def load_state_dict(self, state):
        self.G.load_state_dict(state["G"])
        if self.D is not None:
            self.D.load_state_dict(state["D"])

    def amp_state(self):
        return amp.state_dict()

    def load_amp(self, state):
        if self.args.amp:
            amp.load_state_dict(state)
