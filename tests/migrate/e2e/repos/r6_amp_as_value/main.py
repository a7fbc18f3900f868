"""amp.initialize and scale_loss here; apex.amp handed to the checkpoint helpers as a value."""

import argparse

import torch
import torch.nn.functional as F
from apex import amp

import toydata
from lib.checkpointing import restore, snapshot


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
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)

    start_step = 0
    if args.resume:
        start_step = restore(args.resume, model, optimizer, amp=amp)

    data = toydata.make_data()
    for step in range(start_step, start_step + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        snapshot(args.ckpt_out, model, optimizer, start_step + args.steps, amp=amp)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
