"""Launcher: builds one of the two trainers (their base class sets up mixed precision and
scales each loss under its own loss id), resumes from a checkpoint if asked, trains, saves."""

import argparse

import torch

import toydata
from trainers import CombinedTrainer, FactorizedTrainer


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--kind", default="combined", choices=["combined", "factorized"])
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main(args):
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    gen = toydata.make_mlp().to(device)
    disc = torch.nn.Sequential(torch.nn.Linear(toydata.D_OUT, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)).to(device)
    aux = torch.nn.Linear(toydata.D_OUT, toydata.D_OUT).to(device)
    g_optim = torch.optim.SGD(gen.parameters(), lr=0.05, momentum=0.9)
    d_optim = torch.optim.Adam(disc.parameters(), lr=1e-3)
    ac_optim = torch.optim.SGD(aux.parameters(), lr=0.05)
    kind = CombinedTrainer if args.kind == "combined" else FactorizedTrainer
    trainer = kind(gen, disc, aux, g_optim, d_optim, ac_optim, args, device)
    start = trainer.load(args.resume) if args.resume else 0
    trainer.train(toydata.make_data(), start, args.steps)
    if args.ckpt_out:
        trainer.save(args.ckpt_out, start + args.steps)
    if args.params_out:
        params = {f"gen.{k}": v for k, v in trainer.gen.state_dict().items()}
        params.update({f"disc.{k}": v for k, v in trainer.disc.state_dict().items()})
        params.update({f"aux.{k}": v for k, v in trainer.aux.state_dict().items()})
        torch.save({k: v.detach().float().cpu() for k, v in params.items()}, args.params_out)


if __name__ == "__main__":
    main(parse_args())
