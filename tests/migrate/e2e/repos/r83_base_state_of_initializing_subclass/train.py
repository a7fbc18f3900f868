"""DL-Art-School's shape: the trainer's base class saves and resumes amp's state on self, the
trainer initializes apex in its own __init__ with one loss scaler per training step, and a
feature model derives from the same base without amp.  On a scaled run the first step's loss is
blown up (--spike) so that its loss scaler overflows there and skips that step."""

import argparse

import torch

import toydata
from models.trainer import ExtensibleTrainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--spike", type=int, default=3)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    opt = {"device": device, "steps": [{"lr": args.lr}, {"lr": args.lr / 2}]}
    if args.fp16:
        opt["amp_opt_level"] = args.opt_level
    model = ExtensibleTrainer(opt)
    start = model.resume_training(args.resume) if args.resume else 0
    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        # only a scaled run can skip the overflowing step: the fp32 runs keep their losses
        spike = step == args.spike and args.fp16 and args.opt_level != "O0"
        loss = model.optimize_parameters(x, y, spike)
        toydata.log(step, "loss", loss.item())
    if args.ckpt_out:
        model.save_training_state(args.ckpt_out, start + args.steps)
    if args.params_out:
        toydata.save_params(model.net, args.params_out)


if __name__ == "__main__":
    main()
