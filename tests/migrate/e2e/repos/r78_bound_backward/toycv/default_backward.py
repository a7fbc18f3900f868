"""Backward functions a launcher script binds onto the trainer's Launcher."""

try:
    from apex import amp
except ImportError:
    pass

__all__ = ["amp_backward"]


def amp_backward(self, total_loss, optimizer):
    with amp.scale_loss(total_loss, optimizer) as scaled_loss:
        scaled_loss.backward()
