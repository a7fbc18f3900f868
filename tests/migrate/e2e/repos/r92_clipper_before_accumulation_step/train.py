"""A fine-tuning script in the shape of NVIDIA's BERT run_squad.py: a clipper class of its own
(the global L2 norm of the gradients, a scale by max_norm / (norm + 1e-6) when that is below
1, nothing on an overflow) called on amp.master_params(optimizer) after every backward, right
before the if that steps at the accumulation boundary; the count defaults to 1, the loss is
divided by it."""

import argparse

import torch
import torch.nn as nn
from apex import amp

import toydata


class GradientClipper:
    """Clips the gradient norm of an iterable of parameters."""

    def __init__(self, max_grad_norm):
        self.max_norm = max_grad_norm

    def step(self, parameters):
        grads = [p.grad for p in parameters if p.grad is not None]
        total_norm = torch.norm(torch.stack([g.float().norm() for g in grads])).item()
        if total_norm == float("inf"):
            return
        clip_coef = self.max_norm / (total_norm + 1e-6)
        if clip_coef < 1:
            for g in grads:
                g.mul_(clip_coef)


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.2)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--max-norm", type=float, default=0.35)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr)
    if args.fp16:
        model, optimizer = amp.initialize(model, optimizer, opt_level=args.opt_level, verbosity=0)
    start = 0
    if args.resume:
        state = torch.load(args.resume, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        if args.fp16:
            amp.load_state_dict(state["amp"])
        start = state["step"]
    gradClipper = GradientClipper(max_grad_norm=args.max_norm)
    data = toydata.make_data()
    global_step = 0
    for step in range(start, start + args.steps):
        x, y = toydata.batch(data, step)
        loss = nn.functional.mse_loss(model(x.to(device)), y.to(device))
        if args.gradient_accumulation_steps > 1:
            loss = loss / args.gradient_accumulation_steps
        if args.fp16:
            with amp.scale_loss(loss, optimizer) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

        # gradient clipping
        gradClipper.step(amp.master_params(optimizer))

        if (step + 1) % args.gradient_accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
            global_step += 1
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
