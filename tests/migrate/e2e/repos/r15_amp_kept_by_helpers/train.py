"""Trains here; a Checkpointer keeps apex.amp for its state and clip_gradients reads its master params."""

import argparse

import torch
import torch.nn.functional as F
from apex import amp

import toydata
from engine.tools import Checkpointer, clip_gradients


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
    checkpointer = Checkpointer(model, optimizer, amp=amp)

    start_step = checkpointer.load(args.resume) if args.resume else 0
    data = toydata.make_data()
    for step in range(start_step, start_step + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        norm = clip_gradients(amp, optimizer, args.max_norm)
        optimizer.step()
        toydata.log(step, "loss", loss.item())
        toydata.log(step, "grad_norm", norm.item())

    if args.ckpt_out:
        checkpointer.save(args.ckpt_out, start_step + args.steps)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
