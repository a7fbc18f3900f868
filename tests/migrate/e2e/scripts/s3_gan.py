"""A tiny GAN: two models, two optimizers, one amp.initialize with num_losses=2 and loss_id."""

import argparse

import torch
import torch.nn as nn
from apex import amp

import toydata

LATENT = 4


def real_batch(gen):
    # The target distribution: 2-d points around (2, -1).
    return torch.randn(32, 2, generator=gen) * 0.5 + torch.tensor([2.0, -1.0])


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt_level", default="O1")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    opt = parser.parse_args()

    torch.manual_seed(0)
    netG = nn.Sequential(nn.Linear(LATENT, 16), nn.ReLU(), nn.Linear(16, 2))
    netD = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    optimizerD = torch.optim.Adam(netD.parameters(), lr=0.01, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=0.01, betas=(0.5, 0.999))
    criterion = nn.BCEWithLogitsLoss()

    [netD, netG], [optimizerD, optimizerG] = amp.initialize(
        [netD, netG], [optimizerD, optimizerG], opt_level=opt.opt_level, num_losses=2)

    start = 0
    if opt.resume:
        checkpoint = torch.load(opt.resume)
        netG.load_state_dict(checkpoint["netG"])
        netD.load_state_dict(checkpoint["netD"])
        optimizerG.load_state_dict(checkpoint["optimizerG"])
        optimizerD.load_state_dict(checkpoint["optimizerD"])
        amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    for step in range(start, start + opt.steps):
        gen = torch.Generator().manual_seed(1000 + step)
        real = real_batch(gen)
        noise = torch.randn(32, LATENT, generator=gen)

        # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
        netD.zero_grad()
        fake = netG(noise)
        output_real = netD(real)
        output_fake = netD(fake.detach())
        errD_real = criterion(output_real, torch.ones_like(output_real))
        errD = errD_real + criterion(output_fake, torch.zeros_like(output_fake))
        with amp.scale_loss(errD, optimizerD, loss_id=0) as errD_scaled:
            errD_scaled.backward()
        optimizerD.step()

        # (2) update G: maximize log(D(G(z)))
        netG.zero_grad()
        output = netD(fake)
        errG = criterion(output, torch.ones_like(output))
        with amp.scale_loss(errG, optimizerG, loss_id=1) as errG_scaled:
            errG_scaled.backward()
        optimizerG.step()

        distance = (fake.detach().float().mean(0) - torch.tensor([2.0, -1.0])).norm()
        toydata.log(step, "errD", errD.item())
        toydata.log(step, "errG", errG.item())
        toydata.log(step, "distance", distance.item())

    if opt.ckpt_out:
        torch.save({"netG": netG.state_dict(), "netD": netD.state_dict(),
                    "optimizerG": optimizerG.state_dict(), "optimizerD": optimizerD.state_dict(),
                    "amp": amp.state_dict(), "step": start + opt.steps}, opt.ckpt_out)
    if opt.params_out:
        torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()}, opt.params_out)


if __name__ == "__main__":
    main()
