"""Stand-in for mmcv.runner: registries, hooks, an iteration runner, checkpoints, auto_fp16."""

from .fp16 import auto_fp16
from .hooks import HOOKS, Hook, OptimizerHook
from .iter_runner import RUNNERS, IterBasedRunner, build_runner

__all__ = ["HOOKS", "RUNNERS", "Hook", "IterBasedRunner", "OptimizerHook", "auto_fp16", "build_runner"]
