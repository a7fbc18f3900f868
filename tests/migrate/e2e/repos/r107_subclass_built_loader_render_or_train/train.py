"""Trains a field built as its subclass and a proposal network, both before amp.initialize;
resumes through their loadFromFile methods.  --render runs render.py's render_only instead of
training, in the same __main__ block (Enigmatisms/NeRF's train.py)."""

import argparse
import os

import torch
import torch.nn.functional as F

import toydata
from nets.mip import MipField
from nets.proposal import ProposalNet
from render import render_only


def main(args):
    use_amp = args.opt_level != "O0"

    from apex import amp

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    field = MipField().to(device)
    proposal = ProposalNet().to(device)
    opt = torch.optim.SGD(list(field.parameters()) + list(proposal.parameters()), lr=0.05, momentum=0.9)
    [field, proposal], opt = amp.initialize([field, proposal], opt, opt_level=args.opt_level)

    start_step = 0
    if args.resume and os.path.isfile(args.resume):
        [start_step] = field.loadFromFile(args.resume, use_amp, opt, ["step"])
        proposal.loadFromFile(args.resume, use_amp)

    data = toydata.make_data()
    field.train()
    proposal.train()
    for step in range(start_step, start_step + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(field(x) + 0.1 * proposal(x), y)
        opt.zero_grad()
        with amp.scale_loss(loss, opt) as scaled_loss:
            scaled_loss.backward()
        opt.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        torch.save({"field": field.state_dict(), "proposal": proposal.state_dict(), "optimizer": opt.state_dict(),
                    "amp": amp.state_dict(), "step": start_step + args.steps}, args.ckpt_out)
    if args.params_out:
        toydata.save_params(torch.nn.ModuleList([field, proposal]), args.params_out)


def parse():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    parser.add_argument("--render", action="store_true")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse()
    if args.render:
        render_only(args)
    else:
        main(args)
