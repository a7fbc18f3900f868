"""Launcher (cvpods' shape): the config says whether apex mixed precision is on; the default
runner sets apex up itself and its optimization hook scales the loss the step stored."""

import argparse
import types

import torch

import toydata
from toypods.engine import DefaultRunner
from toypods.model import Regressor


def main(args):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = Regressor().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    cfg = types.SimpleNamespace(FP16_ENABLED=not args.fp32, FP16_TYPE="APEX", OPT_LEVEL=args.opt_level)
    runner = DefaultRunner(cfg, model, toydata.make_data(), optimizer, device)
    start = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        runner.model.load_state_dict(state["model"])
        runner.optimizer.load_state_dict(state["optimizer"])
        start = state["iter"]
    runner.train(start, start + args.steps)
    if args.ckpt_out:
        torch.save(runner.state(), args.ckpt_out)
    if args.params_out:
        toydata.save_params(runner.model.net, args.params_out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--fp32", action="store_true")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    main(parser.parse_args())
