"""Launcher: builds the clipping trainer (its base class sets up mixed precision), resumes
from a checkpoint if asked, trains, and saves."""

import argparse

import torch

import toydata
from trainers.clipped import ClippedTrainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    trainer = ClippedTrainer(toydata.make_mlp().to(device), args.lr, args.fp16, args.opt_level, device)
    if args.resume:
        trainer.load(args.resume)
    trainer.fit(toydata.make_data(), args.steps)
    if args.ckpt_out:
        trainer.save(args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
