"""Launcher of a repository already moved from apex to apexcompat.amp (the shim step)."""

import argparse
import os

import torch
from apexcompat import amp

import toydata
from seg.engine.checkpoint import load_checkpoint, save_checkpoint
from seg.engine.train_loop import do_train


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    start = 0
    if args.resume and os.path.exists(args.resume):
        start = load_checkpoint(args.resume, model, optimizer, device)
    do_train(model, optimizer, toydata.make_data(), device, start, args.steps)
    if args.ckpt_out:
        save_checkpoint(args.ckpt_out, model, optimizer, start + args.steps)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
