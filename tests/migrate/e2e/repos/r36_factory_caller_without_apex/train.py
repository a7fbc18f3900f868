"""Trains the scorer: the trainer's __init__ gets model and optimizer back from
nets.setup.prepare (apex initialized there); a method of its own runs the model and
computes the loss, the epoch scales it, clips on apex's master params and steps; the
trainer saves and loads apex's state with its checkpoints."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.reader import Scorer, batch
from nets.setup import prepare


def arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


class ScorerTrainer:
    def __init__(self, cfg):
        self.cfg = cfg
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        torch.manual_seed(3)
        scorer = Scorer()
        optimizer = torch.optim.SGD(scorer.parameters(), lr=0.3, momentum=0.9)
        scorer, optimizer = prepare(scorer, optimizer, self.device, cfg.fp16, cfg.opt_level)
        self.scorer = scorer
        self.optimizer = optimizer
        self.start = 0
        if cfg.resume:
            self.restore(cfg.resume)

    def restore(self, path):
        state = torch.load(path, map_location=self.device)
        self.scorer.load_state_dict(state["scorer"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.cfg.fp16:
            from apex import amp

            amp.load_state_dict(state["amp"])
        self.start = state["step"]

    def _calc_loss(self, step):
        x, label = (t.to(self.device) for t in batch(step))
        logits = self.scorer(x)
        return F.cross_entropy(logits, label)

    def fit(self):
        for step in range(self.start, self.start + self.cfg.steps):
            loss = self._calc_loss(step)
            if self.cfg.fp16:
                from apex import amp

                with amp.scale_loss(loss, self.optimizer) as scaled_loss:
                    scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(self.optimizer), 2.0)
            else:
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.scorer.parameters(), 2.0)
            self.optimizer.step()
            self.optimizer.zero_grad()
            toydata.log(step, "loss", loss.item())
        return self.start + self.cfg.steps

    def save(self, path, step):
        state = {"scorer": self.scorer.state_dict(), "optimizer": self.optimizer.state_dict(), "step": step}
        if self.cfg.fp16:
            from apex import amp

            state["amp"] = amp.state_dict()
        torch.save(state, path)


if __name__ == "__main__":
    cfg = arguments()
    trainer = ScorerTrainer(cfg)
    last = trainer.fit()
    if cfg.ckpt_out:
        trainer.save(cfg.ckpt_out, last)
    if cfg.params_out:
        torch.save(dict(trainer.scorer.state_dict()), cfg.params_out)
