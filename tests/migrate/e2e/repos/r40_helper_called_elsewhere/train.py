"""Launcher: a learning-rate probe first (its rate is printed, the weights are put back), then
training, resumable from a checkpoint."""

import argparse

import torch

import toydata
from fitter import Fitter
from lr_probe import probe


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
    fitter = Fitter(toydata.make_mlp().to(device), args.lr, device, args.opt_level if args.fp16 else None)
    data = toydata.make_data()
    print("probe: lowest loss at lr", probe(fitter, data, device))
    start = fitter.restore(args.resume) if args.resume else 0
    end = fitter.train(data, start, args.steps)
    if args.ckpt_out:
        fitter.save(args.ckpt_out, end)
    if args.params_out:
        toydata.save_params(fitter.model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
