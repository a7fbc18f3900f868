"""Resuming without knowing what is resumed: every keyword object whose entry the checkpoint
holds loads it, the way a module does (``strict=False``) or, when it refuses that keyword, the
plain way; the run variables named are read back."""

import os

import torch


def restart_from_checkpoint(path, run_variables=None, **kwargs):
    if not path or not os.path.isfile(path):
        return
    checkpoint = torch.load(path, map_location="cpu")
    for key, value in kwargs.items():
        if key not in checkpoint or value is None:
            print(f"nothing to restore for {key}")
            continue
        try:
            value.load_state_dict(checkpoint[key], strict=False)
        except TypeError:
            value.load_state_dict(checkpoint[key])
    if run_variables is not None:
        for name in run_variables:
            if name in checkpoint:
                run_variables[name] = checkpoint[name]
