"""Launchers whose training initializes are in several functions (wetectron's ``train`` and
``train_cdb`` in one ``tools/train_net.py``).

Each such function creates its own GradScaler where its initialize stands (its own, as
apex's initialize made its own loss scalers for what that function trains), and hands it
to the callees it calls, as a launcher with one initializing function does.  That is sound
only where every call of the file that reaches a loss scaling is made by one of those
functions: a call from any other function of the file (``main`` calling the training loop
directly) would have no GradScaler to hand on.  amp's state may be saved and loaded in those
functions, after their initialize (each one's own GradScaler).  A function with several
initializes is taken only where they are one after the other on one path
(``initializes_in_sequence`` of that function alone: one GradScaler serves them, as apex's
last loss scaler served every optimizer).  Pure data from the index.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Set, Tuple

from .repo_index import MODULE_LEVEL, ModuleSummary

Def = Tuple[str, str]


def several_launchers(by_path: Dict[str, ModuleSummary]) -> Set[str]:
    """The files whose training initializes are in two or more top-level functions, each
    function's own initializes once or in sequence, that scale no loss themselves and save or
    load amp's state only in those functions."""
    found: Set[str] = set()
    for path, summary in by_path.items():
        inits = summary.training_inits
        owners = {s.owner for s in inits}
        if len(owners) < 2 or not owners <= summary.functions or not summary.owners_needing_scaler() <= owners:
            continue
        if any(s.member == "scale_loss" for s in summary.amp_sites):
            continue
        if all(_alone_initializes_once(summary, owner) for owner in owners):
            found.add(path)
    return found


def _alone_initializes_once(summary: ModuleSummary, owner: str) -> bool:
    """``owner`` initializes once, or several times one after the other on one path."""
    own = replace(summary, amp_sites=[s for s in summary.amp_sites if s.owner == owner])
    return len(own.training_inits) == 1 or own.initializes_in_sequence()


def stray_calls(
    path: str,
    summary: ModuleSummary,
    edges: Dict[Def, List[Tuple[Def, str]]],
    needy: Set[Def],
) -> List[Tuple[str, str]]:
    """The calls of ``path`` that reach a loss scaling from a definition that initializes
    nothing: (calling definition, callee), empty where every such call has a GradScaler."""
    owners = {s.owner for s in summary.training_inits}
    stray = []
    for (caller_path, caller), called in sorted(edges.items()):
        if caller_path != path or caller in owners:
            continue
        stray += [(caller or MODULE_LEVEL, callee[1]) for callee, _text in called if callee in needy]
    return stray
