"""The base trainer: train() builds the optimizer (through a hook subclasses wrap it in) and
sets up mixed precision, _train_batch() scales the loss, hands the scaled loss to the
backward hook, clips the gradients apex unscaled and calls the step hook (without fp16, a
plain step of its own)."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


class HalfTrainer:
    def __init__(self, model, args, device):
        self.model = model
        self.args = args
        self.device = device

    def _make_optimizer(self):
        return torch.optim.SGD(self.model.parameters(), lr=0.05, momentum=0.9)

    def _apex_backward(self, scaled_loss):
        scaled_loss.backward()

    def _apex_step(self):
        self.optimizer.step()

    def _plain_batch(self, x, y):
        loss = torch.nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss.item()

    def _train_batch(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        if not self.args.fp16:
            return self._plain_batch(x, y)
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            self._apex_backward(scaled_loss)
        if self.args.clip:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.args.clip)
        self._apex_step()
        self.optimizer.zero_grad()
        return loss.item()

    def train(self, data, steps):
        self.optimizer = self._make_optimizer()
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
