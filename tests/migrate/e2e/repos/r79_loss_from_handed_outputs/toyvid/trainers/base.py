"""The base trainer: each update computes its loss through a method the subclass defines and
scales it with its own loss id; checkpoints keep amp's state."""

import torch

from apex import amp


class BaseTrainer:
    def __init__(self, cfg, net_G, net_D, opt_G, opt_D):
        self.cfg = cfg
        self.net_G = net_G
        self.net_D = net_D
        self.opt_G = opt_G
        self.opt_D = opt_D
        self.step = 0
        self.gen_loss = None
        self.grad_norm_G = 0.0

    def gen_update(self, data):
        self.opt_G.zero_grad()
        total_loss = self.gen_forward(data)
        with amp.scale_loss(total_loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
        self.opt_G.step()

    def dis_update(self, data):
        self.opt_D.zero_grad()
        total_loss = self.dis_forward(data)
        with amp.scale_loss(total_loss, self.opt_D, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        self.opt_D.step()

    def gen_forward(self, data):
        raise NotImplementedError

    def dis_forward(self, data):
        raise NotImplementedError

    def save_checkpoint(self, path):
        checkpoint = {
            "net_G": self.net_G.state_dict(), "net_D": self.net_D.state_dict(),
            "opt_G": self.opt_G.state_dict(), "opt_D": self.opt_D.state_dict(), "step": self.step,
        }
        if self.cfg.amp:
            checkpoint["amp"] = amp.state_dict()
        torch.save(checkpoint, path)

    def load_checkpoint(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.net_G.load_state_dict(checkpoint["net_G"])
        self.net_D.load_state_dict(checkpoint["net_D"])
        self.opt_G.load_state_dict(checkpoint["opt_G"])
        self.opt_D.load_state_dict(checkpoint["opt_D"])
        if "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        self.step = checkpoint["step"]
