"""Launcher: the task from a config, the train step built by the name the config gives."""

import argparse

import torch

import toydata
from selfsup.task import SelfSupervisionTask
from selfsup.train_steps import get_train_step


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp-type", default="apex", choices=["apex", "pytorch"])
    parser.add_argument("--no-amp", action="store_true")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", default="dynamic")
    parser.add_argument("--clip-grad", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    loss_scale = args.loss_scale if args.loss_scale == "dynamic" else float(args.loss_scale)
    config = {
        "train_step": "standard_train_step",
        "clip_grad": args.clip_grad,
        "amp_params": {"use_amp": not args.no_amp, "amp_type": args.amp_type,
                       "amp_args": {"opt_level": args.opt_level, "loss_scale": loss_scale}},
    }
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    task = SelfSupervisionTask(config, model, optimizer, device)
    task.prepare()
    if args.resume:
        task.set_state(torch.load(args.resume, map_location=device))
    train_step = get_train_step(config["train_step"])
    for _ in range(args.steps):
        iteration = task.iteration
        train_step(task)
        toydata.log(iteration, "loss", task.losses[-1])
    if args.ckpt_out:
        torch.save(task.get_state(), args.ckpt_out)
    if args.params_out:
        toydata.save_params(task.model, args.params_out)


if __name__ == "__main__":
    main()
