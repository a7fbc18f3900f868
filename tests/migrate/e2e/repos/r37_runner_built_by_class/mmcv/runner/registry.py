"""Name -> class tables filled by a decorator and read by ``build(cfg)`` (``cfg["type"]``)."""


class Registry:
    def __init__(self, name):
        self.name = name
        self.classes = {}

    def register_module(self):
        def add(cls):
            self.classes[cls.__name__] = cls
            return cls

        return add

    def build(self, cfg, default_args=None):
        options = dict(cfg)
        cls = self.classes[options.pop("type")]
        options.update(default_args or {})
        return cls(**options)
