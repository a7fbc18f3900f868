"""Helpers the distiller star-imports; apex.amp comes with them when apex is there."""

has_apex = True
try:
    from apex import amp
except ImportError:
    has_apex = False


def to_device(batch, device):
    return tuple(t.to(device) for t in batch)
