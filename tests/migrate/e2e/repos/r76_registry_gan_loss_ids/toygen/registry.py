"""Name -> class registry: classes register with a decorator and are built from a dict's "type"."""


class Registry:
    def __init__(self, name):
        self.name = name
        self._classes = {}

    def register_module(self, name=None):
        def register(cls):
            self._classes[name or cls.__name__] = cls
            return cls
        return register

    def build(self, cfg):
        cfg = dict(cfg)
        return self._classes[cfg.pop("type")](**cfg)


MODELS = Registry("model")
