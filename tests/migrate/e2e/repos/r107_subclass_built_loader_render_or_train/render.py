"""Renders from a checkpoint: the networks are set up for mixed-precision inference, then
loaded (amp's state with them when the flag says so) and run on one batch."""

import torch

import toydata
from nets.mip import MipField
from nets.proposal import ProposalNet


def render_only(args):
    use_amp = args.opt_level != "O0"
    field, proposal = MipField(), ProposalNet()
    if use_amp:
        from apex import amp
        [field, proposal] = amp.initialize([field, proposal], None, opt_level=args.opt_level)
    field.loadFromFile(args.resume, use_amp)
    proposal.loadFromFile(args.resume, use_amp)
    field.eval()
    proposal.eval()
    x, y = toydata.batch(toydata.make_data(), 0)
    with torch.no_grad():
        out = field(x) + 0.1 * proposal(x)
    print("render mse %.6f" % float(((out.float() - y) ** 2).mean()))
