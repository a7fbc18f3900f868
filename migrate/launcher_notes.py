"""Why a launcher without ``amp.scale_loss`` gets no plan, where the place is known: the
reason names where its losses are scaled instead of "the losses are scaled elsewhere".

Two shapes the plan cannot follow, each a fact of the repository that a first run does not
change (so a second run words the reason the same):

* the code the launcher calls reaches an ``amp.scale_loss`` that reads a name ``amp`` bound
  only in another function (apex.amp imported in ``__init__``, scaled in another method):
  that line raises NameError, in the original too (APX234);
* the launcher imports the definition that needs the GradScaler from a module name that
  several files of the repository answer to (``ignite.engine``: the library's package and
  the test package of the same name): which one the import finds depends on ``sys.path``.

Pure data from the index.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple

from .repo_index import MODULE_LEVEL, ModuleSummary

Def = Tuple[str, str]


def reached(launcher: str, by_path: Dict[str, ModuleSummary], edges: Dict[Def, List[Tuple[Def, str]]]) -> Set[Def]:
    """The top-level definitions of indexed files the launcher's code calls, directly or not."""
    summary = by_path[launcher]
    work = [(launcher, d) for d in sorted({MODULE_LEVEL} | summary.functions | summary.classes)]
    seen: Set[Def] = set()
    while work:
        item = work.pop()
        if item in seen or item[0] not in by_path:
            continue
        seen.add(item)
        work.extend((item[0], c) for c in sorted(by_path[item[0]].local_calls.get(item[1], ())))
        work.extend(callee for callee, _text in edges.get(item, []))
    return seen


def unbound_scale_note(
    launcher: str, by_path: Dict[str, ModuleSummary], edges: Dict[Def, List[Tuple[Def, str]]]
) -> Optional[str]:
    """The note when the launcher's code reaches an ``amp.scale_loss`` that raises NameError."""
    for path, name in sorted(reached(launcher, by_path, edges)):
        if path == launcher:
            continue
        for owner, method, _line in by_path[path].unbound_scales:
            if owner == name:
                where = f"{name}.{method}()" if method else f"{name}()"
                return (f"no amp.scale_loss in this file: the losses are scaled in {by_path[path].shown} ({where}), "
                        "whose amp.scale_loss reads a name amp that is not bound there, so it raises NameError, "
                        "in the original too (APX234): fix that first")
    return None


def ambiguous_import_note(launcher: str, by_path: Dict[str, ModuleSummary], definitions, needy: Set[Def]) -> Optional[str]:
    """The note when the launcher calls a definition that needs the GradScaler through a
    module name several files of the repository answer to."""
    summary = by_path[launcher]
    for call in sorted(summary.calls, key=lambda c: c.line):
        found = definitions.resolver.candidates(call.module, launcher)
        if len(found) < 2:
            continue
        needing = [p for p in found if (p, call.name) in needy]
        if not needing:
            continue
        shown = [(definitions.summary(p) or ModuleSummary(p, p)).shown for p in found]
        return (f"no amp.scale_loss in this file: it calls {call.text} from {call.module}, a module name "
                f"{len(found)} files of the repository answer to ({', '.join(shown)}): which one the import "
                f"finds depends on sys.path, so the GradScaler cannot be sent to {call.name} of "
                f"{by_path[needing[0]].shown}, whose code scales the losses")
    return None
