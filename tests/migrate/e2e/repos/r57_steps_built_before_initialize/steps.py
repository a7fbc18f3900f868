"""The training step of trainer.py: built from the options before apex is initialized, it
keeps the network and its optimizers, scales each loss for all of them, and steps them one by
one in a method of its own."""

import torch
import torch.nn as nn
from apex import amp


class TrainingStep(nn.Module):
    def __init__(self, net, lr, fp16, device):
        super().__init__()
        self.net = net
        self.device = device
        self.fp16 = fp16
        self.optimizers = [torch.optim.SGD(net.parameters(), lr=lr)]

    def forward_backward(self, x, y, blow_up):
        loss = nn.functional.mse_loss(self.net(x.to(self.device)), y.to(self.device))
        blown = loss * 1e6 if blow_up else loss
        if self.fp16:
            with amp.scale_loss(blown, self.optimizers) as scaled_loss:
                scaled_loss.backward()
        else:
            blown.backward()
        return loss

    def do_step(self):
        for optimizer in self.optimizers:
            optimizer.step()
            optimizer.zero_grad()
