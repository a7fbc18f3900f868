"""r49's script with its opt level written in the script: O1, or O0 under --fp32 (apex set up
but off).  The gradients are clipped INSIDE the amp.scale_loss block (on this backward's scaled
gradients under O1, at max_norm), the step at the accumulation boundary, whose count defaults
to 1."""

import argparse

import torch
import torch.nn as nn

import toydata


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--fp32", action="store_true")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--gradient-accumulation", type=int, default=1)
    parser.add_argument("--max-norm", type=float, default=20000.0)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    gradient_accumulation = args.gradient_accumulation
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.fp16:
        from apex import amp

        model, optimizer = amp.initialize(model, optimizer, opt_level="O0" if args.fp32 else "O1", verbosity=0)
    start = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if args.fp16:
            amp.load_state_dict(state["amp"])
        start = state["step"]
    data = toydata.make_data()
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        if gradient_accumulation > 1:
            loss = loss / gradient_accumulation
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
                torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_norm)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_norm)
        if (step + 1) % gradient_accumulation == 0:
            optimizer.step()
            optimizer.zero_grad()
        toydata.log(step, "loss", loss.item())
    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if args.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        torch.save({k: v.detach().float().cpu() for k, v in model.state_dict().items()}, args.params_out)


if __name__ == "__main__":
    main()
