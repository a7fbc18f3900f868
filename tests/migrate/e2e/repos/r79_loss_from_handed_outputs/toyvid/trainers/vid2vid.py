"""The frame-by-frame trainer: gen_update runs the generator and the critic on each frame and
hands their outputs to the methods that compute, scale and step each network's loss (the
generator's with a frozen feature network, a perceptual loss); dis_update has nothing left."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from apex import amp
from toyvid.trainers.base import BaseTrainer
from toyvid.utils.meters import grad_norm

import toydata


class Trainer(BaseTrainer):
    def __init__(self, cfg, net_G, net_D, opt_G, opt_D):
        super().__init__(cfg, net_G, net_D, opt_G, opt_D)
        torch.manual_seed(1)
        features = nn.Linear(toydata.D_OUT, 8).to(next(net_G.parameters()).device)
        features.requires_grad_(False)
        self.criteria = {"Perceptual": lambda a, b: F.l1_loss(features(a), features(b)), "L1": F.l1_loss}
        self.weights = {"Perceptual": 0.5, "L1": 1.0, "GAN": 0.1}
        self.gen_losses, self.dis_losses = {}, {}
        self.sequence_length = 2

    def get_data_t(self, data, net_G_output, t):
        x, y = data
        half = x.shape[0] // self.sequence_length
        frame = {"label": x[t * half:(t + 1) * half], "image": y[t * half:(t + 1) * half]}
        if net_G_output is not None:
            frame["prev"] = net_G_output["fake_images"].detach().mean()
        return frame

    def post_process(self, data_t, net_G_output):
        return data_t, net_G_output

    def gen_update(self, data):
        net_G_output = None
        for t in range(self.sequence_length):
            data_t = self.get_data_t(data, net_G_output, t)
            net_G_output = {"fake_images": self.net_G(data_t["label"])}
            data_t, net_G_output = self.post_process(data_t, net_G_output)

            # the critic's update on this frame
            net_D_output = {"fake": self.net_D(net_G_output["fake_images"].detach()),
                            "real": self.net_D(data_t["image"])}
            self.get_dis_losses(net_D_output)

            # the generator's update on this frame
            net_D_output = {"fake": self.net_D(net_G_output["fake_images"])}
            self.get_gen_losses(data_t, net_G_output, net_D_output)

    def dis_update(self, data):
        pass

    def get_gen_losses(self, data_t, net_G_output, net_D_output):
        self.opt_G.zero_grad()
        self.gen_losses["GAN"] = F.softplus(-net_D_output["fake"]).mean()
        self.gen_losses["Perceptual"] = self.criteria["Perceptual"](net_G_output["fake_images"], data_t["image"])
        self.gen_losses["L1"] = self.criteria["L1"](net_G_output["fake_images"], data_t["image"])
        total_loss = torch.zeros((), device=data_t["image"].device)
        for key in self.gen_losses:
            if key != "total":
                total_loss = total_loss + self.gen_losses[key] * self.weights[key]
        self.gen_losses["total"] = total_loss
        with amp.scale_loss(total_loss, self.opt_G, loss_id=0) as scaled_loss:
            scaled_loss.backward()
            self.grad_norm_G = grad_norm(self.net_G, self.cfg, 0)
        self.opt_G.step()
        self.gen_loss = total_loss.detach()

    def get_dis_losses(self, net_D_output):
        self.opt_D.zero_grad()
        self.dis_losses["GAN"] = F.softplus(net_D_output["fake"]).mean() + F.softplus(-net_D_output["real"]).mean()
        total_loss = self.dis_losses["GAN"] * self.weights["GAN"]
        with amp.scale_loss(total_loss, self.opt_D, loss_id=1) as scaled_loss:
            scaled_loss.backward()
        self.opt_D.step()
