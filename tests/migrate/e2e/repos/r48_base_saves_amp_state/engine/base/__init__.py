from .base_trainer import *
