"""A second script over the same factory: the generator and the critics learn with softplus
losses, each through a backward step of its own; it shares no code with train.py."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.blocks import LATENT, TARGET, real_points
from nets.factory import build_gan


def options():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--scales", type=int, default=2)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def step_on(opt, loss, optimizer):
    optimizer.zero_grad()
    if opt.fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()


def tune(opt):
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gen, critics, opt_g, opts_c = build_gan(opt, device)
    for step in range(opt.steps):
        rng = torch.Generator().manual_seed(2000 + step)
        real = real_points(rng, device)
        noise = torch.randn(32, LATENT, generator=rng).to(device)
        fake = gen(noise)
        loss_g, losses_c = 0.0, []
        for critic in critics:
            loss_g = loss_g + F.softplus(-critic(fake)).mean()
            losses_c.append(F.softplus(critic(fake.detach())).mean() + F.softplus(-critic(real)).mean())
        step_on(opt, loss_g, opt_g)
        for level, optimizer in enumerate(opts_c):
            step_on(opt, losses_c[level], optimizer)
        distance = (fake.detach().float().mean(0) - torch.tensor(TARGET, device=device)).norm()
        toydata.log(step, "loss_g", loss_g.item())
        toydata.log(step, "distance", distance.item())
    if opt.ckpt_out:
        state = {"gen": gen.state_dict(), "step": opt.steps}
        if opt.fp16:
            from apex import amp

            state["amp"] = amp.state_dict()
        torch.save(state, opt.ckpt_out)
    if opt.params_out:
        params = {f"gen.{k}": v for k, v in gen.state_dict().items()}
        for index, critic in enumerate(critics):
            params.update({f"critic{index}.{k}": v for k, v in critic.state_dict().items()})
        torch.save(params, opt.params_out)


if __name__ == "__main__":
    tune(options())
