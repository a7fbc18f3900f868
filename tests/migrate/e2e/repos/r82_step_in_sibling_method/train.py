"""Launcher: an engine at the precision asked for, stepped by the stepper."""

import argparse

import torch

import toydata
from sslkit.engine import Engine
from sslkit.stepper import Stepper


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--precision", default="apex", choices=["apex", "native", "fp32"])
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    engine = Engine(model, optimizer, device, precision=args.precision, opt_level=args.opt_level, clip=args.clip)
    engine.setup()
    if args.resume:
        engine.restore(torch.load(args.resume, map_location=device))
    stepper = Stepper()
    for _ in range(args.steps):
        step = engine.step_count
        stepper(engine)
        toydata.log(step, "loss", engine.losses[-1])
    if args.ckpt_out:
        torch.save(engine.state(), args.ckpt_out)
    if args.params_out:
        toydata.save_params(engine.model, args.params_out)


if __name__ == "__main__":
    main()
