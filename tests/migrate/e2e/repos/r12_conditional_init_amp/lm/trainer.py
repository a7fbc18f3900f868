"""Trainer whose __init__ sets up apex only when asked: ``--amp N`` >= 0 runs init_amp() with
opt level ON, ``--amp -1`` trains in plain fp32 and never touches apex.  optimize() branches on
the same setting; the checkpoint carries amp's state only when amp was set up.  The forward
pass is in a subclass (RegressionTrainer), which inherits optimize()."""

import torch
import torch.nn.functional as F
from apex import amp

import toydata


class Trainer:
    def __init__(self, model, optimizer, params):
        self.params = params
        self.model = model
        self.optimizer = optimizer
        self.n_iter = 0
        if params.amp >= 0:
            self.init_amp()

    def init_amp(self):
        level = "O%i" % self.params.amp
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=level)

    def optimize(self, loss):
        params = self.params
        if params.amp == -1:
            self.optimizer.zero_grad()
            loss.backward()
            if params.clip_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), params.clip_grad_norm)
            self.optimizer.step()
        else:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            if params.clip_grad_norm > 0:
                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), params.clip_grad_norm)
            self.optimizer.step()
            self.optimizer.zero_grad()

    def save_checkpoint(self, path):
        state = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(), "n_iter": self.n_iter}
        if self.params.amp >= 0:
            state["amp"] = amp.state_dict()
        torch.save(state, path)

    def reload_checkpoint(self, path):
        checkpoint = torch.load(path, map_location=self.params.device)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.params.amp >= 0:
            amp.load_state_dict(checkpoint["amp"])
        self.n_iter = checkpoint["n_iter"]


class RegressionTrainer(Trainer):
    def __init__(self, model, optimizer, params):
        self.loss_name = "loss"
        super().__init__(model, optimizer, params)

    def regression_step(self, data):
        x, y = (t.to(self.params.device) for t in toydata.batch(data, self.n_iter))
        self.model.train()
        prediction = self.model(x)
        loss = F.mse_loss(prediction, y)
        self.optimize(loss)
        toydata.log(self.n_iter, self.loss_name, loss.item())
        self.n_iter += 1
