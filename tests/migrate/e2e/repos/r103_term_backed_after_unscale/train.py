"""MiB's shape: the launcher initializes apex and builds the trainer of another module, whose
step scales the model's loss, lets an EWC regularizer read the gradients (its Fisher
information) and scales the regularizer's penalty before the same step."""

import argparse
import os

import torch
from apex import amp

import toydata
from trainer import Trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--reg-importance", type=float, default=50.0)
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
    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        first = saved["step"]

    trainer = Trainer(model, device, args.reg_importance)
    data = toydata.make_data()
    for step in range(first, first + args.steps):
        x, y = toydata.batch(data, step)
        loss = trainer.train_step(optimizer, x, y)
        toydata.log(step, "loss", loss)

    if args.ckpt_out:
        torch.save({"step": first + args.steps, "model": model.state_dict(), "optimizer": optimizer.state_dict()},
                   args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
