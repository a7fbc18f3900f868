"""Launcher (sockeye's shape): --apex-amp 1 (the default) sets apex up here and trains through it,
--apex-amp 0 --amp 1 through the trainer's own GradScaler, --apex-amp 0 in plain fp32.  The
trainer is handed the two flags, not apex."""

import argparse

import torch

import toydata
from nmt.training import Trainer


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--apex-amp", type=int, default=1)
    parser.add_argument("--amp", type=int, default=0)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    if args.apex_amp:
        try:
            import apex.amp
        except ImportError:
            raise SystemExit("--apex-amp needs NVIDIA apex")
        model, optimizer = apex.amp.initialize(model, optimizer, opt_level=args.opt_level)
    trainer = Trainer(model, optimizer, device, args.max_norm, using_amp=bool(args.amp),
                      using_apex_amp=bool(args.apex_amp))
    first = trainer.load(args.resume) if args.resume else 0
    trainer.fit(toydata.make_data(), first, args.steps)
    if args.ckpt_out:
        trainer.save(args.ckpt_out, first + args.steps)
    if args.params_out:
        toydata.save_params(trainer.model, args.params_out)


if __name__ == "__main__":
    main()
