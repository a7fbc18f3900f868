"""Backward-and-update helpers the trainer picks by precision: Fp32Stepper does it by hand,
AmpStepper goes through apex and tunes apex's loss scaler when it is built (initial scale and
growth window).  Both get the loss from the trainer, which computes it."""

from torch.nn.utils import clip_grad_norm_
import apex.amp._amp_state
from apex import amp


class Fp32Stepper:
    def __init__(self, model, max_norm):
        self.model = model
        self.max_norm = max_norm

    def step(self, loss, optimizer, update=True):
        loss.backward()
        if update:
            clip_grad_norm_(self.model.parameters(), self.max_norm)
            optimizer.step()
            self.model.zero_grad()


class AmpStepper:
    def __init__(self, model, max_norm, loss_scale=8192, upscale_interval=128):
        self.model = model
        self.max_norm = max_norm
        scaler_state = apex.amp._amp_state.loss_scalers[0]
        scaler_state._loss_scale = loss_scale
        scaler_state._scale_seq_len = upscale_interval

    def step(self, loss, optimizer, update=True):
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        if update:
            clip_grad_norm_(amp.master_params(optimizer), self.max_norm)
            optimizer.step()
            self.model.zero_grad()
