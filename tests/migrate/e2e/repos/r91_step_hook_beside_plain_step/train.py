"""A trainer whose scaled branch steps through a hook method of its own (_apex_step) while the
other branch, a plain backward, steps the optimizer itself; args.fp16 switches between them
every --period steps, amp set up for --opt-level once."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


class Trainer:
    def __init__(self, model, optimizer, device, fp16):
        self.model = model
        self.optimizer = optimizer
        self.device = device
        self.fp16 = fp16

    def setup(self, opt_level):
        self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=opt_level)

    def _apex_step(self):
        self.optimizer.step()

    def train_batch(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        if self.fp16:
            with amp.scale_loss(loss, self.optimizer) as scaled:
                scaled.backward()
            self._apex_step()
        else:
            loss.backward()
            self.optimizer.step()
        return loss


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--period", type=int, default=4)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = toydata.make_mlp().to(device)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    first = 0
    if args.resume and os.path.isfile(args.resume):
        saved = torch.load(args.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        first = saved["step"]

    trainer = Trainer(net, opt, device, fp16=True)
    trainer.setup(args.opt_level)
    data = toydata.make_data()
    trainer.model.train()
    for step in range(first, first + args.steps):
        trainer.fp16 = (step // args.period) % 2 == 0
        loss = trainer.train_batch(*toydata.batch(data, step))
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        torch.save({"step": first + args.steps, "model": trainer.model.state_dict(),
                    "optimizer": trainer.optimizer.state_dict()}, args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)


if __name__ == "__main__":
    main()
