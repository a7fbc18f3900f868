"""Puts a model on its device and, when fp16 is asked for, passes it and its optimizer
through apex; the trainer and the probe script both call it."""

import torch


def prepare(model, optimizer, device, fp16=False, opt_level="O1"):
    model.to(device)
    if fp16:
        try:
            from apex import amp
        except ImportError as missing:
            raise ImportError("fp16 needs apex installed") from missing

        model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, verbosity=0)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer
