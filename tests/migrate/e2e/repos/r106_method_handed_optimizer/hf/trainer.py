"""The trainer (the Hugging Face Trainer of 2020's shape): train() makes the optimizer, sets apex
up with it when fp16 is on, and calls _training_step(model, inputs, optimizer), which scales the
loss over the optimizer it is handed; train() clips amp.master_params and steps at each
accumulation boundary.  Checkpoints keep apex's state under "amp"."""

import torch
import torch.nn.functional as F

import toydata

try:
    from apex import amp

    _has_apex = True
except ImportError:
    _has_apex = False


class Trainer:
    def __init__(self, model, device, fp16=False, opt_level="O1", accumulation=2, max_norm=0.5):
        self.model = model
        self.device = device
        self.fp16 = fp16
        self.opt_level = opt_level
        self.accumulation = accumulation
        self.max_norm = max_norm

    def get_optimizer(self, model):
        return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    def train(self, data, first, steps, resume="", ckpt_out=""):
        model = self.model
        optimizer = self.get_optimizer(model)
        if self.fp16:
            if not _has_apex:
                raise ImportError("fp16 training needs NVIDIA apex")
            model, optimizer = amp.initialize(model, optimizer, opt_level=self.opt_level)
        if resume:
            state = torch.load(resume, map_location="cpu")
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            if self.fp16:
                amp.load_state_dict(state["amp"])
            first = state["step"]
        model.zero_grad()
        for step in range(first, first + steps):
            inputs = [t.to(self.device) for t in toydata.batch(data, step)]
            loss = self._training_step(model, inputs, optimizer)
            toydata.log(step, "loss", loss)
            if (step + 1) % self.accumulation == 0:
                if self.fp16:
                    torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), self.max_norm)
                else:
                    torch.nn.utils.clip_grad_norm_(model.parameters(), self.max_norm)
                optimizer.step()
                model.zero_grad()
        if ckpt_out:
            state = {"step": first + steps, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
            if self.fp16:
                state["amp"] = amp.state_dict()
            torch.save(state, ckpt_out)
        return model

    def _training_step(self, model, inputs, optimizer):
        model.train()
        x, y = inputs
        loss = F.mse_loss(model(x), y)
        if self.accumulation > 1:
            loss = loss / self.accumulation
        if self.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss.item()
