"""Launcher script: a config in the mmseg style (a runner type, an optimizer hook config with
use_fp16), a detector-like model, and toydet.apis.train_model, which sets up apex for fp16."""

import argparse

import torch

import toydata
from toydet.apis import train_model
from toydet.model import ToyDetector


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", type=int, default=1, help="0: fp32, no apex and the library's plain runner")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    cfg = dict(
        runner=dict(type="IterBasedRunnerAmp" if args.fp16 else "IterBasedRunner"),
        optimizer_config=dict(type="AmpOptimizerHook", grad_clip=dict(max_norm=0.5), use_fp16=bool(args.fp16)),
        lr=0.05,
    )
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = train_model(ToyDetector().to(device), cfg, device, args.steps, resume=args.resume, ckpt_out=args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
