"""The models of the layout: a base class that keeps the training state, the trainer deriving
from it, its training steps, and a feature model no script builds."""
