"""R1 gradient penalty on the discriminator: the gradient of its prediction on real data, taken
at the current loss scale (the runner's GradScaler, or apex's loss scaler 0) and unscaled."""

import torch
import torch.nn as nn
from torch import autograd

from toygen.registry import MODELS


def r1_gradient_penalty_loss(discriminator, real_data, loss_scaler=None, use_apex_amp=False):
    real_data = real_data.clone().requires_grad_()

    disc_pred = discriminator(real_data)
    if loss_scaler:
        disc_pred = loss_scaler.scale(disc_pred)
    elif use_apex_amp:
        from apex.amp._amp_state import _amp_state
        _loss_scaler = _amp_state.loss_scalers[0]
        disc_pred = _loss_scaler.loss_scale() * disc_pred.float()

    gradients = autograd.grad(
        outputs=disc_pred,
        inputs=real_data,
        grad_outputs=torch.ones_like(disc_pred),
        create_graph=True,
        retain_graph=True,
        only_inputs=True)[0]

    if loss_scaler:
        # unscale the gradient
        inv_scale = 1. / loss_scaler.get_scale()
        gradients = gradients * inv_scale
    elif use_apex_amp:
        inv_scale = 1. / _loss_scaler.loss_scale()
        gradients = gradients * inv_scale

    return gradients.pow(2).sum(1).mean()


@MODELS.register_module()
class R1GradientPenalty(nn.Module):
    def __init__(self, loss_weight=1.0, use_apex_amp=False):
        super().__init__()
        self.loss_weight = loss_weight
        self.use_apex_amp = use_apex_amp

    def forward(self, outputs_dict):
        return self.loss_weight * r1_gradient_penalty_loss(
            outputs_dict["disc"], outputs_dict["real_imgs"], loss_scaler=outputs_dict.get("loss_scaler"),
            use_apex_amp=self.use_apex_amp)
