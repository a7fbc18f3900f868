"""A toy GAN whose model class does its own backward and steps (GAN.train_step)."""

import argparse

import torch
from apex import amp

import toydata
from gan.models import GAN


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt_level", default="O1")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    opt = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = GAN().to(device)
    optimizer_g = torch.optim.Adam(model.generator.parameters(), lr=0.01, betas=(0.5, 0.999))
    optimizer_d = torch.optim.Adam(model.discriminator.parameters(), lr=0.01, betas=(0.5, 0.999))
    model, [optimizer_g, optimizer_d] = amp.initialize(
        model, [optimizer_g, optimizer_d], opt_level=opt.opt_level, num_losses=2)

    start = 0
    if opt.resume:
        checkpoint = torch.load(opt.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer_g.load_state_dict(checkpoint["optimizer_g"])
        optimizer_d.load_state_dict(checkpoint["optimizer_d"])
        amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    for step in range(start, start + opt.steps):
        gen = torch.Generator().manual_seed(1000 + step)
        data = {"real": GAN.real_batch(gen).to(device), "noise": torch.randn(32, GAN.LATENT, generator=gen).to(device)}
        logs = model.train_step(data, optimizer_g, optimizer_d)
        for name, value in logs.items():
            toydata.log(step, name, value)

    if opt.ckpt_out:
        torch.save({"model": model.state_dict(), "optimizer_g": optimizer_g.state_dict(),
                    "optimizer_d": optimizer_d.state_dict(), "amp": amp.state_dict(),
                    "step": start + opt.steps}, opt.ckpt_out)
    if opt.params_out:
        torch.save(model.state_dict(), opt.params_out)


if __name__ == "__main__":
    main()
