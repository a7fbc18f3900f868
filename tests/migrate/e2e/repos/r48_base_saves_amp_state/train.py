"""Launcher: amp.initialize here, then the Trainer (re-exported by engine/__init__.py with a
star import) trains; its base class saves and loads amp's state."""

import argparse

import torch
from apex import amp

import toydata
from engine import Trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    trainer = Trainer(model, optimizer, device, accumulate=args.accumulate)
    if args.resume:
        trainer.resume(args.resume)
    trainer.train(toydata.make_data(), args.steps)
    if args.ckpt_out:
        trainer.save_checkpoint(args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
