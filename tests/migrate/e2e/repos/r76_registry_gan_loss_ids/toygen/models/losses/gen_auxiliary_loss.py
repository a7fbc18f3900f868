"""A path-length regularizer on the generator: the gradient of its output, projected on a fixed
direction, with respect to its input noise, taken at the current loss scale (the runner's
GradScaler, or apex's loss scaler 1) and unscaled."""

import torch
import torch.nn as nn
from torch import autograd

from toygen.registry import MODELS


def gen_path_regularizer(generator, noise, loss_scaler=None, use_apex_amp=False):
    noise = noise.detach().clone().requires_grad_()
    fake_img = generator(noise)
    direction = torch.tensor([[1.0, -1.0]], device=fake_img.device) / 2 ** 0.5

    if loss_scaler:
        loss = loss_scaler.scale((fake_img * direction).sum())
        grad = autograd.grad(
            outputs=loss,
            inputs=noise,
            grad_outputs=torch.ones(()).to(loss),
            create_graph=True,
            retain_graph=True,
            only_inputs=True)[0]

        # unscale the grad
        inv_scale = 1. / loss_scaler.get_scale()
        grad = grad * inv_scale
    elif use_apex_amp:
        from apex.amp._amp_state import _amp_state

        # loss_scalers[0] is the discriminator's, loss_scalers[1] the generator's
        _loss_scaler = _amp_state.loss_scalers[1]
        loss = _loss_scaler.loss_scale() * ((fake_img * direction).sum()).float()

        grad = autograd.grad(
            outputs=loss,
            inputs=noise,
            grad_outputs=torch.ones(()).to(loss),
            create_graph=True,
            retain_graph=True,
            only_inputs=True)[0]

        # unscale the grad
        inv_scale = 1. / _loss_scaler.loss_scale()
        grad = grad * inv_scale
    else:
        grad = autograd.grad(
            outputs=(fake_img * direction).sum(),
            inputs=noise,
            grad_outputs=torch.ones(()).to(fake_img),
            create_graph=True,
            retain_graph=True,
            only_inputs=True)[0]

    path_lengths = torch.sqrt(grad.float().pow(2).sum(1) + 1e-8)
    return (path_lengths - 1.0).pow(2).mean()


@MODELS.register_module()
class GeneratorPathRegularizer(nn.Module):
    def __init__(self, loss_weight=1.0, use_apex_amp=False):
        super().__init__()
        self.loss_weight = loss_weight
        self.use_apex_amp = use_apex_amp

    def forward(self, outputs_dict):
        return self.loss_weight * gen_path_regularizer(
            outputs_dict["gen"], outputs_dict["noise"], loss_scaler=outputs_dict.get("loss_scaler"),
            use_apex_amp=self.use_apex_amp)
