"""Launcher (DL-Art-School's shape): a trainer of another file initializes apex and runs its
configured steps; each step runs injectors (the forward passes) into a state dict, then sums the
losses of its loss objects and scales the sum it divides by the accumulation count.  The
trainer keeps amp's state in its checkpoints; --no-amp trains without apex."""

import argparse
import os

import torch

import toydata
from trainer import Trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    opt = {"lr": 0.05, "mega_batch_factor": args.accumulate,
           "steps": {"regress": {"weights": {"mse": 1.0, "l1": 0.1}}}}
    if args.amp:
        opt["amp_opt_level"] = args.opt_level
    trainer = Trainer(opt, toydata.make_mlp(), device)

    first = 0
    if args.resume and os.path.isfile(args.resume):
        first = trainer.resume(torch.load(args.resume, map_location="cpu"))

    data = toydata.make_data()
    for step in range(first, first + args.steps):
        x, y = toydata.batch(data, step)
        toydata.log(step, "loss", trainer.optimize(x, y, step))

    if args.ckpt_out:
        torch.save(trainer.training_state(first + args.steps), args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.net, args.params_out)


if __name__ == "__main__":
    main()
