"""Trains the toy GAN (one of two scripts over the same factory): the factory builds the
networks (apex initialized there), each loss goes through loss_backward, the generator's first."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.blocks import LATENT, TARGET, real_points
from nets.factory import build_gan


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--scales", type=int, default=2)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def loss_backward(opt, loss, optimizer):
    optimizer.zero_grad()
    if opt.fp16:
        from apex import amp

        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
    else:
        loss.backward()
    optimizer.step()


def adversarial(logits, real):
    target = torch.ones_like(logits) if real else torch.zeros_like(logits)
    return F.binary_cross_entropy_with_logits(logits, target)


def main(opt):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    gen, critics, opt_g, opts_c = build_gan(opt, device)
    start = 0
    if opt.resume:
        checkpoint = torch.load(opt.resume, map_location=device)
        gen.load_state_dict(checkpoint["gen"])
        for critic, state in zip(critics, checkpoint["critics"]):
            critic.load_state_dict(state)
        opt_g.load_state_dict(checkpoint["opt_g"])
        for optimizer, state in zip(opts_c, checkpoint["opts_c"]):
            optimizer.load_state_dict(state)
        if opt.fp16:
            from apex import amp

            amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    for step in range(start, start + opt.steps):
        gen_rng = torch.Generator().manual_seed(1000 + step)
        real = real_points(gen_rng, device)
        noise = torch.randn(32, LATENT, generator=gen_rng).to(device)
        fake = gen(noise)
        loss_g, losses_c = 0.0, []
        for critic in critics:
            loss_g = loss_g + adversarial(critic(fake), True)
            losses_c.append(adversarial(critic(real), True) + adversarial(critic(fake.detach()), False))

        loss_backward(opt, loss_g, opt_g)
        for level in range(len(critics)):
            loss_backward(opt, losses_c[level], opts_c[level])

        distance = (fake.detach().float().mean(0) - torch.tensor(TARGET, device=device)).norm()
        toydata.log(step, "loss_g", loss_g.item())
        toydata.log(step, "distance", distance.item())

    if opt.ckpt_out:
        state = {"gen": gen.state_dict(), "critics": [c.state_dict() for c in critics],
                 "opt_g": opt_g.state_dict(), "opts_c": [o.state_dict() for o in opts_c],
                 "step": start + opt.steps}
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
    main(parse_args())
