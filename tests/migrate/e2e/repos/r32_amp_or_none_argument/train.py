"""Launcher in the shape of speech-synthesis recipes: apex.amp is imported and initialized only
when an opt level is configured (--fp32 leaves it None), and that value, apex.amp or None, is
handed to the epoch function of this file, which scales, clips through amp.master_params and
returns the loss-scaler state through its parameter; checkpoints carry that state when set."""

import argparse

import torch

import toydata


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--fp32", action="store_true")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def run_steps(model, optimizer, data, device, start, steps, amp, grad_clip=1.0):
    model.train()
    for idx in range(start, start + steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        if amp is not None:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if amp:
            clipped = amp.master_params(optimizer)
        else:
            clipped = model.parameters()
        torch.nn.utils.clip_grad_norm_(clipped, grad_clip)
        optimizer.step()
        toydata.log(idx, "loss", loss.item())
    return amp.state_dict() if amp else None


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if not args.fp32:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    else:
        amp = None

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if amp and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    amp_state = run_steps(model, optimizer, data, device, start, args.steps, amp)

    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if amp_state:
            state["amp"] = amp_state
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
