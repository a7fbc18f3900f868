"""Loss scalers with one calling convention: scaler(loss, optimizer, clip_grad=..., parameters=...)."""

import torch

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if clip_grad is not None:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), clip_grad)
        optimizer.step()

    def state_dict(self):
        return amp.state_dict()

    def load_state_dict(self, state_dict):
        amp.load_state_dict(state_dict)


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self, device="cuda"):
        self._scaler = torch.amp.GradScaler(device)

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None):
        self._scaler.scale(loss).backward()
        if clip_grad is not None:
            self._scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(parameters, clip_grad)
        self._scaler.step(optimizer)
        self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict):
        self._scaler.load_state_dict(state_dict)
