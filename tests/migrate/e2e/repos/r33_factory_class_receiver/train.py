"""Trains the pair encoder with in-batch negatives: the trainer's __init__ gets the model and
optimizer back from nets.placement (apex initialized there) and keeps them on self; its other
methods scale the loss, clip, step, save and load apex's state."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.blocks import PairEncoder, pairs
from nets.placement import place


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


class RetrievalTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.manual_seed(0)
        encoder = PairEncoder()
        optimizer = torch.optim.Adam(encoder.parameters(), lr=0.01)
        encoder, optimizer = place(encoder, optimizer, self.device, cfg.fp16, cfg.opt_level)
        self.encoder = encoder
        self.optimizer = optimizer
        self.start = 0
        if cfg.resume:
            self.load(cfg.resume)

    def load(self, path):
        state = torch.load(path, map_location=self.device)
        self.encoder.load_state_dict(state["encoder"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.cfg.fp16:
            from apex import amp

            amp.load_state_dict(state["amp"])
        self.start = state["step"]

    def train_step(self, step):
        queries, passages = (t.to(self.device) for t in pairs(step))
        scores = self.encoder(queries) @ self.encoder(passages).t()
        loss = F.cross_entropy(scores, torch.arange(len(queries), device=self.device))
        if self.cfg.fp16:
            from apex import amp

            with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.encoder.parameters(), 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad()
        return loss

    def run(self):
        for step in range(self.start, self.start + self.cfg.steps):
            loss = self.train_step(step)
            toydata.log(step, "loss", loss.item())
        return self.start + self.cfg.steps

    def save(self, path, step):
        state = {"encoder": self.encoder.state_dict(), "optimizer": self.optimizer.state_dict(), "step": step}
        if self.cfg.fp16:
            from apex import amp

            state["amp"] = amp.state_dict()
        torch.save(state, path)


def main(cfg):
    trainer = RetrievalTrainer(cfg)
    last = trainer.run()
    if cfg.ckpt_out:
        trainer.save(cfg.ckpt_out, last)
    if cfg.params_out:
        torch.save(dict(trainer.encoder.state_dict()), cfg.params_out)


if __name__ == "__main__":
    main(parse_args())
