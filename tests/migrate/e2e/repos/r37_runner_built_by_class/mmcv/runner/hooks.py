"""Hooks: the runner calls each stage's method on every registered hook with itself."""

import torch

from .registry import Registry

HOOKS = Registry("hook")


class Hook:
    def before_run(self, runner):
        pass

    def after_run(self, runner):
        pass

    def before_train_iter(self, runner):
        pass

    def after_train_iter(self, runner):
        pass

    def every_n_iters(self, runner, n):
        return (runner.iter + 1) % n == 0 if n > 0 else False


@HOOKS.register_module()
class OptimizerHook(Hook):
    """The library's plain fp32 step."""

    def __init__(self, grad_clip=None):
        self.grad_clip = grad_clip

    def clip_grads(self, params):
        params = [p for p in params if p.requires_grad and p.grad is not None]
        return torch.nn.utils.clip_grad_norm_(params, **self.grad_clip)

    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        runner.outputs["loss"].backward()
        if self.grad_clip is not None:
            self.clip_grads(runner.model.parameters())
        runner.optimizer.step()
