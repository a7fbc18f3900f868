"""The trainer: a GradScaler of its own only when it runs its own mixed precision (using_amp),
apex's loss scaling when the launcher set apex up (using_apex_amp); every other path backs and
steps plainly.  Each step clips the gradients the method it calls backed (unscaled first on its
own GradScaler's path).  Checkpoints keep the GradScaler's state under "scaler" and apex's
under "amp"."""

import contextlib

import torch
import torch.nn.functional as F

import toydata

try:
    import apex.amp
except ImportError:
    pass


class Trainer:
    def __init__(self, model, optimizer, device, max_norm, update_interval=1, using_amp=False, using_apex_amp=False):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.max_norm = max_norm
        self.update_interval = update_interval
        self.using_amp = using_amp
        if using_amp:
            self._scaler = torch.amp.GradScaler(device.type)
        self.using_apex_amp = using_apex_amp

    def _forward_backward(self, x, y, is_update_batch):
        with torch.autocast(self.device.type, dtype=torch.float16) if self.using_amp else contextlib.nullcontext():
            loss = F.mse_loss(self.model(x), y)
        if self.update_interval > 1:
            loss = loss / self.update_interval
        if self.using_amp:
            loss = self._scaler.scale(loss)
        if self.using_apex_amp:
            with apex.amp.scale_loss(loss, self.optimizer, delay_unscale=not is_update_batch) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        return loss

    def _step(self, step, x, y):
        is_update_batch = (step + 1) % self.update_interval == 0
        loss = self._forward_backward(x, y, is_update_batch)
        if is_update_batch:
            if self.using_amp:
                self._scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_norm)
            if self.using_amp:
                self._scaler.step(self.optimizer)
                self._scaler.update()
            else:
                self.optimizer.step()
            self.optimizer.zero_grad()
        return loss

    def fit(self, data, first, steps):
        self.model.train()
        for step in range(first, first + steps):
            x, y = (t.to(self.device) for t in toydata.batch(data, step))
            loss = self._step(step, x, y)
            toydata.log(step, "loss", loss.item())

    def save(self, path, step):
        state = {"step": step, "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict()}
        if self.using_amp:
            state["scaler"] = self._scaler.state_dict()
        if self.using_apex_amp:
            state["amp"] = apex.amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        state = torch.load(path, map_location="cpu")
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.using_amp:
            self._scaler.load_state_dict(state["scaler"])
        if self.using_apex_amp:
            apex.amp.load_state_dict(state["amp"])
        return state["step"]
