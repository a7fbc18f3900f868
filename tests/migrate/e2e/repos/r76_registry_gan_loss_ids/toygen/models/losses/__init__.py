from toygen.models.losses.disc_auxiliary_loss import R1GradientPenalty  # noqa: F401
from toygen.models.losses.gen_auxiliary_loss import GeneratorPathRegularizer  # noqa: F401
