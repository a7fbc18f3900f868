"""Launcher in the shape of training-framework model wrappers: builds the Learner (core/learner.py,
no apex in it), then, under --fp16 (the default), lets core/mixed.py initialize apex on the
learner's network and optimizer and keep apex.amp itself on the learner (``learner.amp``)."""

import argparse

import torch

import toydata
from core.learner import Learner
from core.mixed import enable_amp


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    learner = Learner(toydata.make_mlp().to(device), device, lr=3e-3, chunks=2)
    if args.fp16:
        enable_amp(learner, device, opt_level=args.opt_level)
    if args.resume:
        learner.load(args.resume)
    data = toydata.make_data()
    for _ in range(args.steps):
        loss = learner.train_step(toydata.batch(data, learner.step))
        toydata.log(learner.step, "loss", loss)
        learner.step += 1
    if args.ckpt_out:
        learner.save(args.ckpt_out)
    if args.params_out:
        toydata.save_params(learner.net, args.params_out)


if __name__ == "__main__":
    main()
