"""A script run as __main__ (UCSNet's train.py): setup() builds the network and optimizer,
initializes apex under --fp16 after a nested helper that returns early, and restores a
checkpoint (amp's state too); main() scales the loss under --fp16 and steps, and saves amp's
state.  The __main__ guard calls setup() and then main(), at module level: no call chain
hands a GradScaler from one to the other."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def setup(args, device):
    def sync():
        if not torch.distributed.is_available():
            return
        if not torch.distributed.is_initialized():
            return
        torch.distributed.barrier()

    sync()
    net = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    if args.fp16:
        net, opt = amp.initialize(net, opt, opt_level=args.opt_level)

    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        if args.fp16:
            amp.load_state_dict(saved["amp"])
        first = saved["step"]
    return net, opt, first


def main(args, net, opt, first, device):
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
        if args.fp16:
            saved["amp"] = amp.state_dict()
        torch.save(saved, args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", type=int, default=1)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net, opt, first = setup(args, device)
    main(args, net, opt, first, device)
