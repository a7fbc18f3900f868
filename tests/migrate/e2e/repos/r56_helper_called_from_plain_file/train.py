"""Fits a two-stage regressor to a fixed random map, the head on the detached features
first, then the encoder through the head.  No apex here: the networks come from
nets.factory.build (apex set up there, one loss scaler per loss) and each loss goes to
nets.steps.backward_step with its loss id (apex scales it there); nets.steps keeps the
checkpoints."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.factory import build
from nets.steps import backward_step, load_state, save_state


def arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def batch(step, device):
    rng = torch.Generator().manual_seed(5600 + step)
    x = torch.randn(40, 6, generator=rng)
    mix = torch.linspace(-1.0, 1.0, 18).reshape(6, 3)
    return x.to(device), torch.sin(x @ mix).to(device)


def main(cfg):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(17)
    encoder, head, [opt_encoder, opt_head] = build(cfg, device)
    start = 0
    if cfg.resume:
        start = load_state(cfg.resume, encoder, head, opt_encoder, opt_head, cfg)
    for step in range(start, start + cfg.steps):
        x, target = batch(step, device)
        head_loss = F.mse_loss(head(encoder(x).detach()), target)
        backward_step(cfg, head_loss, opt_head, 1)
        loss = F.mse_loss(head(encoder(x)), target)
        value = backward_step(cfg, loss, opt_encoder, 0)
        toydata.log(step, "loss", value)
    if cfg.ckpt_out:
        save_state(cfg.ckpt_out, encoder, head, opt_encoder, opt_head, start + cfg.steps, cfg)
    if cfg.params_out:
        state = {"encoder": encoder.state_dict(), "head": head.state_dict()}
        torch.save({f"{k}.{n}": t for k, s in state.items() for n, t in s.items()}, cfg.params_out)


if __name__ == "__main__":
    main(arguments())
