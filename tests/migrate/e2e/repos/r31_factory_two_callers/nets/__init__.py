"""The networks of a toy two-scale GAN and the factory that builds them for training."""
