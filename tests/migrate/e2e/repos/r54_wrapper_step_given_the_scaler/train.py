"""A TTS-trainer shape (glow-tts): the optimizer wrapper of warmup.py is built in main(), apex
initializes the torch optimizer it holds under the fp16 flag, and train_steps(), handed the
wrapper, scales the loss for that held optimizer, clips amp.master_params of it and steps the
wrapper.  One step's loss is blown up (--spike) so that apex's dynamic scaler overflows there
and skips that inner step while the wrapper still counts the call."""

import argparse

import torch
import torch.nn as nn
from apex import amp

import toydata
import warmup


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--warmup", type=int, default=12)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--max-norm", type=float, default=5.0)
    parser.add_argument("--spike", type=int, default=3)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def train_steps(model, optimizer, data, start, steps, fp16, max_norm, spike, device):
    for step in range(start, start + steps):
        optimizer.zero_grad()
        x, y = toydata.batch(data, step)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        blown = loss * 1e6 if step == spike else loss
        if fp16:
            with amp.scale_loss(blown, optimizer.inner) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer.inner), max_norm)
        else:
            blown.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm)
        optimizer.step()
        toydata.log(step, "loss", loss.item())


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = warmup.WarmupSGD(model.parameters(), lr=args.lr, warmup=args.warmup)
    if args.fp16:
        model, optimizer.inner = amp.initialize(model, optimizer.inner, opt_level=args.opt_level, verbosity=0)
    start = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if args.fp16:
            amp.load_state_dict(state["amp"])
        start = state["step"]
    data = toydata.make_data()
    train_steps(model, optimizer, data, start, args.steps, args.fp16, args.max_norm, args.spike, device)
    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if args.fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
