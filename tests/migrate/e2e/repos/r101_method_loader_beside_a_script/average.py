"""Averages the weights of several checkpoints; no apex here: it builds the network and loads
each checkpoint through its loadFromFile, with the flag its command line gives (in a process
of its own, where no amp.initialize ever ran)."""

import argparse

import torch

from nets.proposal import ProposalNet


def average(paths, use_amp):
    states = []
    for path in paths:
        net = ProposalNet()
        net.loadFromFile(path, use_amp)
        states.append(net.state_dict())
    return {k: sum(s[k].float() for s in states) / len(states) for k in states[0]}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--out", default="average.pt")
    parser.add_argument("--use-amp", type=int, default=0)
    args = parser.parse_args()
    torch.save(average(args.paths, bool(args.use_amp)), args.out)
