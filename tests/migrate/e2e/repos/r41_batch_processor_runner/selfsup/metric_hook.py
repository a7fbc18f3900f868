"""Logs the loss the runner holds after each iteration (no apex here)."""

import toydata
from mmcv.runner import Hook


class MetricHook(Hook):
    def after_train_iter(self, runner):
        toydata.log(runner.iter, "loss", runner.outputs["log_loss"])
