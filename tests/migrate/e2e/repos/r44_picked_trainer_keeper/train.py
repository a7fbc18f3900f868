"""Launcher in the shape of re-identification trainers: a class that builds the model and
optimizer, initializes apex under the fp16 switch, picks the stepper class by that switch and
hands the keeper the optimizer, and apex.amp too when on, through a dict it spreads into it."""

import argparse

import torch
from apex import amp

import toydata
from engine.keeper import Keeper
from engine.steps import MixedStepper, PlainStepper


class Runner:
    def __init__(self, args):
        torch.manual_seed(0)
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = toydata.make_mlp().to(device)
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
        extras = dict(optimizer=optimizer)
        if args.fp16:
            model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
            extras.update(dict(amp=amp))
        self.stepper = (MixedStepper if args.fp16 else PlainStepper)(model, optimizer, device)
        self.keeper = Keeper(model, **extras)
        self.model = model
        self.step = 0

    def train(self, data, steps):
        for _ in range(steps):
            loss = self.stepper.step(toydata.batch(data, self.step))
            toydata.log(self.step, "loss", loss)
            self.step += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    runner = Runner(args)
    if args.resume:
        runner.step = runner.keeper.load(args.resume)["step"]
    runner.train(toydata.make_data(), args.steps)
    if args.ckpt_out:
        runner.keeper.save(args.ckpt_out, step=runner.step)
    if args.params_out:
        toydata.save_params(runner.model, args.params_out)


if __name__ == "__main__":
    main()
