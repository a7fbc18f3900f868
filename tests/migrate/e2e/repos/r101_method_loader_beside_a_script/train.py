"""Trains the network built before amp.initialize; resumes through the network's own
loadFromFile, which loads amp's state when the flag says so."""

import argparse
import os

import torch
import torch.nn.functional as F

import toydata
from nets.proposal import ProposalNet


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()
    use_amp = args.opt_level != "O0"

    from apex import amp

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = ProposalNet().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    net, opt = amp.initialize(net, opt, opt_level=args.opt_level)

    start_step = 0
    if args.resume and os.path.isfile(args.resume):
        [start_step] = net.loadFromFile(args.resume, use_amp, opt, ["step"])

    data = toydata.make_data()
    net.train()
    for step in range(start_step, start_step + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(net(x), y)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        torch.save({"model": net.state_dict(), "optimizer": opt.state_dict(), "amp": amp.state_dict(),
                    "step": start_step + args.steps}, args.ckpt_out)
    if args.params_out:
        toydata.save_params(net, args.params_out)


if __name__ == "__main__":
    main()
