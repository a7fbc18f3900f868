"""A tiny stand-in for the installed mmcv library (test fixture only): just the runner, hook,
registry and auto_fp16 contract that mmdet/mmseg forks rely on, so the layout runs on the CPU."""
