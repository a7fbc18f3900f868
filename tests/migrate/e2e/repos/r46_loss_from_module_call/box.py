"""A training module in the shape of knowledge-distillation toolkits: forward() runs the network
and returns the loss, which the launcher hands straight back to update_params(); that one divides
it for accumulation, scales it and steps (apex O1 cast the forward pass wherever it ran).  An
accelerator branch moves the network to the accelerator's device; apex is the other branch."""

import torch
import torch.nn as nn

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


class Box(nn.Module):
    def __init__(self, lr, device, fp16, opt_level, accelerator=None, accum=1, max_norm=5.0):
        super().__init__()
        self.device = torch.device(device)
        self.accelerator = accelerator
        self.net = toydata.make_mlp().to(device)
        self.opt = torch.optim.SGD(self.net.parameters(), lr=lr)
        self.accum = accum
        self.max_norm = max_norm
        self.count = 0
        self.apex = False
        if accelerator is not None:
            self.net = self.net.to(self.accelerator.device)
        elif fp16:
            if amp is None:
                raise RuntimeError("fp16 needs apex")
            self.net, self.opt = amp.initialize(self.net, self.opt, opt_level=opt_level, verbosity=0)
            self.apex = True

    def forward(self, x, y):
        out = self.net(x.to(self.device))
        return nn.functional.mse_loss(out, y.to(self.device))

    def update_params(self, loss):
        self.count += 1
        loss /= self.accum
        if self.apex:
            with amp.scale_loss(loss, self.opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if self.count % self.accum == 0:
            params = amp.master_params(self.opt) if self.apex else self.net.parameters()
            torch.nn.utils.clip_grad_norm_(params, self.max_norm)
            self.opt.step()
            self.opt.zero_grad()

    def save(self, path, step):
        state = {"net": self.net.state_dict(), "opt": self.opt.state_dict(), "step": step}
        if self.apex:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
        if self.apex and "amp" in state:
            amp.load_state_dict(state["amp"])
        return state["step"]
