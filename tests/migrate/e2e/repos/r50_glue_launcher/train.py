"""Fits the regressor to a fixed random map.  No apex here: the model comes from
nets.factory.build (apex set up there), each loss goes to nets.steps.backward_step (apex
scales it there) and nets.steps keeps the checkpoints."""

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
    rng = torch.Generator().manual_seed(4100 + step)
    x = torch.randn(40, 6, generator=rng)
    mix = torch.linspace(-1.0, 1.0, 18).reshape(6, 3)
    return x.to(device), torch.sin(x @ mix).to(device)


def main(cfg):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(11)
    model, optimizer = build(cfg, device)
    start = 0
    if cfg.resume:
        start = load_state(cfg.resume, model, optimizer, cfg)
    for step in range(start, start + cfg.steps):
        x, target = batch(step, device)
        prediction = model(x)
        loss = F.mse_loss(prediction, target)
        value = backward_step(cfg, loss, optimizer)
        toydata.log(step, "loss", value)
    if cfg.ckpt_out:
        save_state(cfg.ckpt_out, model, optimizer, start + cfg.steps, cfg)
    if cfg.params_out:
        torch.save(dict(model.state_dict()), cfg.params_out)


if __name__ == "__main__":
    main(arguments())
