"""CuLE's utils/initializers.py shape: the versions printed (apex.amp's among them) and the
model set up, with amp.initialize only where training runs on the accelerator path (not
--cpu-train)."""

import torch

try:
    import apex
    from apex.amp import __version__
    from apex import amp
except ImportError:
    raise ImportError("Please install apex to run this example.")


def log_initialize(args):
    print("PyTorch  : {}".format(torch.__version__))
    print("APEX     : {}".format(".".join([str(i) for i in apex.amp.__version__.VERSION])))


def model_initialize(args, model, device):
    model = model.to(device).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if not args.cpu_train:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale=args.loss_scale)
    return model, optimizer
