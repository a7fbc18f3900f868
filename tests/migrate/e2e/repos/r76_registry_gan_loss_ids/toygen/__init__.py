"""A small GAN toolbox of mmgeneration's shape: models built by name from a registry, trained by an
iteration runner that an apex-free training API sets up."""
