"""Launcher: --fp16 1 (the default) trains through apex at --opt-level; --fp16 0 in plain fp32."""

import argparse

import torch

import toydata
from hf.trainer import Trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", type=int, default=1)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = Trainer(toydata.make_mlp().to(device), device, fp16=bool(args.fp16), opt_level=args.opt_level)
    model = trainer.train(toydata.make_data(), 0, args.steps, resume=args.resume, ckpt_out=args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
