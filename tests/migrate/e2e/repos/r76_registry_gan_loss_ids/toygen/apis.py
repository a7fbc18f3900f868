"""The training API (no apex.amp here): optimizers per network, apex set up when the configuration
asks for it, and the runner told whether it was."""

import torch

from toygen.runners.apex_amp_utils import apex_amp_initialize
from toygen.runners.iter_runner import IterRunner


def build_optimizers(model, cfgs):
    return {name: torch.optim.Adam(getattr(model, name).parameters(), lr=cfg["lr"], betas=(0.5, 0.999))
            for name, cfg in cfgs.items()}


def train_model(model, cfg):
    optimizer = build_optimizers(model, cfg["optimizer"])

    _use_apex_amp = False
    if cfg.get("apex_amp", None):
        model, optimizer = apex_amp_initialize(model, optimizer, **cfg["apex_amp"])
        _use_apex_amp = True

    runner = IterRunner(model, optimizer, fp16_loss_scaler=cfg.get("fp16_loss_scaler"),
                        use_apex_amp=_use_apex_amp)
    if cfg.get("resume_from"):
        runner.resume(cfg["resume_from"])
    runner.run(cfg["total_iters"])
    if cfg.get("ckpt_out"):
        runner.save_checkpoint(cfg["ckpt_out"])
    return runner
