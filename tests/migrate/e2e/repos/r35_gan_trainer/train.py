"""Trains the adaptation toy: labelled source batches, shifted target batches; the trainer does
the updates and its own checkpoints."""

import argparse

import torch

import toydata
from trainer import AdaptTrainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--consistency", type=float, default=0.1)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = AdaptTrainer(args, device)
    start = trainer.load(args.resume) if args.resume else 0
    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        x_t = toydata.batch(data, step + 3)[0].to(device) + 0.5
        pred, pred_t = trainer.gen_update(x, x_t, y)
        trainer.dis_update(pred, pred_t)
        toydata.log(step, "loss", trainer.meters["seg"])
    if args.ckpt_out:
        trainer.save(args.ckpt_out, start + args.steps)
    if args.params_out:
        params = {f"G.{k}": v for k, v in trainer.G.state_dict().items()}
        params.update({f"D1.{k}": v for k, v in trainer.D1.state_dict().items()})
        params.update({f"D2.{k}": v for k, v in trainer.D2.state_dict().items()})
        torch.save({k: v.detach().float().cpu() for k, v in params.items()}, args.params_out)


if __name__ == "__main__":
    main(parse_args())
