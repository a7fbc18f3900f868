from .base_runner import SimpleRunner
from .runner import DefaultRunner
