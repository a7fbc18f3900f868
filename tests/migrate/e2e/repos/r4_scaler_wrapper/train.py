"""Launcher with a choice of mixed-precision backend: --amp-impl apex (default) or native."""

import argparse
import contextlib
import functools

import torch
import torch.nn.functional as F

import toydata
from utils.scalers import ApexScaler, NativeScaler

try:
    from apex import amp
    has_apex = True
except ImportError:
    has_apex = False


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--amp", action="store_true", help="mixed precision training")
    parser.add_argument("--amp-impl", default="apex", choices=["apex", "native"])
    parser.add_argument("--clip-grad", type=float, default=None)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    amp_autocast = contextlib.nullcontext
    loss_scaler = None
    if args.amp and args.amp_impl == "apex":
        assert has_apex, "--amp-impl apex needs NVIDIA apex"
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        loss_scaler = ApexScaler()
    elif args.amp:
        amp_autocast = functools.partial(torch.autocast, device_type=device.type, dtype=torch.float16)
        loss_scaler = NativeScaler(device.type)

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["state_dict"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if loss_scaler is not None and loss_scaler.state_dict_key in checkpoint:
            loss_scaler.load_state_dict(checkpoint[loss_scaler.state_dict_key])
        start = checkpoint["step"]

    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, step))
        with amp_autocast():
            loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        if loss_scaler is not None:
            loss_scaler(loss, optimizer, clip_grad=args.clip_grad, parameters=model.parameters())
        else:
            loss.backward()
            if args.clip_grad is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            optimizer.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        checkpoint = {"state_dict": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if loss_scaler is not None:
            checkpoint[loss_scaler.state_dict_key] = loss_scaler.state_dict()
        torch.save(checkpoint, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
