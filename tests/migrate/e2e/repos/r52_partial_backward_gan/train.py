"""Trains the toy GAN on the shared synthetic samples (their inputs are the real batches)."""

import argparse

import torch

import toydata
from gan import Trainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = Trainer(device, fp16=args.fp16, accumulate=args.accumulate)
    if args.resume:
        trainer.load(args.resume)
    else:
        trainer.init_GAN()
    data = toydata.make_data()
    start = trainer.steps
    for step in range(start, start + args.steps):
        reals = toydata.batch(data, step)[0].to(device)
        trainer.train(reals)
        toydata.log(step, "loss", trainer.d_loss)
    if args.ckpt_out:
        trainer.save(args.ckpt_out)
    if args.params_out:
        params = {f"G.{k}": v for k, v in trainer.GAN.G.state_dict().items()}
        params.update({f"D.{k}": v for k, v in trainer.GAN.D.state_dict().items()})
        torch.save({k: v.detach().float().cpu() for k, v in params.items()}, args.params_out)


if __name__ == "__main__":
    main(parse_args())
