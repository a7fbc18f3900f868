"""train_model: the distributed path sets apex up when the config asks for fp16 and builds
the runner with the batch processor and its own optimizer hook; the single-device path
(no fp16) builds one with the library's plain hook. Checkpoints: the runner's, plus apex's
state under fp16."""

import torch
import torch.nn.functional as F
from mmcv.runner import Runner

from selfsup.hooks import AccumulateStepHook
from selfsup.metric_hook import MetricHook

try:
    import apex
except ImportError:
    print("apex is not installed")

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def batch_processor(model, data, train_mode):
    """Runs one batch for the runner: the loss and what to log."""
    x, y = (t.to(DEVICE) for t in data)
    loss = F.mse_loss(model(x), y)
    return dict(loss=loss, log_loss=loss.item(), num_samples=len(x))


def train_model(model, cfg, batches, steps, distributed=True, resume="", ckpt_out=""):
    if distributed:
        return _dist_train(model, cfg, batches, steps, resume, ckpt_out)
    return _single_train(model, cfg, batches, steps, resume, ckpt_out)


def _dist_train(model, cfg, batches, steps, resume, ckpt_out):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    if cfg.get("use_fp16", False):
        model, optimizer = apex.amp.initialize(model.to(DEVICE), optimizer, opt_level="O1")
    runner = Runner(model, batch_processor, optimizer, ".")
    runner.register_training_hooks(AccumulateStepHook(**cfg["optimizer_config"]), [MetricHook()])
    if resume:
        checkpoint = runner.resume(resume)
        if "amp" in checkpoint:
            apex.amp.load_state_dict(checkpoint["amp"])
    runner.run(batches, steps)
    if ckpt_out:
        runner.save_checkpoint(ckpt_out, {"amp": apex.amp.state_dict()} if cfg.get("use_fp16", False) else {})
    return runner.model


def _single_train(model, cfg, batches, steps, resume, ckpt_out):
    if cfg.get("use_fp16", False):
        raise NotImplementedError("fp16 needs the distributed path")
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    runner = Runner(model, batch_processor, optimizer, ".")
    runner.register_training_hooks(dict(grad_clip=cfg["optimizer_config"].get("grad_clip")), [MetricHook()])
    if resume:
        runner.resume(resume)
    runner.run(batches, steps)
    if ckpt_out:
        runner.save_checkpoint(ckpt_out)
    return runner.model
