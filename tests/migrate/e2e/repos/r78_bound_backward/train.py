"""Launcher (SimpleCV's apex_ddp_train shape): sets up apex for the model and optimizer, builds
the package's Launcher and binds the scaling backward onto it; the Launcher's own methods run
the forward passes, clip and step.  The checkpoint keeps amp's state beside the Launcher's."""

import argparse

import torch

import toydata
from toycv import trainer
from toycv import default_backward

try:
    from apex import amp
except ImportError:
    raise ImportError("Please install apex from https://www.github.com/nvidia/apex")


def run(opt_level, steps, forward_times, resume, ckpt_out):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
    state = torch.load(resume, map_location="cpu") if resume else None
    if state is not None:
        amp.load_state_dict(state["amp"])
    tl = trainer.Launcher(model=model, optimizer=optimizer, device=device)
    if state is not None:
        tl.load(state["launcher"])
    tl.override_backward(default_backward.amp_backward)
    tl.train_iters(toydata.make_data(), steps, forward_times=forward_times)
    if ckpt_out:
        torch.save({"launcher": tl.state(), "amp": amp.state_dict()}, ckpt_out)
    return tl


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--forward-times", type=int, default=1)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()
    launcher = run(args.opt_level, args.steps, args.forward_times, args.resume, args.ckpt_out)
    if args.params_out:
        toydata.save_params(launcher.model, args.params_out)
