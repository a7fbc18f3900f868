"""Fine-tunes through a setup helper: it picks a static or a dynamic loss scale (amp.initialize
on either branch of one if/else) and hands the model, optimizer and scheduler back to main,
which scales the loss and checkpoints amp's state."""

import argparse
import os

import torch
import torch.nn.functional as F
from apex import amp

import toydata


def setup(args, device):
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.static_loss_scale:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale=128.0)
    else:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, loss_scale="dynamic")
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=8, gamma=0.5)
    return model, optimizer, scheduler


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--static-loss-scale", action="store_true")
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, optimizer, scheduler = setup(args, device)

    start_step = 0
    if args.resume and os.path.isfile(args.resume):
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        scheduler.load_state_dict(checkpoint["scheduler"])
        amp.load_state_dict(checkpoint["amp"])
        start_step = checkpoint["step"]

    data = toydata.make_data()
    model.train()
    for step in range(start_step, start_step + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        with amp.scale_loss(loss, optimizer) as scaled_loss:
            scaled_loss.backward()
        optimizer.step()
        scheduler.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        torch.save({
            "step": start_step + args.steps,
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "amp": amp.state_dict(),
        }, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
