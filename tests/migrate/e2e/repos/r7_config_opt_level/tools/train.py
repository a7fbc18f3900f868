"""Config-driven launcher: the amp opt level and loss scale come from cfg.SOLVER."""

import argparse

import torch
from apex import amp

import toydata
from core.config import get_cfg
from core.engine.loop import train_loop


def setup(args):
    cfg = get_cfg()
    cfg.merge_from_list(args.opts)
    cfg.SOLVER.MAX_ITER = args.steps
    return cfg


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    parser.add_argument("opts", nargs=argparse.REMAINDER, help="KEY VALUE pairs overriding the config")
    args = parser.parse_args()
    cfg = setup(args)

    torch.manual_seed(cfg.SEED)
    device = torch.device(cfg.MODEL.DEVICE if torch.cuda.is_available() else "cpu")
    model = toydata.make_mlp().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.SOLVER.BASE_LR, momentum=cfg.SOLVER.MOMENTUM)
    if cfg.SOLVER.AMP_ENABLED:
        model, optimizer = amp.initialize(model, optimizer, opt_level=cfg.SOLVER.AMP_OPT_LEVEL,
                                          loss_scale=cfg.SOLVER.LOSS_SCALE)

    start_iter = 0
    if args.resume:
        checkpoint = torch.load(args.resume, map_location=device)
        model.load_state_dict(checkpoint["model"])
        optimizer.load_state_dict(checkpoint["optimizer"])
        if cfg.SOLVER.AMP_ENABLED and "amp" in checkpoint:
            amp.load_state_dict(checkpoint["amp"])
        start_iter = checkpoint["iteration"]

    train_loop(cfg, model, optimizer, toydata.make_data(), device, start_iter)

    if args.ckpt_out:
        checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                      "iteration": start_iter + cfg.SOLVER.MAX_ITER}
        if cfg.SOLVER.AMP_ENABLED:
            checkpoint["amp"] = amp.state_dict()
        torch.save(checkpoint, args.ckpt_out)
    if args.params_out:
        toydata.save_params(model, args.params_out)


if __name__ == "__main__":
    main()
