"""Launcher in the shape of detection repositories that offer apex and native mixed precision
side by side: --amp-impl apex (the default) initializes apex.amp (O1, O0 with --fp32), native
uses torch's autocast and a GradScaler of its own; the loss comes from an if/else of the two
forward passes, the backward and step from an if/else of the two scalers, and checkpoints carry
the state of whichever scaler ran."""

import argparse

import torch

import toydata

try:
    from apex import amp
except ImportError:
    amp = None


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--amp-impl", default="apex", choices=["apex", "native"])
    parser.add_argument("--fp32", action="store_true")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    with_apex = args.amp_impl == "apex"
    mixed_precision = not args.fp32
    if with_apex:
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1" if mixed_precision else "O0",
                                          verbosity=0)
    scaler = torch.amp.GradScaler(device, enabled=mixed_precision and not with_apex)

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if with_apex and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        elif "scaler" in checkpoint:
            scaler.load_state_dict(checkpoint["scaler"])
        start = checkpoint["step"]

    data = toydata.make_data()
    for idx in range(start, start + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        optimizer.zero_grad()
        if with_apex:
            loss = torch.nn.functional.mse_loss(model(x), y)
        else:
            with torch.autocast(device, dtype=torch.float16, enabled=mixed_precision):
                loss = torch.nn.functional.mse_loss(model(x), y)
        del x
        if with_apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            optimizer.step()
        else:
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
        toydata.log(idx, "loss", loss.item())

    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if with_apex:
            state["amp"] = amp.state_dict()
        else:
            state["scaler"] = scaler.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
