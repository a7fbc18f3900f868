"""A proposal network built as it is, with a loader of its own of the same name."""

import torch

import toydata


class ProposalNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = toydata.make_mlp(batchnorm=True)

    def forward(self, x):
        return self.layers(x)

    def loadFromFile(self, load_path, use_amp=False):
        save = torch.load(load_path, map_location="cpu")
        self.load_state_dict(save["proposal"])
        if use_amp:
            from apex import amp
            amp.load_state_dict(save["amp"])
