"""The evaluation solver: the training setup copied (optimizers, amp.initialize in sequence,
zero_grad), the trained networks loaded, then forward passes only; returns their outputs."""

import os

import torch
from apex import amp

import toydata


class Solver:
    def __init__(self, config):
        self.config = config

    def test(self):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net_g, net_d = toydata.make_mlp().to(device), torch.nn.Linear(toydata.D_OUT, 1).to(device)
        g_optimizer = torch.optim.SGD(net_g.parameters(), lr=0.05)
        d_optimizer = torch.optim.SGD(net_d.parameters(), lr=0.05)
        net_g, g_optimizer = amp.initialize(net_g, g_optimizer, opt_level=self.config.opt_level)
        net_d, d_optimizer = amp.initialize(net_d, d_optimizer, opt_level=self.config.opt_level)
        g_optimizer.zero_grad()
        d_optimizer.zero_grad()
        net_g.load_state_dict(torch.load(os.path.join(self.config.nets, "net_g.pt"), map_location=device))
        net_d.load_state_dict(torch.load(os.path.join(self.config.nets, "net_d.pt"), map_location=device))
        net_g.eval()
        x, _ = toydata.make_data()
        with torch.no_grad():
            fakes = net_g(x[:32].to(device))
            return {"fakes": fakes.float().cpu(), "scores": net_d(fakes).float().cpu()}
