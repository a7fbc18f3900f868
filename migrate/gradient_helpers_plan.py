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

A call ``self.m()`` in a method of another file's class reaches the method only through an
instance of a class deriving from both (one may derive from the other): where no class of
the walked files does (a base no import resolves is read by its name), the call is another class's ``m``
(two copies of one trainer in two packages) and does not count.
"""

from __future__ import annotations

import re
from typing import Dict, List, Optional, Sequence, Set, Tuple

from .repo_index import ModuleSummary
from .site_words import in_definition

Def = Tuple[str, str]


def helpers_called_elsewhere(
    by_path: Dict[str, ModuleSummary], others: Sequence[Tuple[str, str, bytes]], definitions
) -> Dict[str, Tuple[Tuple[str, str], ...]]:
    """Path -> (``Class.method``, where a call in another file is: ``_call_site``) for each method
    that reads ``amp.master_params`` without scaling a loss itself and whose name is called
    as a method in another file (the receiver's class is followed only for ``self``: any
    other such call counts)."""
    found: Dict[str, List[Tuple[str, str]]] = {}
    for path, summary in by_path.items():
        scaled = {(s.owner, s.method) for s in summary.amp_sites if s.member == "scale_loss"}
        helpers = {
            (s.owner, s.method)
            for s in summary.amp_sites
            if s.member == "master_params" and s.method and (s.owner, s.method) not in scaled
        }
        for owner, method in sorted(helpers):
            where = call_elsewhere((path, owner), method, by_path, others, definitions)
            if where is not None:
                found.setdefault(path, []).append((f"{owner}.{method}", where))
    return {path: tuple(items) for path, items in found.items()}


def call_elsewhere(
    owner: Def, method: str, by_path: Dict[str, ModuleSummary], others: Sequence[Tuple[str, str, bytes]],
    definitions,
) -> Optional[str]:
    """The first call of ``method`` in another file that may reach ``owner``'s, in path order
    over indexed and unindexed files alike (a file this run migrates is unindexed on the next:
    the answer, written into a TODO comment, must not change with that: both are read alike)."""
    path = owner[0]
    pattern = re.compile(rb"\." + re.escape(method.encode()) + rb"\s*\(")
    candidates = [(other, summary) for other, summary in by_path.items() if other != path]
    candidates += [(other, (shown, source)) for other, shown, source in others]
    family: List[Set[Def]] = []
    for other, found in sorted(candidates, key=lambda item: item[0]):
        if isinstance(found, ModuleSummary):
            lines = [c.line for c in found.method_calls if c.method == method]
            summary: Optional[ModuleSummary] = found
        else:
            shown, source = found
            lines = [source.count(b"\n", 0, m.start()) + 1 for m in pattern.finditer(source)]
            summary = definitions.summary(other) if lines else None
        if summary is not None and lines:
            apart = _unrelated_self_calls(owner, other, summary, method, by_path, definitions, family)
            lines = [line for line in lines if line not in apart]
        if lines:
            return _call_site(summary, found[0] if summary is None else summary.shown, method, lines[0])
    return None


def _call_site(summary: Optional[ModuleSummary], shown: str, method: str, line: int) -> str:
    """How a finding names the call of ``method`` at ``line`` of ``shown``: the file and the
    top-level definition holding it, never the line (the TODO quoting it must not change
    when a migration inserts lines into that file)."""
    owners = [c.owner for c in summary.method_calls if c.method == method and c.line == line] if summary else []
    return in_definition(shown, owners[0], summary) if owners else shown


def _unrelated_self_calls(
    owner: Def, other: str, summary: ModuleSummary, method: str, by_path, definitions, family: List[Set[Def]]
) -> Set[int]:
    """The lines of ``self.<method>()`` calls in ``other`` whose class shares no subclass
    with ``owner`` (``family`` caches ``owner``'s subclasses)."""
    from .repo_plan import derived_classes

    lines: Set[int] = set()
    for call in summary.method_calls:
        if call.method != method or not call.on_self:
            continue
        if not family:
            family.append(derived_classes(owner, by_path, definitions, unresolved_by_name=True))
        if not derived_classes((other, call.owner), by_path, definitions, unresolved_by_name=True) & family[0]:
            lines.add(call.line)
    return lines
