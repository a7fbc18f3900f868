"""The model runs its own forward under autocast when --fp16 is on (CodeGen's shape: the
transformer enters torch.autocast itself, for its native and its apex branch alike)."""

import torch

import toydata


class AutocastMLP(torch.nn.Module):
    def __init__(self, fp16, device_type):
        super().__init__()
        self.net = toydata.make_mlp()
        self.fp16 = fp16
        self.device_type = device_type

    def forward(self, x):
        with torch.autocast(self.device_type, dtype=torch.float16, enabled=self.fp16):
            return self.net(x)
