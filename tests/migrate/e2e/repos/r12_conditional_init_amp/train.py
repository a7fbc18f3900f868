"""Launcher: builds the model and optimizer and hands them to lm.trainer.RegressionTrainer,
whose base class sets up apex itself when --amp is not -1."""

import argparse

import torch

import toydata
from lm.trainer import RegressionTrainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp", type=int, default=1, help="-1: fp32 without apex; N >= 0: apex at opt level ON")
    parser.add_argument("--clip-grad-norm", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    params = parser.parse_args()
    params.device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(0)
    model = toydata.make_mlp().to(params.device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    trainer = RegressionTrainer(model, optimizer, params)
    if params.resume:
        trainer.reload_checkpoint(params.resume)
    data = toydata.make_data()
    for _ in range(params.steps):
        trainer.regression_step(data)
    if params.ckpt_out:
        trainer.save_checkpoint(params.ckpt_out)
    if params.params_out:
        toydata.save_params(trainer.model, params.params_out)


if __name__ == "__main__":
    main()
