"""Gradient accumulation: scale_loss with delay_unscale on the micro-batches between steps.

The loss is summed, not averaged: at O1 the first steps overflow and are skipped while the
loss scale calibrates down from 65536, as in many real runs."""

import argparse

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--accumulation-steps", type=int, default=4)
    parser.add_argument("--steps", type=int, default=48, help="micro-batches")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = toydata.make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    accum = args.accumulation_steps
    optimizer.zero_grad()
    for i in range(start, start + args.steps):
        x, y = toydata.batch(data, i)
        loss = F.mse_loss(model(x), y, reduction="sum") / accum
        with amp.scale_loss(loss, optimizer, delay_unscale=(i + 1) % accum != 0) as scaled_loss:
            scaled_loss.backward()
        if (i + 1) % accum == 0:
            optimizer.step()
            optimizer.zero_grad()
        toydata.log(i, "loss", loss.item() * accum)

    if args.ckpt_out:
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "amp": amp.state_dict(), "step": start + args.steps}, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
