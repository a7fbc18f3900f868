"""Launcher in the shape of fine-tuning scripts of the pytorch-transformers era: apex is imported
behind an ImportError guard where it is needed (in main before initialize, and again in the step
loop right before the loss is scaled); each batch is run through the model in two chunks by a
helper of another module that is handed the model, the loss is computed from what the chunks
collected, and checkpoints carry amp's loss-scaler
state; --fp32 never touches apex."""

import argparse

import torch

import steps
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


def run_steps(args, model, optimizer, data, device, start):
    model.train()
    for idx in range(start, start + args.steps):
        x, y = (t.to(device) for t in toydata.batch(data, idx))
        optimizer.zero_grad()
        preds = []
        for part in x.chunk(2):
            out = steps.forward_chunk(model, part)
            preds.append(out["pred"])
        pred = torch.cat(preds)
        loss = torch.nn.functional.mse_loss(pred, y)
        toydata.log(idx, "loss", loss.item())
        if not args.fp32:
            try:
                from apex import amp
            except ImportError:
                raise ImportError("mixed precision needs apex; pass --fp32 to train without it")  # noqa: B904
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
            torch.nn.utils.clip_grad_norm_(amp.master_params(optimizer), 1.0)
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if not args.fp32:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("mixed precision needs apex; pass --fp32 to train without it")  # noqa: B904
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if not args.fp32 and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    run_steps(args, model, optimizer, data, device, start)

    if args.ckpt_out:
        state = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": start + args.steps}
        if not args.fp32:
            state["amp"] = amp.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main(parse_args())
