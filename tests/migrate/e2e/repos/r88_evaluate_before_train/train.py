"""Launcher: a fresh trainer evaluates the model without training it, then the trainer that
trains evaluates before and after (as BERT-for-RRC-ABSA's script evaluates with a trainer of its
own); the evaluations go into the saved parameters, compared with the original's."""

import argparse

import torch

import toydata
from trainers import Trainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = toydata.make_mlp().to(device)
    data = toydata.make_data()
    evals = {"untrained": Trainer(model, args, device).evaluate(data)}
    trainer = Trainer(model, args, device)
    evals["before"] = trainer.evaluate(data)
    trainer.train(data, args.steps)
    evals["after"] = trainer.evaluate(data)
    for when, (loss, half) in evals.items():
        print(f"eval {when} loss {float(loss):.9g} half {half}", flush=True)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)
        params = torch.load(args.params_out)
        for when, (loss, half) in evals.items():
            # a float16 evaluation shows as a whole unit, far past any tolerance
            params[f"eval.{when}"] = torch.tensor([float(loss), float(half)])
        torch.save(params, args.params_out)


if __name__ == "__main__":
    main(parse_args())
