"""``python -m migrate`` behaves exactly like ``apexcompat-migrate``."""

from .cli import command

command()
