"""The default runner: it sets apex up for its model and optimizer when the config asks for
apex mixed precision, and registers the optimization hook."""

from . import hooks
from .base_runner import SimpleRunner


class DefaultRunner(SimpleRunner):
    def __init__(self, cfg, model, data, optimizer, device):
        self.model = model
        self.optimizer = optimizer
        if cfg.FP16_ENABLED:
            self.mixed_precision = True
            if cfg.FP16_TYPE == "APEX":
                from apex import amp
                self.model, self.optimizer = amp.initialize(self.model, self.optimizer, opt_level=cfg.OPT_LEVEL)
        else:
            self.mixed_precision = False
        super().__init__(self.model, data, self.optimizer, device)
        self.register_hooks([
            hooks.OptimizationHook(grad_clipper=hooks.clip_at_one, mixed_precision=cfg.FP16_ENABLED),
        ])
