"""train_model: apex set up when the optimizer hook config asks for fp16, then the runner is
built by calling its class (Video-Swin-Transformer's shape): the amp runner on the fp16
branch, the library's own on the other, both through a local alias."""

import os

import torch
from mmcv.runner import IterBasedRunner

import toydata
from custom_runner import IterBasedRunnerAmp
from toydet.metric_hook import MetricHook

try:
    import apex
except ImportError:
    print("apex is not installed")


def train_model(model, cfg, device, steps, resume="", ckpt_out=""):
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=0.9)
    use_amp = False
    if cfg["optimizer_config"].get("type") == "AmpOptimizerHook":
        if cfg["optimizer_config"].get("use_fp16", False):
            model, optimizer = apex.amp.initialize(model.to(device), optimizer, opt_level="O1")
            for m in model.modules():
                if hasattr(m, "fp16_enabled"):
                    m.fp16_enabled = True
            use_amp = True

    if use_amp:
        Runner = IterBasedRunnerAmp
        runner = Runner(model, optimizer=optimizer, work_dir=".")
    else:
        Runner = IterBasedRunner
        runner = Runner(model, optimizer=optimizer, work_dir=".")
    runner.register_training_hooks(cfg["optimizer_config"], [MetricHook()])
    if resume:
        runner.resume(resume)
    data = toydata.make_data()
    runner.run(lambda step: tuple(t.to(device) for t in toydata.batch(data, step)), steps)
    if ckpt_out:
        runner.save_checkpoint(os.path.dirname(ckpt_out) or ".", filename_tmpl=os.path.basename(ckpt_out))
    return runner.model
