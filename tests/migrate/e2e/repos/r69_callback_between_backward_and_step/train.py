"""A trainer that fires "backward" between the scaled backward and the optimizer step; the
handler registered there clips the gradients (--max-norm), which apex had unscaled when the
amp.scale_loss block exited."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import callbacks
import toydata


class Trainer:
    def __init__(self, model, optimizer, handler, opt_level, device):
        self.device = device
        model.to(device)
        self.model, self.optimizer = amp.initialize(model, optimizer, opt_level=opt_level)
        self.handler = handler

    def train_step(self, x, y):
        x, y = x.to(self.device), y.to(self.device)
        loss = F.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        with amp.scale_loss(loss, self.optimizer) as scaled:
            scaled.backward()
        self.handler.fire_event("backward", self)
        self.optimizer.step()
        return loss.item()

    def state(self, step):
        return {"step": step, "model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                "amp": amp.state_dict()}

    def restore(self, saved):
        self.model.load_state_dict(saved["model"])
        self.optimizer.load_state_dict(saved["optimizer"])
        amp.load_state_dict(saved["amp"])
        return saved["step"]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--max-norm", type=float, default=0.3)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    net = toydata.make_mlp()
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    handler = callbacks.Handler()
    handler.register("backward", callbacks.clip_gradients(args.max_norm))
    trainer = Trainer(net, opt, handler, args.opt_level, device)

    first = 0
    if args.resume and os.path.isfile(args.resume):
        first = trainer.restore(torch.load(args.resume, map_location="cpu"))

    data = toydata.make_data()
    trainer.model.train()
    for step in range(first, first + args.steps):
        toydata.log(step, "loss", trainer.train_step(*toydata.batch(data, step)))

    if args.ckpt_out:
        torch.save(trainer.state(first + args.steps), args.ckpt_out)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)


if __name__ == "__main__":
    main()
