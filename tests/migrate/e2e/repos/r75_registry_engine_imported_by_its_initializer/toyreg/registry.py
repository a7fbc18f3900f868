"""Engines by name: a class registers itself, the launcher builds the one its options name."""

ENGINES = {}


def register(cls):
    ENGINES[cls.__name__.lower()] = cls
    return cls
