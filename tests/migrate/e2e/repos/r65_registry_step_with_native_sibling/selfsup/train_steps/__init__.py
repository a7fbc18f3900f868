"""The train steps, kept by name: a launcher builds the one its config names."""

TRAIN_STEP_REGISTRY = {}


def register_train_step(name):
    """Decorator: keep a train step class under ``name``."""

    def register(cls):
        if name in TRAIN_STEP_REGISTRY:
            raise ValueError(f"train step {name} registered twice")
        TRAIN_STEP_REGISTRY[name] = cls
        return cls

    return register


def get_train_step(name, **kwargs):
    """A new instance of the train step registered as ``name``."""
    return TRAIN_STEP_REGISTRY[name](**kwargs)


from selfsup.train_steps import standard_train_step  # noqa: E402,F401  (registers itself)
