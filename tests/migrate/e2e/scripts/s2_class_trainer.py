"""Classifier trained by a Trainer class: amp.initialize in __init__, the step in train_step()."""

import argparse

import torch
import torch.nn as nn
from apex import amp

import toydata


class Trainer:
    def __init__(self, args):
        self.args = args
        torch.manual_seed(0)
        self.model = toydata.make_mlp(batchnorm=True)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.criterion = nn.CrossEntropyLoss()
        self.model, self.optimizer = amp.initialize(
            self.model, self.optimizer, opt_level=args.opt_level, loss_scale=args.loss_scale, verbosity=0
        )
        self.step = 0

    def train_step(self, x, y):
        self.model.train()
        self.optimizer.zero_grad()
        loss = self.criterion(self.model(x), toydata.make_labels(y))
        with amp.scale_loss(loss, self.optimizer) as scaled_loss:
            scaled_loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, data, steps):
        for _ in range(steps):
            x, y = toydata.batch(data, self.step)
            toydata.log(self.step, "loss", self.train_step(x, y))
            self.step += 1

    def save(self, path):
        torch.save({
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "amp": amp.state_dict(),
            "step": self.step,
        }, path)

    def load(self, path):
        checkpoint = torch.load(path)
        self.model.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        amp.load_state_dict(checkpoint["amp"])
        self.step = checkpoint["step"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", default="dynamic")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


if __name__ == "__main__":
    args = parse_args()
    trainer = Trainer(args)
    if args.resume:
        trainer.load(args.resume)
    trainer.fit(toydata.make_data(), args.steps)
    if args.ckpt_out:
        trainer.save(args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)
