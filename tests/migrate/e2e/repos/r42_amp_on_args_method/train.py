"""Launcher in the shape of pre-training toolkits: with --fp16 (the default here) apex's
initialize runs inside worker() and apex.amp itself is kept on the options object
(``opts.amp``); worker() picks a trainer class from a table and hands the options to its
fit() method, which scales the loss through them (the forward pass is a method each subclass
defines); the checkpoints keep amp's loss-scaler state read through the same attribute."""

import argparse

import torch

import toydata
from models import build, describe


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--report-every", type=int, default=0)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--fp16-opt-level", default="O1")
    parser.add_argument("--task", default="regression")
    parser.add_argument("--accumulation", type=int, default=1)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


class Trainer:
    def __init__(self, opts):
        self.accumulation = opts.accumulation

    def forward_loss(self, model, x, y):
        raise NotImplementedError

    def fit(self, opts, model, optimizer, data, start):
        model.train()
        optimizer.zero_grad()
        for idx in range(start, start + opts.steps):
            x, y = toydata.batch(data, idx)
            x, y = x.to(opts.device), y.to(opts.device)
            loss = self.forward_loss(model, x, y)
            if opts.fp16:
                with opts.amp.scale_loss(loss, optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            if (idx + 1) % self.accumulation == 0:
                optimizer.step()
                optimizer.zero_grad()
            toydata.log(idx, "loss", loss.item())
            describe(opts, idx)


class RegressionTrainer(Trainer):
    def forward_loss(self, model, x, y):
        return torch.nn.functional.mse_loss(model(x), y) / self.accumulation


TRAINERS = {"regression": RegressionTrainer}


def main(opts):
    torch.manual_seed(0)
    worker(opts)


def worker(opts):
    opts.device = "cuda" if torch.cuda.is_available() else "cpu"
    model, optimizer = build(opts, opts.device)
    if opts.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("--fp16 needs apex (https://github.com/NVIDIA/apex)") from None
        model, optimizer = amp.initialize(model, optimizer, opt_level=opts.fp16_opt_level, verbosity=0)
        opts.amp = amp

    start = 0
    if opts.resume:
        checkpoint = torch.load(opts.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if opts.fp16:
            opts.amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    trainer = TRAINERS[opts.task](opts)
    trainer.fit(opts, model, optimizer, toydata.make_data(), start)

    if opts.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + opts.steps}
        if opts.fp16:
            state["amp"] = opts.amp.state_dict()
        torch.save(state, opts.ckpt_out)
    if opts.params_out:
        toydata.save_params(model, opts.params_out)


if __name__ == "__main__":
    main(parse_args())
