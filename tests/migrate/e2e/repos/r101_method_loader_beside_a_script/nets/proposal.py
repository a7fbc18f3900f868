"""A network that loads its own checkpoints, amp's loss-scaler state among them when asked
(Enigmatisms/NeRF's ProposalNetwork.loadFromFile)."""

import torch

import toydata


class ProposalNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = toydata.make_mlp(batchnorm=True)

    def forward(self, x):
        return self.layers(x)

    def loadFromFile(self, load_path, use_amp=False, opt=None, other_stuff=None):
        save = torch.load(load_path, map_location="cpu")
        self.load_state_dict(save["model"])
        if opt is not None:
            opt.load_state_dict(save["optimizer"])
        if use_amp:
            from apex import amp
            amp.load_state_dict(save["amp"])
        print("model loaded from '%s'" % load_path)
        if other_stuff is not None:
            return [save[k] for k in other_stuff]
