"""An unconditional GAN built by name: its train_step updates the discriminator (loss id 0), then
the generator (loss id 1), scaling each loss through the runner's GradScaler or apex.amp."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from toygen.registry import MODELS

TARGET = (2.0, -1.0)


def set_requires_grad(module, flag):
    for param in module.parameters():
        param.requires_grad = flag


@MODELS.register_module()
class StaticGAN(nn.Module):
    LATENT = 4

    def __init__(self, disc_auxiliary_loss=None, gen_auxiliary_loss=None, disc_steps=1):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(self.LATENT, 16), nn.ReLU(), nn.Linear(16, 2))
        self.discriminator = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
        self.disc_auxiliary_loss = MODELS.build(disc_auxiliary_loss) if disc_auxiliary_loss else None
        self.gen_auxiliary_loss = MODELS.build(gen_auxiliary_loss) if gen_auxiliary_loss else None
        self.disc_steps = disc_steps

    def data_batch(self, iteration):
        gen = torch.Generator().manual_seed(1000 + iteration)
        device = next(self.parameters()).device
        real = torch.randn(32, 2, generator=gen) * 0.5 + torch.tensor(TARGET)
        return dict(real_imgs=real.to(device), noise=torch.randn(32, self.LATENT, generator=gen).to(device))

    def _get_disc_loss(self, outputs_dict):
        losses = dict(
            loss_disc_fake=F.softplus(outputs_dict["disc_pred_fake"]).mean(),
            loss_disc_real=F.softplus(-outputs_dict["disc_pred_real"]).mean())
        if self.disc_auxiliary_loss is not None:
            losses["loss_r1_gp"] = self.disc_auxiliary_loss(outputs_dict)
        loss = sum(losses.values())
        return loss, {name: value.item() for name, value in losses.items()}

    def _get_gen_loss(self, outputs_dict):
        losses = dict(loss_gen=F.softplus(-outputs_dict["disc_pred_fake_g"]).mean())
        if self.gen_auxiliary_loss is not None:
            losses["loss_path"] = self.gen_auxiliary_loss(outputs_dict)
        loss = sum(losses.values())
        return loss, {name: value.item() for name, value in losses.items()}

    def train_step(self, data_batch, optimizer, ddp_reducer=None, loss_scaler=None, use_apex_amp=False,
                   running_status=None):
        from toygen.runners import apex_amp_utils

        real_imgs, noise = data_batch["real_imgs"], data_batch["noise"]
        curr_iter = running_status["iteration"] if running_status is not None else 0

        # disc training
        set_requires_grad(self.discriminator, True)
        optimizer["discriminator"].zero_grad()
        with torch.autocast(next(self.parameters()).device.type, dtype=torch.float16, enabled=apex_amp_utils.grad_scalers is not None and apex_amp_utils.grad_scalers[0].is_enabled()):
            with torch.no_grad():
                fake_imgs = self.generator(noise)

            disc_pred_fake = self.discriminator(fake_imgs)
            disc_pred_real = self.discriminator(real_imgs)
            data_dict_ = dict(
                gen=self.generator,
                disc=self.discriminator,
                disc_pred_fake=disc_pred_fake,
                disc_pred_real=disc_pred_real,
                real_imgs=real_imgs,
                noise=noise,
                iteration=curr_iter,
                loss_scaler=loss_scaler)

            loss_disc, log_vars_disc = self._get_disc_loss(data_dict_)

        if loss_scaler:
            loss_scaler.scale(loss_disc).backward()
        elif use_apex_amp:
            apex_amp_utils.grad_scalers[0].scale(loss_disc).backward()
        else:
            loss_disc.backward()

        if loss_scaler:
            loss_scaler.unscale_(optimizer["discriminator"])
            loss_scaler.step(optimizer["discriminator"])
            # loss_scaler.update is called by the runner
        elif use_apex_amp:
            apex_amp_utils.grad_scalers[0].step(optimizer["discriminator"])
            apex_amp_utils.grad_scalers[0].update()
        else:
            optimizer["discriminator"].step()

        # skip generator training if only the discriminator trains this iteration
        if (curr_iter + 1) % self.disc_steps != 0:
            return dict(log_vars=log_vars_disc)

        # generator training
        set_requires_grad(self.discriminator, False)
        optimizer["generator"].zero_grad()

        with torch.autocast(next(self.parameters()).device.type, dtype=torch.float16, enabled=apex_amp_utils.grad_scalers is not None and apex_amp_utils.grad_scalers[0].is_enabled()):
            fake_imgs = self.generator(noise)
            disc_pred_fake_g = self.discriminator(fake_imgs)
            data_dict_ = dict(
                gen=self.generator,
                disc=self.discriminator,
                fake_imgs=fake_imgs,
                disc_pred_fake_g=disc_pred_fake_g,
                noise=noise,
                iteration=curr_iter,
                loss_scaler=loss_scaler)

            loss_gen, log_vars_g = self._get_gen_loss(data_dict_)

        if loss_scaler:
            loss_scaler.scale(loss_gen).backward()
        elif use_apex_amp:
            apex_amp_utils.grad_scalers[1].scale(loss_gen).backward()
        else:
            loss_gen.backward()

        if loss_scaler:
            loss_scaler.unscale_(optimizer["generator"])
            loss_scaler.step(optimizer["generator"])
        elif use_apex_amp:
            apex_amp_utils.grad_scalers[1].step(optimizer["generator"])
            apex_amp_utils.grad_scalers[1].update()
        else:
            optimizer["generator"].step()

        distance = (fake_imgs.detach().float().mean(0) - torch.tensor(TARGET, device=fake_imgs.device)).norm()
        log_vars = dict(log_vars_disc, **log_vars_g, distance=distance.item())
        return dict(log_vars=log_vars)
