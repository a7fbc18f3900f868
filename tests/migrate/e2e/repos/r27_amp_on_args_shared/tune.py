"""Sibling task script: warms the network up on the first batches at a lower learning rate,
then trains with the step function of train.py, handing it its own options object, on which
it keeps apex.amp as train.py does (``args.amp``)."""

import argparse

import torch

import toydata
from train import fit_batch


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--warmup", type=int, default=4)
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--fp16-opt-level", default="O1")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(1)
    args.device = "cuda" if torch.cuda.is_available() else "cpu"
    net = toydata.make_mlp().to(args.device)
    opt = torch.optim.SGD(net.parameters(), lr=args.lr, momentum=0.9)
    if args.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("--fp16 needs apex (https://github.com/NVIDIA/apex)") from None
        net, opt = amp.initialize(net, opt, opt_level=args.fp16_opt_level, verbosity=0)
        args.amp = amp

    data = toydata.make_data()
    net.train()
    for idx in range(args.steps):
        for group in opt.param_groups:
            group["lr"] = args.lr * min(1.0, (idx + 1) / args.warmup)
        x, y = toydata.batch(data, idx)
        loss = fit_batch(args, net, opt, x, y)
        toydata.log(idx, "loss", loss.item())

    if args.ckpt_out:
        torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "step": args.steps}, args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


if __name__ == "__main__":
    main()
