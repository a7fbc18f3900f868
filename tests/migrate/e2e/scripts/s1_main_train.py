"""Regression MLP: amp.initialize in main() behind --fp16, amp.scale_loss in train()."""

import argparse

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def train(model, optimizer, data, start, steps, args):
    model.train()
    for step in range(start, start + steps):
        x, y = toydata.batch(data, step)
        optimizer.zero_grad()
        output = model(x)
        loss = F.mse_loss(output, y)
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        optimizer.step()
        toydata.log(step, "loss", loss.item())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", action="store_true", help="mixed precision through apex.amp")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = toydata.make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if args.fp16:
            amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    train(model, optimizer, toydata.make_data(), start, args.steps, args)

    if args.ckpt_out:
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if args.fp16:
            checkpoint["amp"] = amp.state_dict()
        torch.save(checkpoint, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
