"""Trains with amp set up for --opt-level while the loss is scaled only on the iterations whose
args.fp16 is set (the loop turns it off and on every --period steps): the other iterations run a
plain loss.backward() that apex's patched step stepped as it was.  Both branches clip the model's
parameters the same way before the one step after the if, so once the plain backward is scaled
too the branches read the same and the migrated file writes them once, without the if."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def train(args, model, optimizer, data, device, first):
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    model.train()
    for step in range(first, first + args.steps):
        args.fp16 = (step // args.period) % 2 == 1
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled:
                scaled.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
        optimizer.step()
        toydata.log(step, "loss", loss.item())
    return model, optimizer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--period", type=int, default=4)
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        first = saved["step"]

    net, opt = train(args, net, opt, toydata.make_data(), device, first)

    if args.ckpt_out:
        torch.save({"step": first + args.steps, "model": net.state_dict(), "optimizer": opt.state_dict()},
                   args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


if __name__ == "__main__":
    main()
