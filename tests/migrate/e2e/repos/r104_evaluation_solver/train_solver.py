"""The training solver: a generator and a critic initialized in sequence, each loss scaled."""

import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


class Solver:
    def __init__(self, config):
        self.config = config

    def train(self):
        torch.manual_seed(0)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        net_g, net_d = toydata.make_mlp().to(device), torch.nn.Linear(toydata.D_OUT, 1).to(device)
        g_optimizer = torch.optim.SGD(net_g.parameters(), lr=0.05)
        d_optimizer = torch.optim.SGD(net_d.parameters(), lr=0.05)
        net_g, g_optimizer = amp.initialize(net_g, g_optimizer, opt_level=self.config.opt_level)
        net_d, d_optimizer = amp.initialize(net_d, d_optimizer, opt_level=self.config.opt_level)
        data = toydata.make_data()
        for step in range(self.config.steps):
            x, y = (t.to(device) for t in toydata.batch(data, step))
            real, fake = torch.ones(len(y), 1, device=device), torch.zeros(len(y), 1, device=device)
            d_loss = F.mse_loss(net_d(y), real) + F.mse_loss(net_d(net_g(x).detach()), fake)
            d_optimizer.zero_grad()
            with amp.scale_loss(d_loss, d_optimizer) as scaled_loss:
                scaled_loss.backward()
            d_optimizer.step()
            g_loss = F.mse_loss(net_g(x), y) + 0.1 * F.mse_loss(net_d(net_g(x)), real)
            g_optimizer.zero_grad()
            with amp.scale_loss(g_loss, g_optimizer) as scaled_loss:
                scaled_loss.backward()
            g_optimizer.step()
            toydata.log(step, "loss", g_loss.item())
        os.makedirs(self.config.nets, exist_ok=True)
        torch.save(net_g.state_dict(), os.path.join(self.config.nets, "net_g.pt"))
        torch.save(net_d.state_dict(), os.path.join(self.config.nets, "net_d.pt"))
