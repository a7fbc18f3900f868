"""Moves a model to its device and, with fp16 on, hands it with its optimizer to apex; both
trainers get their model and optimizer back from here."""

import torch


def place(model, optimizer, device, fp16=False, opt_level="O1"):
    model.to(device)
    if fp16:
        try:
            from apex import amp
        except ImportError as missing:
            raise ImportError("fp16 training needs apex") from missing

        model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level, verbosity=0)
    if torch.cuda.device_count() > 1:
        model = torch.nn.DataParallel(model)
    return model, optimizer
