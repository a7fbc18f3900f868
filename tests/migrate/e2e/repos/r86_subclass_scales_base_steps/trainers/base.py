"""The base trainer: train() sets up mixed precision for the model and its optimizer (and
resumes, with amp's state), _forward() computes and scales the loss, _train_batch() calls it,
clips the gradients apex unscaled and steps."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


class Trainer:
    def __init__(self, model, args, device):
        self.model = model
        self.args = args
        self.device = device

    def _post_step(self, out):
        pass

    def _post_training(self):
        pass

    def _forward(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if self.args.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        self._post_step(out)
        return loss

    def _train_batch(self, x, y):
        loss = self._forward(x, y)
        if self.args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.args.clip)
        else:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip)
        self.optimizer.step()
        self.optimizer.zero_grad()
        self._post_training()
        return loss.item()

    def train(self, data, steps):
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)
        if self.args.fp16:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=self.args.opt_level)
        start = 0
        if self.args.resume:
            ckpt = torch.load(self.args.resume, map_location=self.device)
            self.model.load_state_dict(ckpt["model"])
            self.optimizer.load_state_dict(ckpt["optimizer"])
            start = ckpt["step"]
            if self.args.fp16:
                amp.load_state_dict(ckpt["amp"])
        for step in range(start, start + steps):
            toydata.log(step, "loss", self._train_batch(*toydata.batch(data, step)))
        if self.args.ckpt_out:
            state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": start + steps}
            if self.args.fp16:
                state["amp"] = amp.state_dict()
            torch.save(state, self.args.ckpt_out)
