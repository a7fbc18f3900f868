"""Launcher: --fp16 1 --apex 1 --amp 1 (the default) trains through apex, --apex 0 through the
trainer's own GradScaler, --fp16 0 --amp -1 in plain fp32."""

import argparse

import torch

import toydata
from lm.model import AutocastMLP
from lm.trainer import RegressionTrainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", type=int, default=1)
    parser.add_argument("--apex", type=int, default=1)
    parser.add_argument("--amp", type=int, default=1, help="-1: no apex; N >= 0: apex at opt level ON")
    parser.add_argument("--clip-grad-norm", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    params = parser.parse_args()
    params.fp16, params.apex = bool(params.fp16), bool(params.apex)
    params.device = "cuda" if torch.cuda.is_available() else "cpu"

    torch.manual_seed(0)
    model = AutocastMLP(params.fp16, params.device).to(params.device)
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
