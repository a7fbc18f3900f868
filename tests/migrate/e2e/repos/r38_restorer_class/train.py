"""Launcher in the shape of video-language trainers: the run's state (model, optimizer and,
under fp16, amp's loss scaler) is kept by a restorer object of utils/restore.py, imported under
another name, that resumes in its constructor and saves every few steps; --round-trip saves half
way, trains two more steps, then builds a second restorer that rewinds the run to that file;
--no-fp16 never turns amp on."""

import argparse
import os
from types import SimpleNamespace

import torch
import torch.nn.functional as F
from apex import amp

import toydata
from utils.restore import RunRestorer as Restorer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--round-trip", action="store_true")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def start_training(args):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, enabled=args.fp16, opt_level=args.opt_level)
    cfg = SimpleNamespace(fp16=args.fp16, resume=args.resume, save_every=1000)

    restorer = Restorer(cfg, model, optimizer)
    data = toydata.make_data()
    model.train()
    losses = {}
    step = restorer.step_done
    last, middle = step + args.steps, step + args.steps // 2
    rewind_at = middle + 2 if args.round_trip and args.ckpt_out else None
    snapshot = args.ckpt_out + ".middle"
    while step < last:
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses[step] = loss.item()
        restorer.step()
        step += 1
        if rewind_at is not None and step == middle:
            restorer.save(snapshot)
        elif step == rewind_at:
            # the run went on past its snapshot and was cut short: a new restorer rewinds it
            restorer = Restorer(SimpleNamespace(fp16=args.fp16, resume=snapshot, save_every=1000), model, optimizer)
            step, rewind_at = restorer.step_done, None
            os.remove(snapshot)
    for done in sorted(losses):
        toydata.log(done, "loss", losses[done])

    if args.ckpt_out:
        restorer.save(args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    start_training(parse_args())
