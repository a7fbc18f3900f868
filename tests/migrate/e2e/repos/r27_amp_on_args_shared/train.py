"""Main training script of a family of task scripts: with --fp16 (the default) apex's
initialize runs in main() and apex.amp is kept on the options object (``cfg.amp``).
``fit_batch`` below scales the loss through that attribute and clips the gradients; the
sibling script tune.py imports it and hands it its own options object, which it also gives
apex.amp.  Checkpoints keep amp's loss-scaler state read through ``cfg.amp``."""

import argparse

import torch

import toydata
from nets import build


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=24)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--max-norm", type=float, default=0.5)
    parser.add_argument("--no-fp16", dest="fp16", action="store_false")
    parser.add_argument("--fp16-opt-level", default="O1")
    parser.add_argument("--resume", default="")
    parser.add_argument("--ckpt-out", default="")
    parser.add_argument("--params-out", default="")
    return parser.parse_args(argv)


def fit_batch(cfg, net, opt, x, y):
    """One optimizer step on a batch; shared with tune.py."""
    opt.zero_grad()
    x, y = x.to(cfg.device), y.to(cfg.device)
    loss = torch.nn.functional.mse_loss(net(x), y)
    if cfg.fp16:
        with cfg.amp.scale_loss(loss, opt) as scaled:
            scaled.backward()
    else:
        loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_norm)
    opt.step()
    return loss


def main(cfg):
    torch.manual_seed(0)
    cfg.device = "cuda" if torch.cuda.is_available() else "cpu"
    net, opt = build(cfg, cfg.device)
    if cfg.fp16:
        try:
            from apex import amp
        except ImportError:
            raise ImportError("--fp16 needs apex (https://github.com/NVIDIA/apex)") from None
        net, opt = amp.initialize(net, opt, opt_level=cfg.fp16_opt_level, verbosity=0)
        cfg.amp = amp

    start = 0
    if cfg.resume:
        saved = torch.load(cfg.resume, map_location="cpu")
        net.load_state_dict(saved["model"])
        opt.load_state_dict(saved["optimizer"])
        if cfg.fp16:
            cfg.amp.load_state_dict(saved["amp"])
        start = saved["step"]

    data = toydata.make_data()
    net.train()
    for idx in range(start, start + cfg.steps):
        x, y = toydata.batch(data, idx)
        loss = fit_batch(cfg, net, opt, x, y)
        toydata.log(idx, "loss", loss.item())

    if cfg.ckpt_out:
        state = {"model": net.state_dict(), "optimizer": opt.state_dict(), "step": start + cfg.steps}
        if cfg.fp16:
            state["amp"] = cfg.amp.state_dict()
        torch.save(state, cfg.ckpt_out)
    if cfg.params_out:
        toydata.save_params(net, cfg.params_out)


if __name__ == "__main__":
    main(parse_args())
