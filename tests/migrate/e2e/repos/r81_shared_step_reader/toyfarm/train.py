"""The trainer: scales the loss through apex when use_amp is set, else a plain backward;
at each accumulation boundary it clips (apex's master params or the model's) and steps."""

import torch
import torch.nn.functional as F

import toydata

try:
    from apex import amp
    AMP_AVAILABLE = True
except ImportError:
    AMP_AVAILABLE = False


class Trainer:
    def __init__(self, model, optimizer, device, grad_acc_steps=1, max_grad_norm=None, use_amp=None):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.grad_acc_steps = grad_acc_steps
        self.max_grad_norm = max_grad_norm
        self.use_amp = use_amp
        self.global_step = 0
        if use_amp and not AMP_AVAILABLE:
            raise ImportError(f"Got use_amp = {use_amp}, but cannot find apex.")

    def train(self, data, steps):
        for _ in range(steps):
            for micro in range(self.grad_acc_steps):
                x, y = (t.to(self.device) for t in toydata.batch(data, self.global_step * self.grad_acc_steps + micro))
                loss = F.mse_loss(self.model(x), y)
                self.backward_propagate(loss, micro + 1)
            toydata.log(self.global_step, "loss", loss.detach())
            self.global_step += 1

    def backward_propagate(self, loss, step):
        loss = loss / self.grad_acc_steps
        if self.use_amp:
            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        if step % self.grad_acc_steps == 0:
            if self.max_grad_norm is not None:
                if self.use_amp:
                    torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), self.max_grad_norm)
                else:
                    torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.max_grad_norm)
            self.optimizer.step()
            self.optimizer.zero_grad()
        return loss

    def save(self, path):
        torch.save({"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                    "step": self.global_step}, path)

    def load(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self.global_step = checkpoint["step"]
