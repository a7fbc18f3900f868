"""A toy image-translation library in the shape of trainer frameworks that pick their trainer
class from the configuration at run time."""
