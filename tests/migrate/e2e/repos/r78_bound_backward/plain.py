"""Launcher without apex (SimpleCV's dp_train shape): the same Launcher, its own plain backward."""

import argparse

import torch

import toydata
from toycv import trainer


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    tl = trainer.Launcher(model=model, optimizer=optimizer, device=device)
    tl.train_iters(toydata.make_data(), args.steps)
    if args.ckpt_out:
        torch.save({"launcher": tl.state()}, args.ckpt_out)
    if args.params_out:
        toydata.save_params(tl.model, args.params_out)
