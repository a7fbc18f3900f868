from toygen.models.gan import StaticGAN  # noqa: F401
from toygen.models.losses import GeneratorPathRegularizer, R1GradientPenalty  # noqa: F401
