"""Launcher without apex of its own: the trainer's forward pass first, its outputs handed to the
update method (one a clone), checkpoints through the trainer."""

import argparse

import torch

import toydata
from trainer import Translator


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Translator(args.lr, device, args.fp16, args.opt_level)
    start = model.load(args.resume) if args.resume else 0
    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        out, twice = model.forward(x)
        toydata.log(step, "loss", model.gen_update(out.clone(), twice, y))
    if args.ckpt_out:
        model.save(args.ckpt_out, start + args.steps)
    if args.params_out:
        params = {f"body.{k}": v for k, v in model.body.state_dict().items()}
        params.update({f"head.{k}": v for k, v in model.head.state_dict().items()})
        torch.save({k: v.detach().float().cpu() for k, v in params.items()}, args.params_out)


if __name__ == "__main__":
    main(parse_args())
