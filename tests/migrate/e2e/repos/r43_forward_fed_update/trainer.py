"""A trainer module in the shape of image-translation GAN repositories: forward() runs the
networks and returns their outputs, which the launcher hands to the update method; that one
runs a head on them and computes and scales the loss (apex O1 cast both passes)."""

import torch
import torch.nn as nn

import toydata

try:
    from apex import amp
except ImportError:
    print("no apex: fp16 needs it")


class Translator(nn.Module):
    def __init__(self, lr, device, fp16, opt_level):
        super().__init__()
        self.device = torch.device(device)
        self.body = toydata.make_mlp().to(device)
        self.head = nn.Linear(toydata.D_OUT, toydata.D_OUT).to(device)
        self.opt = torch.optim.SGD(list(self.body.parameters()) + list(self.head.parameters()), lr=lr)
        self.fp16 = fp16
        if fp16:
            (self.body, self.head), self.opt = amp.initialize([self.body, self.head], self.opt, opt_level=opt_level,
                                                             verbosity=0)

    def forward(self, x):
        x = x.to(self.device)
        out = self.body(x)
        twice = self.body(x * 0.5)
        return out, twice

    def gen_update(self, out, twice, y):
        self.opt.zero_grad()
        y = y.to(self.device)
        refined = self.head(out)
        loss = nn.functional.mse_loss(refined, y) + 0.1 * nn.functional.mse_loss(twice, out.detach())
        if self.fp16:
            with amp.scale_loss(loss, self.opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self.opt.step()
        return loss.item()

    def save(self, path, step):
        state = {"body": self.body.state_dict(), "head": self.head.state_dict(), "opt": self.opt.state_dict(),
                 "step": step}
        if self.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.body.load_state_dict(state["body"])
        self.head.load_state_dict(state["head"])
        self.opt.load_state_dict(state["opt"])
        if self.fp16 and "amp" in state:
            amp.load_state_dict(state["amp"])
        return state["step"]
