"""A segmentation-style trainer base class: mixed precision is set up lazily, once, by a
method several entry points call (a run-once flag guards it, and a checkpoint load clears
the flag to set it up again); each iteration checks the same switches to choose between a
plain backward and apex's scaled one."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


class BaseTrainer:
    def __init__(self, model, lr, fp16, opt_level="O1", device="cpu"):
        self.model = model
        self.device = device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.fp16 = fp16
        self.opt_level = opt_level
        self.amp_ready = False
        self.step_count = 0

    def setup_amp(self):
        if self.fp16 and amp is not None:
            if not self.amp_ready:
                self.model, self.optimizer = amp.initialize(
                    self.model, self.optimizer, opt_level=self.opt_level, verbosity=0
                )
                self.amp_ready = True

    def run_iteration(self, batch):
        x, y = (t.to(self.device) for t in batch)
        self.optimizer.zero_grad()
        out = self.model(x)
        loss = torch.nn.functional.mse_loss(out, y)
        if not self.fp16 or amp is None:
            loss.backward()
        else:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, data, steps):
        self.setup_amp()
        self.model.train()
        for _ in range(steps):
            loss = self.run_iteration(toydata.batch(data, self.step_count))
            toydata.log(self.step_count, "loss", loss)
            self.step_count += 1

    def save(self, path):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": self.step_count}
        if self.fp16 and amp is not None:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self.step_count = checkpoint["step"]
        self.amp_ready = False
        self.setup_amp()
        if self.fp16 and amp is not None and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
