"""Methods that read apex's gradients through ``amp.master_params`` and are also called from
other files.

apex unscaled the gradients when ``amp.scale_loss`` exited, so a method such as
``rescale_gradients(self)`` that clips ``amp.master_params(self.optimizer)`` read unscaled
gradients whoever called it.  Natively the method would unscale them itself
(``scaler.unscale_``), which is right only after a backward the GradScaler scaled: a caller
in another file that runs a plain ``loss.backward()`` first (allennlp's learning-rate finder
calls ``trainer.rescale_gradients()``) would divide its gradients by the scale, then fail on
the next call.  This module finds such methods; the initialize rule then puts the unscale_
before its own file's calls of them, or keeps the file on the shim where it cannot
(``_amp_sites._helpers_called_elsewhere``).
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Tuple

from .repo_index import ModuleSummary


def helpers_called_elsewhere(
    by_path: Dict[str, ModuleSummary], others: Sequence[Tuple[str, str, bytes]]
) -> Dict[str, Tuple[Tuple[str, str], ...]]:
    """Path -> (``Class.method``, ``shown:line`` of a call in another file) for each method
    that reads ``amp.master_params`` without scaling a loss itself and whose name is called
    as a method in another file (the receiver's class is not followed: any such call counts)."""
    found: Dict[str, List[Tuple[str, str]]] = {}
    for path, summary in by_path.items():
        scaled = {(s.owner, s.method) for s in summary.amp_sites if s.member == "scale_loss"}
        helpers = {
            (s.owner, s.method)
            for s in summary.amp_sites
            if s.member == "master_params" and s.method and (s.owner, s.method) not in scaled
        }
        for owner, method in sorted(helpers):
            where = _call_elsewhere(method, path, by_path, others)
            if where is not None:
                found.setdefault(path, []).append((f"{owner}.{method}", where))
    return {path: tuple(items) for path, items in found.items()}


def _call_elsewhere(
    method: str, path: str, by_path: Dict[str, ModuleSummary], others: Sequence[Tuple[str, str, bytes]]
) -> Optional[str]:
    """The first call of ``method`` in another file, in path order over indexed and unindexed
    files alike (a file this run migrates is unindexed on the next: the answer, written into a
    TODO comment, must not change with that)."""
    pattern = re.compile(rb"\." + re.escape(method.encode()) + rb"\s*\(")
    candidates = [(other, summary) for other, summary in by_path.items() if other != path]
    candidates += [(other, (shown, source)) for other, shown, source in others]
    for _other, found in sorted(candidates, key=lambda item: item[0]):
        if isinstance(found, ModuleSummary):
            call = next((c for c in found.method_calls if c.method == method), None)
            if call is not None:
                return f"{found.shown}:{call.line}"
            continue
        shown, source = found
        match = pattern.search(source)
        if match is not None:
            line = source.count(b"\n", 0, match.start()) + 1
            return f"{shown}:{line}"
    return None
