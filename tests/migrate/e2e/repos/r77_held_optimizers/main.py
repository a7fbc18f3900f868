"""Launcher (DeepDeblur's shape), without apex: an optimizer holder of another package owns the
generator's and the discriminator's optimizers and initializes apex for them when --amp is on
(the launcher calls it only then); the trainer scales the generator's loss through the holder,
and a loss term built by name at run time trains the discriminator through it."""

import argparse
import os

import torch

import toydata
from loss import Loss
from models import Model
from optim import Optimizer
from train import Trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", default="dynamic")
    parser.add_argument("--max-loss-scale", type=float, default=1024, help="dynamic loss scaling maximum")
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()
    args.lr = 0.05
    args.loss = "1*MSE+0.01*ADV"
    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    torch.manual_seed(0)
    model = Model(args)
    optimizer = Optimizer(args, model)
    if args.amp:
        model = optimizer.set_amp(model)
    criterion = Loss(args, model=model, optimizer=optimizer)
    trainer = Trainer(args, model, criterion, optimizer)

    first = 0
    if args.resume and os.path.isfile(args.resume):
        state = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optim"])
        if "amp" in state:
            optimizer.load_amp(state["amp"])
        first = state["step"]

    data = toydata.make_data()
    for step in range(first, first + args.steps):
        x, y = toydata.batch(data, step)
        toydata.log(step, "loss", trainer.train_step(x, y))

    if args.ckpt_out:
        state = {"step": first + args.steps, "model": model.state_dict(), "optim": optimizer.state_dict()}
        if args.amp:
            state["amp"] = optimizer.amp_state()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
