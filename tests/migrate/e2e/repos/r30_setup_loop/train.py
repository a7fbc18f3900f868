"""Launcher in the shape of multi-objective fitting libraries: several models, each with its own
optimizer, are initialized for mixed precision one by one in a loop that only stores the
results, under the fp16 switch (--fp32 turns it off; apex optional); engine.py trains each model
in turn on every batch; checkpoints carry amp's loss-scaler state."""

import argparse

import torch

import toydata
from engine import fit

try:
    from apex import amp
except ImportError:
    amp = None

MODELS = 2


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--fp32", action="store_true")
    parser.add_argument("--max-error", type=float, default=0.0)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    models = [toydata.make_mlp().to(device) for _ in range(MODELS)]
    optimizers = [torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9) for model in models]
    fp16 = amp is not None and not args.fp32
    if fp16:
        for k in range(len(models)):
            model, optimizer = amp.initialize(models[k], optimizers[k], opt_level=args.opt_level, verbosity=0)
            models[k] = model
            optimizers[k] = optimizer

    start = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location="cpu")
        for k in range(len(models)):
            models[k].load_state_dict(checkpoint["models"][k])
            optimizers[k].load_state_dict(checkpoint["optimizers"][k])
        if fp16 and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        start = checkpoint["step"]

    data = toydata.make_data()
    fit(models, optimizers, data, device, start, args.steps, fp16, args.max_error)

    if args.ckpt_out:
        state = {
            "models": [model.state_dict() for model in models],
            "optimizers": [optimizer.state_dict() for optimizer in optimizers],
            "step": start + args.steps,
        }
        if fp16:
            state["amp"] = amp.state_dict()
        torch.save(state, args.ckpt_out)
    if args.params_out:
        toydata.save_params(torch.nn.ModuleList(models), args.params_out)


if __name__ == "__main__":
    main(parse_args())
