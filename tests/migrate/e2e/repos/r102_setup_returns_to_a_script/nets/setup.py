"""LightningDOT's setup_for_distributed_mode: moves the model to its device and, under the fp16
switch, initializes apex: the models alone when no optimizer is given (evaluation), model and
optimizer otherwise; returns both to its caller."""

import torch


def setup_for_training(model, optimizer: torch.optim.Optimizer, device, fp16=False, opt_level="O1"):
    model.to(device)
    if fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex to use fp16 training.")

        if optimizer is None:
            model = amp.initialize(model, optimizer, opt_level=opt_level)
        else:
            model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    return model, optimizer
