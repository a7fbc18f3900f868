"""Launcher: a model, an optimizer and a SequenceTrainer for --math fp16 (apex, with the loss
scaler tuned by --init-scale / --upscale-interval) or fp32."""

import argparse

import torch

import toydata
from seq.trainer import SequenceTrainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--math", default="fp16", choices=["fp16", "fp32"])
    parser.add_argument("--init-scale", type=float, default=1024.0)
    parser.add_argument("--upscale-interval", type=int, default=4)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    scaling = {"init_scale": args.init_scale, "upscale_interval": args.upscale_interval}
    trainer = SequenceTrainer(model, optimizer, args.math, scaling, device)
    if args.resume:
        trainer.load(args.resume)
    data = toydata.make_data()
    for _ in range(args.steps):
        trainer.iterate(data, args.accumulate)
    if args.ckpt_out:
        trainer.save(args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)


if __name__ == "__main__":
    main()
