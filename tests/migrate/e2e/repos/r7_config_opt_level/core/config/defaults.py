"""Default configuration as dataclasses (no YAML): cfg.SOLVER.AMP_OPT_LEVEL and friends."""

import ast
import copy
from dataclasses import dataclass, field
from typing import Union


@dataclass
class ModelConfig:
    DEVICE: str = "cuda"


@dataclass
class SolverConfig:
    BASE_LR: float = 0.05
    MOMENTUM: float = 0.9
    MAX_ITER: int = 24
    AMP_ENABLED: bool = True
    AMP_OPT_LEVEL: str = "O1"
    LOSS_SCALE: Union[str, float] = "dynamic"


@dataclass
class Config:
    SEED: int = 0
    MODEL: ModelConfig = field(default_factory=ModelConfig)
    SOLVER: SolverConfig = field(default_factory=SolverConfig)

    def merge_from_list(self, opts):
        """Apply ``["SOLVER.AMP_OPT_LEVEL", "O0", ...]`` overrides."""
        for key, raw in zip(opts[0::2], opts[1::2]):
            node = self
            *parents, leaf = key.split(".")
            for name in parents:
                node = getattr(node, name)
            if not hasattr(node, leaf):
                raise KeyError(f"unknown config key {key}")
            try:
                value = ast.literal_eval(raw)
            except (ValueError, SyntaxError):
                value = raw
            setattr(node, leaf, value)


_C = Config()


def get_cfg():
    return copy.deepcopy(_C)
