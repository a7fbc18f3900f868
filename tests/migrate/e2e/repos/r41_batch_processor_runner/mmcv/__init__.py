"""Stand-in for an old mmcv (0.x): the runner that takes a batch processor."""
