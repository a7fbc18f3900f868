"""Launcher (TextBrewer's shape): no apex here; the distiller of the engine package sets up
mixed precision, scales, clips and steps with the apex.amp its star import of engine/utils.py
brings."""

import argparse

import torch

import toydata
from engine import Distiller


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    distiller = Distiller(model, args, device)
    distiller.train(toydata.make_data(), args.steps)
    if args.params_out:
        toydata.save_params(distiller.model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
