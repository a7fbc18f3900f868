"""Launcher without apex of its own: the loss comes from calling the training module and goes
straight back to its update_params(); checkpoints through the module."""

import argparse

import torch

import toydata
from box import Box


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    box = Box(args.lr, device, args.fp16, args.opt_level, accum=args.accumulate)
    start = box.load(args.resume) if args.resume else 0
    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        loss = box(x, y)
        box.update_params(loss)
        toydata.log(step, "loss", loss.item())
    if args.ckpt_out:
        box.save(args.ckpt_out, start + args.steps)
    if args.params_out:
        torch.save({k: v.detach().float().cpu() for k, v in box.net.state_dict().items()}, args.params_out)


if __name__ == "__main__":
    main(parse_args())
