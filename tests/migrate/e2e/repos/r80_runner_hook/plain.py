"""Launcher without apex: the simple runner given the optimization hook for fp32 training (the
runner sets nothing up, the hook does not scale)."""

import argparse

import torch

import toydata
from toypods.engine import SimpleRunner
from toypods.engine.hooks import OptimizationHook, clip_at_one
from toypods.model import Regressor


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Regressor().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    runner = SimpleRunner(model, toydata.make_data(), optimizer, device)
    runner.register_hooks([OptimizationHook(grad_clipper=clip_at_one)])
    runner.train(0, args.steps)
    if args.ckpt_out:
        torch.save(runner.state(), args.ckpt_out)
    if args.params_out:
        toydata.save_params(model.net, args.params_out)
