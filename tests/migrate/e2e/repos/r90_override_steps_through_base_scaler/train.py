"""Launcher: builds the trainer asked for (the ring trainer overrides the base's backward and
step hooks the way a Horovod trainer does), trains, saves."""

import argparse

import torch

import toydata
from trainers import HalfTrainer, RingTrainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--kind", default="ring", choices=["ring", "half"])
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    trainer = (RingTrainer if args.kind == "ring" else HalfTrainer)(model, args, device)
    trainer.train(toydata.make_data(), args.steps)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
