"""Launcher without apex of its own: the library builds the engine its options name (and
sets amp up); --no-amp sets amp up disabled."""

import argparse

import torch

import toydata
from toyreg.engine import current_scale
from toyreg.setup import build


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--engine", default="regression")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(opts):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    engine = build(opts, device)
    if opts.resume:
        engine.load(opts.resume)
    data = toydata.make_data()
    start = engine.step
    for step in range(start, start + opts.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = engine.update(x, y)
        engine.step += 1
        toydata.log(step, "loss", loss)
        if opts.amp:
            toydata.log(step, "scale", current_scale())
    if opts.ckpt_out:
        engine.save(opts.ckpt_out)
    if opts.params_out:
        toydata.save_params(engine.model, opts.params_out)


if __name__ == "__main__":
    main(parse_args())
