"""Launcher in the shape of early one-stage detector repositories: mixed precision is on
whenever apex imports (--fp32 turns it off), the model and optimizer are initialized for it
here, the epoch loop lives in engine.py, and checkpoints carry amp's loss-scaler state."""

import argparse

import torch

import toydata
from engine import train_epoch

mixed_precision = True
try:
    from apex import amp
except ImportError:
    mixed_precision = False  # apex missing: train in fp32


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--world-size", type=int, default=1)
    parser.add_argument("--fp32", action="store_true")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    use_amp = mixed_precision and not args.fp32
    if use_amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if use_amp and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    train_epoch(model, optimizer, data, device, start, args.steps, use_amp, args.accumulate, args.world_size)

    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if use_amp:
            state["amp"] = amp.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
