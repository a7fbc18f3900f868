"""A second trainer over the same placement helper: the span reader learns to classify, its
trainer keeping what place() returns on self like the retrieval trainer; it shares no code
with train.py."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.blocks import SpanReader, spans
from nets.placement import place


def options():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


class ReaderTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.manual_seed(1)
        reader = SpanReader()
        optimizer = torch.optim.SGD(reader.parameters(), lr=0.2, momentum=0.9)
        reader, optimizer = place(reader, optimizer, device, cfg.fp16, cfg.opt_level)
        self.reader = reader
        self.optimizer = optimizer
        self.device = device

    def epoch(self):
        for step in range(self.cfg.steps):
            x, label = spans(step)
            x, label = x.to(self.device), label.to(self.device)
            loss = F.cross_entropy(self.reader(x), label)
            if self.cfg.fp16:
                from apex import amp

                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad()
            toydata.log(step, "loss", loss.item())

    def save(self, path):
        state = {"reader": self.reader.state_dict(), "step": self.cfg.steps}
        if self.cfg.fp16:
            from apex import amp

            state["amp"] = amp.state_dict()
        torch.save(state, path)


if __name__ == "__main__":
    cfg = options()
    trainer = ReaderTrainer(cfg)
    trainer.epoch()
    if cfg.ckpt_out:
        trainer.save(cfg.ckpt_out)
    if cfg.params_out:
        torch.save(dict(trainer.reader.state_dict()), cfg.params_out)
