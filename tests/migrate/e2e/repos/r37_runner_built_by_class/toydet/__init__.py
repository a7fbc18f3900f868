"""A detector-like package on the (stand-in) mmcv runner; importing it registers its hooks."""

from . import hooks, metric_hook  # noqa: F401  (registration)
