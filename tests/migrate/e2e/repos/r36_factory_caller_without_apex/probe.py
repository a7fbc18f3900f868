"""A float32 probe with no apex of its own: it builds a scorer and its optimizer through
nets.setup.prepare (fp16 off), takes a frozen reference scorer from the same helper by
index, and trains the first to agree with the labels."""

import argparse

import torch
import torch.nn.functional as F

import toydata
from nets.reader import Scorer, batch
from nets.setup import prepare


def arguments():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def probe(cfg):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(5)
    scorer = Scorer()
    scorer, optimizer = prepare(scorer, torch.optim.SGD(scorer.parameters(), lr=0.3), device)
    reference = prepare(Scorer(), None, device)[0].eval()
    for step in range(cfg.steps):
        x, label = (t.to(device) for t in batch(step))
        with torch.no_grad():
            agree = (reference(x).argmax(1) == label).float().mean()
        loss = F.cross_entropy(scorer(x), label)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        toydata.log(step, "loss", loss.item())
    toydata.log(cfg.steps, "reference-agreement", agree.item())
    return scorer, optimizer


if __name__ == "__main__":
    cfg = arguments()
    scorer, optimizer = probe(cfg)
    if cfg.ckpt_out:
        torch.save({"scorer": scorer.state_dict(), "step": cfg.steps}, cfg.ckpt_out)
    if cfg.params_out:
        torch.save(dict(scorer.state_dict()), cfg.params_out)
