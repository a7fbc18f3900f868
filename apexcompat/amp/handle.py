"""Placeholder; being written (scale_loss)."""
def scale_loss(*a, **k): raise NotImplementedError
