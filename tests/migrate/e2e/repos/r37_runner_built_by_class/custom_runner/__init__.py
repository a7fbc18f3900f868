from .checkpoint import save_checkpoint
from .iter_based_runner import IterBasedRunnerAmp

__all__ = ["IterBasedRunnerAmp", "save_checkpoint"]
