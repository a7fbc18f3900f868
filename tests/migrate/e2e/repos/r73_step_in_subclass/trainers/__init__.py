from .combined import CombinedTrainer
from .factorized import FactorizedTrainer
