"""Trains with amp.initialize on every run (its opt level from --opt-level) but scales the loss
only under --fp16, with a plain backward otherwise, and steps once after both branches: on a
run with --fp16 0, apex's step took the plain backward's gradients as they were."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def train(args, device):
    net = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    net, opt = amp.initialize(net, opt, opt_level=args.opt_level)

    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        amp.load_state_dict(saved["amp"])
        first = saved["step"]

    data = toydata.make_data()
    net.train()
    for step in range(first, first + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        opt.zero_grad()
        loss = F.mse_loss(net(x), y)
        if args.fp16:
            with amp.scale_loss(loss, opt) as scaled:
                scaled.backward()
        else:
            loss.backward()
        opt.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        saved = {"step": first + args.steps, "model": net.state_dict(), "optimizer": opt.state_dict()}
        saved["amp"] = amp.state_dict()
        torch.save(saved, args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", type=int, default=0)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train(args, device)


if __name__ == "__main__":
    main()
