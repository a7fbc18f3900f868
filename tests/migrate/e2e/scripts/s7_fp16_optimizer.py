"""The old apex.fp16_utils API: a half model and FP16_Optimizer with a static loss scale."""

import argparse

import torch
import torch.nn.functional as F
from apex.fp16_utils import FP16_Optimizer

import toydata


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fp16", action="store_true")
    parser.add_argument("--static-loss-scale", type=float, default=128.0)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = toydata.make_mlp()
    if args.fp16:
        model = model.half()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.fp16:
        optimizer = FP16_Optimizer(optimizer, static_loss_scale=args.static_loss_scale)

    data = toydata.make_data()
    for step in range(args.steps):
        x, y = toydata.batch(data, step)
        if args.fp16:
            x = x.half()
        optimizer.zero_grad()
        loss = F.mse_loss(model(x).float(), y)
        if args.fp16:
            optimizer.backward(loss)
            optimizer.clip_master_grads(args.clip)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        toydata.log(step, "loss", loss.item())

    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
