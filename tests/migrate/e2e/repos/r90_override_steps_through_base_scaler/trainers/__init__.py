from .half import HalfTrainer
from .ring import RingTrainer
