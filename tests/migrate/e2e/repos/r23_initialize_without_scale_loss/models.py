"""Model setup kept apart from the training loop: the network and its optimizer are made
here and, with mixed precision on, handed to apex's initialize at the opt level given on the
command line.  Nothing in this repository ever scales a loss: apex trains without loss
scaling then (its O1 casts alone)."""

import torch

import toydata


def load_model(args, device):
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    return model, optimizer
