"""Trains with apex's static loss scale of 1 by default (--loss-scale), the choice of a
project whose loss backward ignores the gradient it is handed (warp-ctc's CTC loss: any
other scale would reach the weights unscaled by amp), and clips amp's master params.

--inject-step N makes the gradients of step N infinite (an fp16 overflow); --skip-step N
leaves step N out (its loss is logged; no backward, no step)."""

import argparse
import os

import torch
from apex import amp

import toydata


class FixedGradientLoss(torch.autograd.Function):
    """Half the squared error, whose backward hands back its own gradient whatever scale
    the caller multiplied the loss by."""

    @staticmethod
    def forward(ctx, prediction, target):
        error = prediction.float() - target.float()
        ctx.save_for_backward(error)
        ctx.dtype = prediction.dtype
        return 0.5 * (error ** 2).mean()

    @staticmethod
    def backward(ctx, grad_output):
        (error,) = ctx.saved_tensors
        return (error / error.numel()).to(ctx.dtype), None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", default=1)
    parser.add_argument("--max-norm", type=float, default=400.0)
    parser.add_argument("--inject-step", type=int, default=-1)
    parser.add_argument("--skip-step", type=int, default=-1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    net, opt = amp.initialize(net, opt, opt_level=args.opt_level, loss_scale=args.loss_scale)

    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        amp.load_state_dict(saved["amp"])
        first = saved["step"]

    current = [first]
    first_weight = next(net.parameters())
    first_weight.register_hook(lambda g: g * float("inf") if current[0] == args.inject_step else g)

    data = toydata.make_data()
    net.train()
    for step in range(first, first + args.steps):
        current[0] = step
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = FixedGradientLoss.apply(net(x), y)
        if step == args.skip_step:
            toydata.log(step, "loss", loss.item())
            continue
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
        torch.nn.utils.clip_grad_norm_(amp.master_params(opt), args.max_norm)
        opt.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        saved = {"step": first + args.steps, "model": net.state_dict(), "optimizer": opt.state_dict(),
                 "amp": amp.state_dict()}
        torch.save(saved, args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


if __name__ == "__main__":
    main()
