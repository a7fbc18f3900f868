"""Launcher: sets the model up through apex's initialize (the opt level from the command line)
and trains it with engine.loop.fit, which scales the loss with a GradScaler of its own; apex
never scales a loss here (its O1 casts the forward pass alone).  Checkpoints keep the loop's
scaler state."""

import argparse

import torch

import toydata
from engine.loop import fit


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    start, scaler_state = 0, None
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start, scaler_state = checkpoint["step"], checkpoint["scaler"]

    scaler = fit(model, optimizer, toydata.make_data(), device, start, args.steps, args.fp16, scaler_state)

    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps,
                 "scaler": scaler.state_dict()}
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
