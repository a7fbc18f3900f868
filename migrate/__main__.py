"""``python -m migrate`` behaves exactly like ``apexcompat-migrate``."""

from .cli import command

if __name__ == "__main__":
    command()
