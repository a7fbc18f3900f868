"""The learner (it names no mixed-precision library). ``self.amp`` is apex.amp when mixed precision was enabled
on it (core/mixed.py), else None; each step runs the batch in chunks, scaling every chunk's loss
(the gradients unscaled once, at the last chunk) before one optimizer step."""

import torch
import torch.nn.functional as F


class Learner:
    def __init__(self, net, device, lr=1e-3, chunks=1):
        self.net = net
        self.device = device
        self.optimizer = torch.optim.Adam(net.parameters(), lr=lr)
        self.amp = None
        self.chunks = chunks
        self.step = 0

    def train_step(self, batch):
        self.net.train()
        self.optimizer.zero_grad()
        total = 0.0
        for i, (x, y) in enumerate(zip(*(t.chunk(self.chunks) for t in batch))):
            x, y = x.to(self.device), y.to(self.device)
            loss = F.mse_loss(self.net(x), y) / self.chunks
            total += loss.item()
            if self.amp is not None:
                last = i == self.chunks - 1
                with self.amp.scale_loss(loss, self.optimizer, delay_unscale=not last) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
        self.optimizer.step()
        return total

    def save(self, path):
        state = {"net": self.net.state_dict(), "optimizer": self.optimizer.state_dict(), "step": self.step}
        if self.amp is not None:
            state["amp"] = self.amp.state_dict()
        torch.save(state, path)

    def load(self, path):
        checkpoint = torch.load(path, map_location=self.device)
        self.net.load_state_dict(checkpoint["net"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        if self.amp is not None:
            self.amp.load_state_dict(checkpoint["amp"])
        self.step = checkpoint["step"]
