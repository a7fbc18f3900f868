"""One training step of the trainer (DL-Art-School's ConfigurableStep): it owns the optimizer
of its network and scales its loss under its own loss id."""

import torch
import torch.nn as nn
from apex import amp


class ConfigurableStep:
    def __init__(self, step_opt, env):
        self.env = env
        self.device = env["device"]
        self.params = step_opt["params"]
        self.optimizer = torch.optim.SGD(self.params, lr=step_opt["lr"])

    def do_forward_backward(self, net, x, y, loss_id, blow_up):
        loss = nn.functional.mse_loss(net(x.to(self.device)), y.to(self.device))
        blown = loss * 1e6 if blow_up else loss
        if self.env["amp"]:
            with amp.scale_loss(blown, self.optimizer, loss_id) as scaled_loss:
                scaled_loss.backward()
        else:
            blown.backward()
        return loss

    def do_step(self):
        self.optimizer.step()
        self.optimizer.zero_grad()
