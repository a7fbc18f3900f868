"""Methods that scale a loss over an optimizer they are handed, and that only their own
class calls, on ``self``.

The Hugging Face ``Trainer`` of 2020 scales in ``_training_step(self, model, inputs,
optimizer)`` and steps in ``train()``, which calls ``self._training_step(model, inputs,
optimizer)`` and then ``optimizer.step()``.  Which optimizer the method is handed, and
whether it is stepped after each call, can be read off those calls
(``rules/_amp_sites.caller_links``) only when they are all there is: no subclass in any walked
file redefines the method (a redefinition would be what ``self.<method>`` runs) and no other
file calls a method of that name (``gradient_helpers_plan.call_elsewhere``: such a caller's
step is not followed).  Pure data from the index.
"""

from __future__ import annotations

from typing import Dict, Sequence, Set, Tuple

from .gradient_helpers_plan import call_elsewhere
from .repo_index import ModuleSummary


def self_called_only(
    by_path: Dict[str, ModuleSummary],
    others: Sequence[Tuple[str, str, bytes]],
    definitions,
    overridden: Dict[str, Tuple[Tuple[str, str, str], ...]],
) -> Dict[str, Tuple[Tuple[str, str], Tuple[Tuple[str, str, str], ...]]]:
    """Path -> ((class, method) of its methods holding an ``amp.scale_loss`` over an optimizer
    that is no attribute of ``self`` (a parameter, a local), which their class calls on
    ``self`` in the file (none other has calls to follow), that no subclass redefines
    (``overridden``: ``override_plan``'s answer) and no other file calls; (class, method,
    where such a call is) of those another file calls, for the finding)."""
    found = {}
    for path, summary in by_path.items():
        redefined: Set[Tuple[str, str]] = {(cls, method) for cls, method, _where in overridden.get(path, ())}
        self_called = {(call.owner, call.method) for call in summary.method_calls if call.on_self}
        candidates = sorted(
            {
                (site.owner, site.method)
                for site in summary.amp_sites
                if site.member == "scale_loss" and site.method and not site.optimizer_attr
            }
            - redefined
        )
        alone, called = [], []
        for owner, method in candidates:
            where = call_elsewhere((path, owner), method, by_path, others, definitions)
            if where is not None:
                called.append((owner, method, where))
            elif (owner, method) in self_called:
                alone.append((owner, method))
        if alone or called:
            found[path] = (tuple(alone), tuple(called))
    return found
