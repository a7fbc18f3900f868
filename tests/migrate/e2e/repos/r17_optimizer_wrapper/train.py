"""Launcher: a Task whose optimizer is a ScheduledSGD (an lr schedule around torch's SGD)."""

import argparse

import torch

import toydata
from engine.optim import ScheduledSGD
from engine.task import Task


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp-type", default="apex", choices=["apex", "native", "none"])
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", default="dynamic")
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--accumulate", type=int, default=1)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--total-steps", type=int, default=48)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    amp_args = None
    if args.amp_type != "none":
        loss_scale = args.loss_scale if args.loss_scale == "dynamic" else float(args.loss_scale)
        amp_args = {"opt_level": args.opt_level, "loss_scale": loss_scale}

    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    task = Task(model, device, args.total_steps, clip_grad=args.clip_grad, accumulate=args.accumulate)
    task.set_optimizer(ScheduledSGD(base_lr=0.05)).set_amp_args(amp_args, args.amp_type)
    task.prepare()
    if args.resume:
        task.set_state(torch.load(args.resume, map_location=device))
    data = toydata.make_data()
    for _ in range(args.steps):
        iteration = task.iteration
        toydata.log(iteration, "loss", task.train_step(toydata.batch(data, iteration)))
    if args.ckpt_out:
        torch.save(task.get_state(), args.ckpt_out)
    if args.params_out:
        toydata.save_params(task.model, args.params_out)


if __name__ == "__main__":
    main()
