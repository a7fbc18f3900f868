"""The trainer (BERT-for-RRC-ABSA's shape): train() sets up mixed precision for the model and
its optimizer (and resumes, with amp's state), _forward() computes the loss and, when asked,
scales it, _train_batch() clips and steps; evaluate() calls _forward() without a backward, on a trainer that may never have
trained."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


class Trainer:
    """Trains and evaluates one model."""

    def __init__(self, model, args, device):
        self.model = model
        self.args = args
        self.device = device

    def _forward(self, x, y, backprop=True):
        x, y = x.to(self.device), y.to(self.device)
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if backprop:
            if self.args.fp16:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
        return loss, out

    def _train_batch(self, x, y):
        loss, _ = self._forward(x, y)
        if self.args.fp16:
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.args.clip)
        else:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip)
        self.optimizer.step()
        self.optimizer.zero_grad()
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

    def evaluate(self, data):
        """The mean loss over four batches, and whether the forward pass ran in float16."""
        losses, half = [], False
        with torch.no_grad():
            for step in range(4):
                loss, out = self._forward(*toydata.batch(data, step), backprop=False)
                losses.append(loss.float())
                half = half or out.dtype == torch.float16
        return torch.stack(losses).mean(), half
