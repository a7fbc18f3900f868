"""Launcher: builds the trainer (apex.amp at the opt level asked for, O0 is fp32), runs its
steps, writes and resumes checkpoints."""

import argparse

import torch

import toydata
from trainer import Trainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    trainer = Trainer(toydata.make_mlp(), device, args.opt_level)
    start = trainer.restore(torch.load(args.resume, map_location="cpu")) if args.resume else 0
    data = toydata.make_data()
    for idx in range(start, start + args.steps):
        loss = trainer.train_one_step(toydata.batch(data, idx))
        if loss is not None:
            toydata.log(idx, "loss", loss)
    if args.ckpt_out:
        torch.save(trainer.state(start + args.steps), args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.task.net, args.params_out)


if __name__ == "__main__":
    main(parse_args())
