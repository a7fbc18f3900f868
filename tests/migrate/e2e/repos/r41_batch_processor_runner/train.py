"""Launcher script: a self-supervised-style config (fp16 on the distributed path, an optimizer
hook config with gradient accumulation and clipping) and selfsup.apis.train_model."""

import argparse

import torch

import toydata
from selfsup.apis import DEVICE, train_model


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", type=int, default=1, help="0: fp32, apex never set up")
    parser.add_argument("--dist", type=int, default=1, help="0: the single-device path (fp32 only)")
    parser.add_argument("--update-interval", type=int, default=1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    cfg = dict(
        use_fp16=bool(args.fp16),
        optimizer_config=dict(update_interval=args.update_interval, grad_clip=dict(max_norm=0.5),
                              use_fp16=bool(args.fp16)),
        lr=0.05,
    )
    torch.manual_seed(0)
    data = toydata.make_data()
    model = train_model(toydata.make_mlp().to(DEVICE), cfg, lambda step: toydata.batch(data, step), args.steps,
                        distributed=bool(args.dist), resume=args.resume, ckpt_out=args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
