"""The model: its forward is decorated with auto_fp16 and carries the fp16_enabled switch, and
train_step returns the loss dict the runner keeps as its outputs."""

import torch.nn.functional as F
from torch import nn

import toydata
from mmcv.runner import auto_fp16


class ToyDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = toydata.make_mlp()
        self.fp16_enabled = False

    @auto_fp16()
    def forward(self, x, y):
        return F.mse_loss(self.net(x), y)

    def train_step(self, batch, optimizer):
        x, y = batch
        return dict(loss=self(x, y))
