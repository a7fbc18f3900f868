"""The plan's caller-step route: a backward helper whose callers in other files step.

A top-level function of one file scales the loss its caller hands it, for the optimizer
its caller hands it, and leaves the step to that caller::

    # utils.py
    def backward(loss, opt, half_prec):
        if half_prec:
            with amp.scale_loss(loss, opt) as scaled_loss:
                scaled_loss.backward()
        else:
            loss.backward()

    # train.py (amp.initialize is here)
    utils.backward(loss, opt, half_prec)
    opt.step()

The helper is an entry of the plan (it takes the GradScaler as a new parameter and backs
``scaler.scale(loss)``); each call of it is a backward of its caller: autocast goes around the
forward pass of the loss it hands over, and the step after it becomes ``scaler.step(opt);
scaler.update()``.  This module marks the candidates from what the index tells (every call
of the helper is in a launcher of another file; the helper's scale_loss takes a parameter
as its loss and another as its optimizer); the helper's rule proves its own body and each
launcher's rule each call (``rules/_amp_caller_steps``), and a blocker of either drops the
plan across files with its reason.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from .repo_index import ModuleSummary

Def = Tuple[str, str]
#: in a launcher: (call text, helper, loss position, loss parameter, optimizer position,
#: optimizer parameter); a position is -1 for a keyword-only parameter
SteppedCall = Tuple[str, str, int, str, int, str]


def _helper_parameters(summary: ModuleSummary, name: str) -> Optional[Tuple[str, str]]:
    """(loss parameter, optimizer parameter) of the one scaled backward of the top-level
    function ``name``, or None when it is no such helper."""
    if name not in summary.functions or name in summary.classes or name not in summary.parameters:
        return None
    if name in summary.stepping_definitions:
        return None  # it steps itself: the route of a helper that scales and steps
    positional, keyword_only = summary.parameters[name]
    sites = [s for s in summary.amp_sites if s.owner == name and not s.method]
    scaled = [s for s in sites if s.member == "scale_loss"]
    if not scaled or len(scaled) != len(sites):
        return None  # another amp use (a checkpoint, master_params) is no backward helper's
    pairs = {(s.loss_argument, s.optimizer_name) for s in scaled}
    if len(pairs) != 1:
        return None
    loss, optimizer = pairs.pop()
    every = set(positional) | set(keyword_only)
    if not loss or not optimizer or loss == optimizer or loss not in positional or optimizer not in every:
        return None
    return loss, optimizer


def caller_stepped(
    planned: Dict[Def, List[Tuple[Def, int]]],
    by_path: Dict[str, ModuleSummary],
    launchers: Set[str],
    edges: Dict[Def, Sequence[Tuple[Def, str]]],
) -> Tuple[Dict[str, Dict[str, Tuple[str, ...]]], Dict[str, Set[SteppedCall]]]:
    """The helpers of this route, per file (function -> the shown paths of the launchers
    calling it), and per launcher the texts of those calls with the helper's slots."""
    helpers: Dict[str, Dict[str, Tuple[str, ...]]] = {}
    calls_of: Dict[str, Set[SteppedCall]] = {}
    for (path, name), calls in sorted(planned.items()):
        summary = by_path[path]
        slots = _helper_parameters(summary, name)
        if slots is None or not calls:
            continue
        if any(caller[0] not in launchers or caller[0] == path for caller, _line in calls):
            continue
        loss, optimizer = slots
        positional = summary.parameters[name][0]
        entry: SteppedCall = (
            "",
            name,
            positional.index(loss),
            loss,
            positional.index(optimizer) if optimizer in positional else -1,
            optimizer,
        )
        shown = tuple(sorted({by_path[caller[0]].shown for caller, _line in calls}))
        helpers.setdefault(path, {})[name] = shown
        for caller, _line in calls:
            for callee, text in edges.get(caller, ()):
                if callee == (path, name):
                    calls_of.setdefault(caller[0], set()).add((text,) + entry[1:])
    return helpers, calls_of
