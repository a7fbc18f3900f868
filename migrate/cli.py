"""Placeholder; being written (command line)."""
def main(argv=None) -> int:
    raise SystemExit("apexcompat-migrate: not implemented yet")
