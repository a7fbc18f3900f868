"""Clipping on amp.master_params, with apex-format checkpoints (amp.state_dict() under 'amp')."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def save_checkpoint(path, model, optimizer, step):
    torch.save({
        "step": step,
        "state_dict": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "amp": amp.state_dict(),
    }, path)


def load_checkpoint(path, model, optimizer):
    checkpoint = torch.load(path, map_location="cpu")
    model.load_state_dict(checkpoint["state_dict"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    amp.load_state_dict(checkpoint["amp"])
    return checkpoint["step"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O2")
    parser.add_argument("--clip-grad", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = toydata.make_mlp()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level,
                                      keep_batchnorm_fp32=None, loss_scale="dynamic")
    start = 0
    if args.resume and os.path.isfile(args.resume):
        start = load_checkpoint(args.resume, model, optimizer)
        print(f"=> resumed from step {start}")

    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        output = model(x)
        loss = F.mse_loss(output.float(), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.clip_grad)
        optimizer.step()
        toydata.log(step, "loss", loss.item())
        toydata.log(step, "grad_norm", grad_norm)

    if args.ckpt_out:
        save_checkpoint(args.ckpt_out, model, optimizer, start + args.steps)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
