"""The ``tune`` command (bonito's tune.py): each trial builds a model, sets apex up for it
itself and trains it through the library, which scales the losses; the last trial's state is
kept."""

from argparse import ArgumentParser

import torch

import toydata
from toycall.training import save_state, train

try:
    from apex import amp
except ImportError:
    pass


def main(args):
    device = "cuda" if torch.cuda.is_available() else "cpu"
    data = toydata.make_data()

    def objective(trial):
        torch.manual_seed(trial)
        model = toydata.make_mlp().to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1", verbosity=0)
        train(model, device, data, optimizer, 0, args.steps // args.trials, use_amp=True)
        return model, optimizer

    for trial in range(args.trials):
        model, optimizer = objective(trial)
    if args.ckpt_out:
        save_state(args.ckpt_out, model, optimizer, args.steps, use_amp=True)
    if args.params_out:
        toydata.save_params(model, args.params_out)


def argparser():
    parser = ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser
