"""Two loss scalers with one calling convention:
``scaler(loss, optimizer, clip_grad=..., parameters=..., need_update=...)``."""

import torch

try:
    from apex import amp
    has_apex = True
except ImportError:
    amp = None
    has_apex = False


def clip_gradients(parameters, limit):
    torch.nn.utils.clip_grad_norm_(parameters, limit)


class ApexScaler:
    state_dict_key = "amp"

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, need_update=True):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if need_update:
            if clip_grad is not None:
                clip_gradients(amp.master_params(optimizer), clip_grad)
            optimizer.step()

    def state_dict(self):
        if "state_dict" in amp.__dict__:
            return amp.state_dict()

    def load_state_dict(self, state_dict):
        if "load_state_dict" in amp.__dict__:
            amp.load_state_dict(state_dict)


class NativeScaler:
    state_dict_key = "amp_scaler"

    def __init__(self, device="cuda"):
        self._scaler = torch.amp.GradScaler(device)

    def __call__(self, loss, optimizer, clip_grad=None, parameters=None, need_update=True):
        self._scaler.scale(loss).backward()
        if need_update:
            if clip_grad is not None:
                self._scaler.unscale_(optimizer)
                clip_gradients(parameters, clip_grad)
            self._scaler.step(optimizer)
            self._scaler.update()

    def state_dict(self):
        return self._scaler.state_dict()

    def load_state_dict(self, state_dict):
        self._scaler.load_state_dict(state_dict)
