"""unilm s2s-ft's shape: train() binds apex.amp or None and hands it to prepare(), which
creates the optimizer, loads the checkpoint and, under ``if amp:``, initializes apex and loads
its state; train() scales, clips through amp.master_params and keeps amp's state."""

import argparse

import torch
import torch.nn.functional as F

import toydata


def prepare(args, model, state, amp):
    model.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    if state:
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
    if amp:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level)
        if state:
            amp.load_state_dict(state["amp"])
    return model, optimizer


def train(args, model, data):
    if args.apex:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("Please install apex to use fp16 training.")
    else:
        amp = None

    state = torch.load(args.resume, map_location=args.device) if args.resume else None
    model, optimizer = prepare(args, model, state, amp=amp)
    start = state["step"] if state else 0

    for step in range(start, start + args.steps):
        x, y = (t.to(args.device) for t in toydata.batch(data, step))
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        if args.apex:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()
        if args.apex:
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), args.max_grad_norm)
        else:
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.max_grad_norm)
        optimizer.step()
        toydata.log(step, "loss", loss.item())

    if args.ckpt_out:
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if args.apex:
            checkpoint["amp"] = amp.state_dict()
        torch.save(checkpoint, args.ckpt_out)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--apex", action="store_true", help="mixed precision through apex.amp")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--max-grad-norm", type=float, default=5.0)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    args.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp()
    data = toydata.make_data()
    model = train(args, model, data)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
