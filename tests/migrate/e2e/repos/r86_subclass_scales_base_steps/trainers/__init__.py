from .base import Trainer
from .meta import MetaTrainer
