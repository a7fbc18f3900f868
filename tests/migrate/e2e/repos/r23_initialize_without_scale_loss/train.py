"""Launcher: builds the model through models.load_model, trains it with a plain
``loss.backward()`` and a criterion applied to the model's outputs outside it, and keeps
checkpoints of the model and optimizer only (there is no loss-scaler state to keep)."""

import argparse

import torch

import toydata
from models import load_model


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def train(model, criterion, optimizer, data, device, start, steps):
    model.train()
    for idx in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        optimizer.zero_grad()
        outputs = model(x)
        loss = criterion(outputs, y)
        loss.backward()
        optimizer.step()
        toydata.log(idx, "loss", loss.item())


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model, optimizer = load_model(args, device)
    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start = checkpoint["step"]

    train(model, torch.nn.MSELoss(), optimizer, toydata.make_data(), device, start, args.steps)

    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
