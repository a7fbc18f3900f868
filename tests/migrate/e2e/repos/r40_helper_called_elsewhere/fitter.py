"""A trainer class in the shape of research NLP libraries: the constructor hands the model and
its optimizer to apex when an opt level is given, a public method clips the gradients apex's
loss scaler has unscaled (read through amp.master_params), and resuming initializes the same
objects again before loading amp's state (apex refuses that: this path only runs natively)."""

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


class Fitter:
    def __init__(self, model, lr, device, opt_level=None, max_norm=0.5):
        self.model = model
        self.device = device
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.opt_level = opt_level
        self.max_norm = max_norm
        if self.opt_level is not None:
            if amp is None:
                raise RuntimeError("an opt level needs apex")
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=self.opt_level,
                                                        verbosity=0)

    def rescale_gradients(self):
        """Clip the gradients to ``max_norm``; returns their norm before clipping."""
        if self.opt_level is not None:
            params = [p for p in amp.master_params(self.optimizer) if p.grad is not None]
        else:
            params = [p for p in self.model.parameters() if p.grad is not None]
        return torch.nn.utils.clip_grad_norm_(params, self.max_norm)

    def train(self, data, start, steps):
        self.model.train()
        for idx in range(start, start + steps):
            x, y = (t.to(self.device) for t in toydata.batch(data, idx))
            self.optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(self.model(x), y)
            if self.opt_level is not None:
                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.rescale_gradients()
            self.optimizer.step()
            toydata.log(idx, "loss", loss.item())
        return start + steps

    def save(self, path, step):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "step": step}
        if self.opt_level is not None:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def restore(self, path):
        state = torch.load(path, map_location="cpu")
        if self.opt_level is not None and "amp" in state:
            self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=self.opt_level,
                                                        verbosity=0)
            amp.load_state_dict(state["amp"])
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        return state["step"]
