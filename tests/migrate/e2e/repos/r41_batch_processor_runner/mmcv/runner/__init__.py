"""Stand-in for old mmcv.runner: ``Runner(model, batch_processor, optimizer)`` runs each batch
through the batch processor, keeps what it returns as ``runner.outputs`` and calls every
registered hook with itself; the plain ``OptimizerHook``; checkpoints without amp state."""

import torch


class Hook:
    def before_run(self, runner):
        pass

    def after_train_iter(self, runner):
        pass

    def every_n_iters(self, runner, n):
        return (runner.iter + 1) % n == 0 if n > 0 else False


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


class Runner:
    def __init__(self, model, batch_processor, optimizer=None, work_dir=None, logger=None, meta=None):
        if not callable(batch_processor):
            raise TypeError("batch_processor must be callable")
        self.model = model
        self.batch_processor = batch_processor
        self.optimizer = optimizer
        self.work_dir = work_dir
        self.outputs = {}
        self.hooks = []
        self._iter = 0

    @property
    def iter(self):
        return self._iter

    def register_hook(self, hook):
        self.hooks.append(hook)

    def register_training_hooks(self, optimizer_config, extra_hooks=()):
        """``optimizer_config``: a hook, or the keyword arguments of the plain OptimizerHook."""
        self.register_hook(optimizer_config if isinstance(optimizer_config, Hook) else OptimizerHook(**optimizer_config))
        for hook in extra_hooks:
            self.register_hook(hook)

    def call_hook(self, stage):
        for hook in self.hooks:
            getattr(hook, stage)(self)

    def run(self, batch_of_step, iters, **kwargs):
        self.model.train()
        self.call_hook("before_run")
        for _ in range(iters):
            batch = batch_of_step(self._iter)
            self.outputs = self.batch_processor(self.model, batch, train_mode=True, **kwargs)
            self.call_hook("after_train_iter")
            self._iter += 1

    def save_checkpoint(self, path, extra=None):
        checkpoint = {"iter": self._iter, "state_dict": self.model.state_dict(),
                      "optimizer": self.optimizer.state_dict()}
        checkpoint.update(extra or {})
        torch.save(checkpoint, path)

    def resume(self, path):
        checkpoint = torch.load(path, map_location="cpu")
        self.model.load_state_dict(checkpoint["state_dict"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])
        self._iter = checkpoint["iter"]
        return checkpoint
