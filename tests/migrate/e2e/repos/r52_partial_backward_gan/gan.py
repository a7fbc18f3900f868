"""A toy GAN in the shape of lucidrains' trainers: a module-level backward helper that scales
through apex when fp16 is on, a module that builds the networks and their optimizers and runs
amp.initialize itself (two loss ids), and a trainer that keeps that module as ``self.GAN`` and
calls the helper through ``functools.partial``, accumulating each phase over micro-batches."""

from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

import toydata

try:
    from apex import amp
    APEX_AVAILABLE = True
except ImportError:
    APEX_AVAILABLE = False

LATENT = 8


def loss_backwards(fp16, loss, optimizer, loss_id, **kwargs):
    if fp16:
        with amp.scale_loss(loss, optimizer, loss_id) as scaled_loss:
            scaled_loss.backward(**kwargs)
    else:
        loss.backward(**kwargs)


class Jitter(nn.Module):
    """Runs the critic on slightly shifted inputs (a stand-in for an augmenting wrapper)."""

    def __init__(self, critic):
        super().__init__()
        self.critic = critic

    def forward(self, x):
        return self.critic(x + 0.01 * torch.sin(x))


class PairGAN(nn.Module):
    def __init__(self, device, fp16=False, lr=1e-3):
        super().__init__()
        self.G = nn.Sequential(nn.Linear(LATENT, 32), nn.ReLU(), nn.Linear(32, toydata.D_IN)).to(device)
        self.D = nn.Sequential(nn.Linear(toydata.D_IN, 32), nn.ReLU(), nn.Linear(32, 1)).to(device)
        self.D_aug = Jitter(self.D)
        self.G_opt = torch.optim.Adam(self.G.parameters(), lr=lr, betas=(0.5, 0.9))
        self.D_opt = torch.optim.Adam(self.D.parameters(), lr=lr * 10, betas=(0.5, 0.9))
        self.fp16 = fp16
        if fp16:
            (self.G, self.D), (self.G_opt, self.D_opt) = amp.initialize(
                [self.G, self.D], [self.G_opt, self.D_opt], opt_level="O1", num_losses=2, verbosity=0)


class Trainer:
    def __init__(self, device, fp16=False, accumulate=1):
        assert not fp16 or APEX_AVAILABLE, "apex is needed for fp16"
        self.device = device
        self.fp16 = fp16
        self.accumulate = accumulate
        self.GAN = None
        self.steps = 0
        self.d_loss = 0.0
        self.g_loss = 0.0

    def init_GAN(self):
        self.GAN = PairGAN(self.device, fp16=self.fp16)

    def noise(self, micro):
        gen = torch.Generator().manual_seed(10_000 + 7 * self.steps + micro)
        return torch.randn(toydata.BATCH, LATENT, generator=gen).to(self.device)

    def train(self, reals):
        if self.GAN is None:
            self.init_GAN()
        backwards = partial(loss_backwards, self.fp16)

        self.GAN.D_opt.zero_grad()
        total = 0.0
        for i in range(self.accumulate):
            fakes = self.GAN.G(self.noise(i)).detach()
            fake_out = self.GAN.D_aug(fakes)
            real_out = self.GAN.D_aug(reals)
            disc_loss = (F.relu(1 + real_out) + F.relu(1 - fake_out)).mean()
            disc_loss = disc_loss / self.accumulate
            backwards(disc_loss, self.GAN.D_opt, loss_id=0)
            total += disc_loss.item()
        self.d_loss = total
        self.GAN.D_opt.step()

        self.GAN.G_opt.zero_grad()
        total = 0.0
        for i in range(self.accumulate):
            fakes = self.GAN.G(self.noise(100 + i))
            gen_loss = self.GAN.D_aug(fakes).mean() / self.accumulate
            backwards(gen_loss, self.GAN.G_opt, loss_id=1)
            total += gen_loss.item()
        self.g_loss = total
        self.GAN.G_opt.step()
        self.steps += 1

    def save(self, path):
        data = {"GAN": self.GAN.state_dict(), "steps": self.steps,
                "G_opt": self.GAN.G_opt.state_dict(), "D_opt": self.GAN.D_opt.state_dict()}
        if self.GAN.fp16:
            data["amp"] = amp.state_dict()
        torch.save(data, path)

    def load(self, path):
        self.init_GAN()
        data = torch.load(path)
        self.GAN.load_state_dict(data["GAN"])
        self.GAN.G_opt.load_state_dict(data["G_opt"])
        self.GAN.D_opt.load_state_dict(data["D_opt"])
        self.steps = data["steps"]
        if self.GAN.fp16 and "amp" in data:
            amp.load_state_dict(data["amp"])
