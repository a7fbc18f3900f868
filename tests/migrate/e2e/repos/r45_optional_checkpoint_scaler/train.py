"""Trains here (initialize and scale_loss); checkpoints through utils/checkpoint.py, whose loader
evaluate.py also calls, without a loss scaler."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata
from utils.checkpoint import load_checkpoint, save_checkpoint


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp(batchnorm=True).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    start_step = 0
    if args.resume and os.path.isfile(args.resume):
        start_step = load_checkpoint(args.resume, model, optimizer)
        print(f"=> loaded checkpoint '{args.resume}' (step {start_step})")

    data = toydata.make_data()
    model.train()
    for step in range(start_step, start_step + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        output = model(x)
        loss = F.mse_loss(output, y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        save_checkpoint(args.ckpt_out, model, optimizer, start_step + args.steps)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
