from .gan import GAN

__all__ = ["GAN"]
