"""Launcher without apex (FARM's examples): the library builds the optimizer and sets amp up
for --opt-level (none with --no-amp), the trainer trains with the same switch."""

import argparse

import torch

import toydata
from toyfarm.optimization import initialize_optimizer
from toyfarm.train import Trainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--grad-acc-steps", type=int, default=1)
    parser.add_argument("--max-grad-norm", type=float, default=0.5)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(opts):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    use_amp = opts.opt_level if opts.amp and opts.opt_level != "O0" else None
    model, optimizer = initialize_optimizer(toydata.make_mlp(), device, opts.lr, use_amp=use_amp)
    trainer = Trainer(model, optimizer, device, grad_acc_steps=opts.grad_acc_steps,
                      max_grad_norm=opts.max_grad_norm, use_amp=use_amp)
    if opts.resume:
        trainer.load(opts.resume)
    trainer.train(toydata.make_data(), opts.steps)
    if opts.ckpt_out:
        trainer.save(opts.ckpt_out)
    if opts.params_out:
        toydata.save_params(trainer.model, opts.params_out)


if __name__ == "__main__":
    main(parse_args())
