"""An iteration-based runner built from a config by ``build_runner``: it keeps the model, the
optimizer and the outputs of the last ``model.train_step``, and calls the hooks with itself."""

import os

import torch

from .hooks import HOOKS, Hook
from .registry import Registry

RUNNERS = Registry("runner")


@RUNNERS.register_module()
class IterBasedRunner:
    def __init__(self, model, optimizer, work_dir=".", max_iters=0):
        self.model = model
        self.optimizer = optimizer
        self.work_dir = work_dir
        self.max_iters = max_iters
        self.outputs = {}
        self.hooks = []
        self._iter = 0

    @property
    def iter(self):
        return self._iter

    def register_hook(self, hook):
        self.hooks.append(hook)

    def register_training_hooks(self, optimizer_config, extra_hooks=()):
        """``optimizer_config``: a hook, or a config dict naming a registered hook class."""
        hook = optimizer_config if isinstance(optimizer_config, Hook) else HOOKS.build(optimizer_config)
        self.register_hook(hook)
        for extra in extra_hooks:
            self.register_hook(extra)

    def call_hook(self, stage):
        for hook in self.hooks:
            getattr(hook, stage)(self)

    def run(self, batch_of_step, iters):
        self.call_hook("before_run")
        for _ in range(iters):
            batch = batch_of_step(self._iter)
            self.call_hook("before_train_iter")
            self.outputs = self.model.train_step(batch, self.optimizer)
            self.call_hook("after_train_iter")
            self._iter += 1
        self.call_hook("after_run")

    def save_checkpoint(self, out_dir, filename_tmpl="iter_{}.pth"):
        path = os.path.join(out_dir, filename_tmpl.format(self._iter))
        torch.save({"meta": {"iter": self._iter}, "state_dict": self.model.state_dict(),
                    "optimizer": self.optimizer.state_dict()}, path)

    def load_checkpoint(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.model.load_state_dict(checkpoint["state_dict"])
        return checkpoint

    def resume(self, path):
        checkpoint = self.load_checkpoint(path)
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self._iter = checkpoint["meta"]["iter"]


def build_runner(cfg, default_args=None):
    return RUNNERS.build(cfg, default_args)
