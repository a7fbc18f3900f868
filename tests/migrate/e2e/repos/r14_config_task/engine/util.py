"""Helpers without a scaled loss: the parameters an optimizer steps."""

try:
    import apex

    apex_available = True
except ImportError:
    apex_available = False


def master_params(optimizer):
    """apex's fp32 master copies when apex is there, else the optimizer's own parameters."""
    if apex_available:
        yield from apex.amp.master_params(optimizer)
    else:
        for group in optimizer.param_groups:
            yield from group["params"]
