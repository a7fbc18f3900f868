"""A field network's base class: it loads its own checkpoints, amp's loss-scaler state among
them when asked (Enigmatisms/NeRF's NeRF.loadFromFile); the repository builds only its
subclasses."""

import torch


class FieldBase(torch.nn.Module):
    def loadFromFile(self, load_path, use_amp=False, opt=None, other_stuff=None):
        save = torch.load(load_path, map_location="cpu")
        self.load_state_dict(save["field"])
        if opt is not None:
            opt.load_state_dict(save["optimizer"])
        if use_amp:
            from apex import amp
            amp.load_state_dict(save["amp"])
        if other_stuff is not None:
            return [save[k] for k in other_stuff]
