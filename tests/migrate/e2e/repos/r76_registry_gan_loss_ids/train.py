"""Launcher (no apex here): builds the configuration from the command line, the model by its
registered name, and hands both to the training API."""

import argparse

import torch

import toygen.models  # noqa: F401  (registers the model and the losses)
from toygen.apis import train_model
from toygen.registry import MODELS


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--opt-level", default="O1")
    parser.add_argument("--loss-scale", type=float, default=None)
    parser.add_argument("--no-amp", dest="amp", action="store_false")
    parser.add_argument("--fp16-scaler", action="store_true", help="the runner's own GradScaler instead of apex")
    parser.add_argument("--reg-no-scaler", action="store_true", help="regularizers ignore apex's loss scale")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(0)
    reg_scaled = args.amp and not args.reg_no_scaler
    init_args = dict(opt_level=args.opt_level, num_losses=2, verbosity=0)
    if args.loss_scale is not None:
        init_args["loss_scale"] = args.loss_scale
    cfg = dict(
        model=dict(
            type="StaticGAN",
            disc_auxiliary_loss=dict(type="R1GradientPenalty", loss_weight=0.5, use_apex_amp=reg_scaled),
            gen_auxiliary_loss=dict(type="GeneratorPathRegularizer", loss_weight=0.1, use_apex_amp=reg_scaled)),
        optimizer=dict(generator=dict(lr=0.01), discriminator=dict(lr=0.01)),
        apex_amp=dict(mode="gan", init_args=init_args) if args.amp else None,
        fp16_loss_scaler=dict(init_scale=1024.0) if args.fp16_scaler else None,
        total_iters=args.steps,
        resume_from=args.resume or None,
        ckpt_out=args.ckpt_out or None,
    )
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = MODELS.build(cfg["model"]).to(device)
    train_model(model, cfg)
    if args.params_out:
        torch.save({k: v.detach().float().cpu() for k, v in model.state_dict().items()}, args.params_out)


if __name__ == "__main__":
    main()
