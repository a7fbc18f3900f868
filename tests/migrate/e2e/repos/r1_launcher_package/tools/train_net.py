#!/usr/bin/env python
"""Detectron-style launcher: builds everything, amp.initialize here, training in mypkg.engine."""

import argparse
import os

import torch
from apex import amp

from mypkg.data import build_dataset
from mypkg.engine.trainer import do_train
from mypkg.modeling import build_model


def parse_args():
    parser = argparse.ArgumentParser(description="Toy regressor training")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    model = build_model()
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    start_iter = 0
    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        start_iter = checkpoint["iteration"]

    dataset = build_dataset()
    do_train(model, dataset, optimizer, device, start_iter, start_iter + args.steps)

    if args.ckpt_out:
        torch.save({
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "amp": amp.state_dict(),
            "iteration": start_iter + args.steps,
        }, args.ckpt_out)
    if args.params_out:
        torch.save(model.state_dict(), args.params_out)


if __name__ == "__main__":
    main()
