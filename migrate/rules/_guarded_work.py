"""A ``try`` around apex imports that guards work rather than answering whether apex is
installed (vokenization's ``xmatching/main.py``)::

    def train(gpu, args):
        if args.fp16:
            try:
                from apex import amp
                from apex.parallel import DistributedDataParallel as DDP
                model, optimizer = amp.initialize(model, optimizer, opt_level="O2")
                model = DDP(model)
            except Exception as e:
                print(e)
                return

Its handler's bare ``return`` gives up on training; it is no answer anyone reads.  Once the
migration leaves the imported names unused, each import line simply goes and the ``try``
stays as it is: where apex is installed (the run the migration must match) the import never
raised, so the handler runs exactly when it ran before.

It is such a ``try`` when:

* it holds, besides imports, at least one other statement (the guarded work: the body
  never empties, and no question about apex is all it asks);
* no ``return`` of the function holding it gives a value (nested definitions aside): a
  caller can learn nothing from which path ran.  ``def has_apex(): try: import apex;
  return True`` and ``except ImportError: return False`` stay availability probes (APX105).
"""

from __future__ import annotations

from typing import Any, List

import libcst as cst

from ._tree import children


def _is_none(value: Any) -> bool:
    return value is None or (isinstance(value, cst.Name) and value.value == "None")


def _returns_of(function: cst.FunctionDef) -> List[cst.Return]:
    found: List[cst.Return] = []
    stack: List[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue  # their returns are their own
        if isinstance(node, cst.Return):
            found.append(node)
        stack.extend(children(node))
    return found


def guards_work(owner: cst.Try, function: Any) -> bool:
    """Whether ``owner`` (a ``try`` inside ``function``) guards work, as the module says."""
    if not isinstance(function, cst.FunctionDef):
        return False
    work = [
        line
        for line in owner.body.body
        if not (
            isinstance(line, cst.SimpleStatementLine)
            and all(isinstance(small, (cst.Import, cst.ImportFrom)) for small in line.body)
        )
    ]
    return bool(work) and all(_is_none(ret.value) for ret in _returns_of(function))
