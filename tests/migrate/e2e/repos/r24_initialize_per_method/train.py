"""Launcher: a range test first (its rate is printed, the weights it touched are put back),
then training at the learning rate given on the command line."""

import argparse

import torch

import toydata
from learner import Learner


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
    learner = Learner(toydata.make_mlp().to(device), args.fp16, args.opt_level)
    data = toydata.make_data()
    print("range test: lowest loss at lr", learner.find_lr(data, device))
    learner.fit(data, device, args.lr, 0, args.steps, args.resume, args.ckpt_out)
    if args.params_out:
        toydata.save_params(learner.model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
