"""Launcher: builds the Fitter (star-imported from trainers/fitter.py), which makes its own
optimizer, then runs amp.initialize on the fitter's model and optimizer."""

import argparse

import torch
from apex import amp

import toydata
from trainers.fitter import *


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    fitter = Fitter(toydata.make_mlp().to(device), device=device, lr=3e-3)
    fitter.model, fitter.optimizer = amp.initialize(fitter.model, fitter.optimizer, opt_level=args.opt_level)
    if args.resume:
        fitter.load(args.resume)
    fitter.fit(toydata.make_data(), args.steps)
    if args.ckpt_out:
        fitter.save(args.ckpt_out)
    if args.params_out:
        toydata.save_params(fitter.model, args.params_out)


if __name__ == "__main__":
    main()
