"""Other files' functions and classes that read gradients, as the files that scale a loss
name them.

apex unscaled the gradients when ``amp.scale_loss`` exited, so a function of another file
called between the block and the step saw them unscaled: yolov3-channel-and-layer-pruning's
``BNOptimizer.updateBN(...)`` (``from utils.prune_utils import *``) adds the L1 sparsity
term ``s * sign(w)`` to the BN weights' gradients there.  Natively the gradients are still
scaled at that point: the term would be divided by the loss scale at ``scaler.step``.  The
clipping rule treats a call through such a name as a gradient use (an ``unscale_`` before
it, or a TODO where none can run: the step only at an accumulation boundary).  Pure data,
from the index.
"""

from __future__ import annotations

from typing import Any, Dict, Set, Tuple

from .carrier_plan import reached_definitions
from .repo_index import ModuleSummary


def gradient_readers(by_path: Dict[str, ModuleSummary], definitions: Any) -> Dict[str, Tuple[str, ...]]:
    """Path -> the local names, in each indexed file that scales a loss, of the functions and
    classes of other files that read ``.grad`` (themselves or what they call), imported by
    name or through ``from m import *`` (``definitions``: ``repo_plan._Definitions``)."""
    found: Dict[str, Tuple[str, ...]] = {}
    for path, summary in by_path.items():
        if not any(site.member == "scale_loss" for site in summary.amp_sites):
            continue
        names: Set[str] = set()
        for local, (module, name) in summary.imports.items():
            item = definitions.find(module, name, path, anywhere=True) if name else None
            if item is not None and item[0] != path and _reads_grad(definitions, item):
                names.add(local)
        for module in summary.star_imports:
            target = definitions.resolver.resolve(module, path)
            star = definitions.summary(target) if target is not None and target != path else None
            if star is None:
                continue
            own = summary.functions | summary.classes  # a name defined here is this file's
            for name in (star.functions | star.classes) - own:
                if _reads_grad(definitions, (target, name)):
                    names.add(name)
        if names:
            found[path] = tuple(sorted(names))
    return found


def _reads_grad(definitions: Any, item: Tuple[str, str]) -> bool:
    """Whether the definition ``item`` (path, name) reads ``.grad`` off an object
    (``ModuleSummary.grad_readers``; ``torch.autograd.grad`` is no such read), itself or
    through a definition of the repository it calls (its file's, or an imported one)."""
    return any(name in summary.grad_readers for (_path, name), summary in reached_definitions(definitions, item))
