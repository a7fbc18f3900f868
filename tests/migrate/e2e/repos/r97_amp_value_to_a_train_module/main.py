"""stereo-transformer's shape: apex.amp (or None) handed to the training function of another
module, which scales the loss through that parameter; the checkpoint keeps amp's state."""

import argparse

import torch

import toydata
from engine.train import train_one_epoch


def save_checkpoint(path, model, optimizer, step, amp=None):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    if amp is not None:
        checkpoint["amp"] = amp.state_dict()
    torch.save(checkpoint, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--apex", action="store_true", help="mixed precision through apex.amp")
    parser.add_argument("--clip-max-norm", type=float, default=5.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

    # mixed precision training
    if args.apex:
        from apex import amp
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
    else:
        amp = None

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        start = checkpoint["step"]
        if args.apex:
            amp.load_state_dict(checkpoint["amp"])

    data = toydata.make_data()
    train_one_epoch(model, data, optimizer, device, start, args.steps, args.clip_max_norm, amp)

    if args.ckpt_out:
        save_checkpoint(args.ckpt_out, model, optimizer, start + args.steps, amp)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
