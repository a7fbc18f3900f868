"""The ``train`` command (no apex here): builds the model and optimizer, lets the library
restore its state (and set amp up), then trains for the requested steps."""

from argparse import ArgumentParser

import torch

import toydata
from toycall.training import load_state, save_state, train


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    start = load_state(args.resume, device, model, optimizer, use_amp=args.amp)
    data = toydata.make_data()
    train(model, device, data, optimizer, start, args.steps, use_amp=args.amp)
    if args.ckpt_out:
        save_state(args.ckpt_out, model, optimizer, start + args.steps, use_amp=args.amp)
    if args.params_out:
        toydata.save_params(model, args.params_out)


def argparser():
    parser = ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser
