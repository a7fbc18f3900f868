"""Qualified names (``encoder.layers.3.fc2.weight``) for the parameters an optimizer steps
on, taken from the models given to ``amp.initialize``; O2's fp32 master weights are named
after the model parameter they copy."""

from __future__ import annotations

from typing import Any, Dict, List, Sequence, Tuple

import torch

__all__ = ["qualified_names", "labelled_params", "module_names"]


def _prefix(index: int, count: int) -> str:
    return "" if count == 1 else f"models[{index}]."


def qualified_names(models: Sequence[torch.nn.Module]) -> Dict[int, str]:
    """``id(param) -> name`` for every parameter of ``models`` (several models: the name
    starts with ``models[i].``)."""
    names: Dict[int, str] = {}
    for i, model in enumerate(models):
        prefix = _prefix(i, len(models))
        for name, param in model.named_parameters(remove_duplicate=True):
            names.setdefault(id(param), prefix + name)
    return names


def module_names(models: Sequence[torch.nn.Module]) -> List[Tuple[str, torch.nn.Module]]:
    """Every module of ``models`` with its qualified name (a root is named by its class)."""
    out: List[Tuple[str, torch.nn.Module]] = []
    for i, model in enumerate(models):
        prefix = _prefix(i, len(models))
        for name, module in model.named_modules():
            out.append((prefix + name if name else prefix + f"({type(model).__name__})", module))
    return out


def labelled_params(optimizer: Any, names: Dict[int, str]) -> List[Tuple[str, torch.Tensor]]:
    """The parameters whose ``.grad`` holds this backward's values, with their labels.

    With master weights these are the half model parameters (their masters only receive
    copies) plus the fp32 parameters; otherwise the optimizer's own parameters.  A parameter
    that belongs to none of the models is labelled by its place in ``param_groups``."""
    stash = getattr(optimizer, "_amp_stash", None)
    model_params = list(getattr(stash, "all_fp16_params", ()) or ())
    masters = getattr(stash, "all_fp32_from_fp16_params", ()) or ()
    master_of = {id(m): p for p, m in zip(model_params, masters)}
    out: List[Tuple[str, torch.Tensor]] = []
    seen = set()
    for g, group in enumerate(optimizer.param_groups):
        for i, param in enumerate(group["params"]):
            param = master_of.get(id(param), param)
            if id(param) in seen:
                continue
            seen.add(id(param))
            out.append((names.get(id(param), f"param_groups[{g}]['params'][{i}]"), param))
    for param in model_params:  # half params not (or no longer) in the groups
        if id(param) not in seen:
            seen.add(id(param))
            out.append((names.get(id(param), "param"), param))
    return out
