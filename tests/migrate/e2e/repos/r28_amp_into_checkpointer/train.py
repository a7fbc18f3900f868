"""Launcher in the shape of self-supervised training scripts: ``import apex`` and every amp
call spelled ``apex.amp.x``; the resume helper of tools/ is handed ``apex.amp`` itself as one
of the keyword objects it restores, and the checkpoint written here keeps amp's state."""

import argparse

import apex
import torch
import torch.nn.functional as F

import toydata
from tools.checkpoint import restart_from_checkpoint


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
    model, optimizer = apex.amp.initialize(model, optimizer, opt_level=args.opt_level)

    progress = {"step": 0}
    restart_from_checkpoint(args.resume, run_variables=progress, model=model, optimizer=optimizer, amp=apex.amp)
    first = progress["step"]

    data = toydata.make_data()
    for step in range(first, first + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with apex.amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        saved = {"step": first + args.steps, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        saved["amp"] = apex.amp.state_dict()
        torch.save(saved, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
