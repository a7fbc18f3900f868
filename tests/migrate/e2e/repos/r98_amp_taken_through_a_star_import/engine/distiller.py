"""The distiller: amp (and has_apex) come from ``from .utils import *``; train() initializes,
scales, clips the master parameters, steps, and keeps amp's state in its checkpoint."""

import torch

import toydata

from .utils import *


class Distiller:
    def __init__(self, model, args, device):
        self.model = model
        self.args = args
        self.device = device
        self.fp16 = args.opt_level != "O0"

    def train(self, data, steps):
        optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        if self.fp16:
            if not has_apex:
                raise ImportError("mixed precision needs apex")
            self.model, optimizer = amp.initialize(self.model, optimizer, opt_level=self.args.opt_level)
        start = 0
        if self.args.resume:
            ckpt = torch.load(self.args.resume, map_location=self.device)
            self.model.load_state_dict(ckpt["model"])
            optimizer.load_state_dict(ckpt["optimizer"])
            start = ckpt["step"]
            if self.fp16:
                amp.load_state_dict(ckpt["amp"])
        for step in range(start, start + steps):
            x, y = to_device(toydata.batch(data, step), self.device)
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            if self.fp16:
                with amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), self.args.clip)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip)
            optimizer.step()
            optimizer.zero_grad()
            toydata.log(step, "loss", loss.item())
        if self.args.ckpt_out:
            state = {"model": self.model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + steps}
            if self.fp16:
                state["amp"] = amp.state_dict()
            torch.save(state, self.args.ckpt_out)
