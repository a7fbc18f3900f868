"""Whether a file that imports a launcher script can run the launcher's ``amp.initialize``.

The proof that no loss of a launcher's initialize is scaled (``repo_plan._may_reach_a_scaled_loss``)
follows what the launcher runs; a file that imports the launcher could also run the
initializing function and go on with its model in code of its own.  An importer is harmless
when every name it takes from the launcher is a definition that neither holds the training
initialize nor calls one that does (``from run_ner import NerTagger``), and a star import of
the launcher is followed by the importer's own definition of each initializing name (an
inference script's own ``main``), so that neither it nor a file importing it binds the
launcher's.  Pure data from the index.
"""

from __future__ import annotations

from typing import Any, Optional, Set

from .repo_index import MODULE_LEVEL, ModuleSummary


def initializing_definitions(summary: ModuleSummary) -> Set[str]:
    """The launcher's top-level definitions that hold a training initialize or call (in the
    same file, directly or not) one that does; MODULE_LEVEL among them when importing the
    file may run one."""
    found = {site.owner for site in summary.training_inits}
    grown = True
    while grown:
        callers = {d for d, called in summary.local_calls.items() if called & found} - found
        grown = bool(callers)
        found |= callers
    if summary.module_calls & found or summary.escaping & found:
        found.add(MODULE_LEVEL)  # importing runs it, or hands it to code that may
    return found


def importer_refusal(path: str, launcher: str, definitions: Any) -> Optional[str]:
    """Why the file ``path`` (which names the launcher on an import line) may run the
    launcher's initialize, else None."""
    summary = definitions.raw(path)
    if summary is None:
        return f"{path} may import the launcher"
    own = definitions.raw(launcher)
    initializing = initializing_definitions(own) if own is not None else {MODULE_LEVEL}
    shown = summary.shown
    if MODULE_LEVEL in initializing:
        return f"{shown} imports the launcher, whose module level may run its amp.initialize"
    resolve = definitions.resolver.resolve
    names_launcher = False
    for local, (module, attr) in sorted(summary.imports.items()):
        if attr and resolve(f"{module}.{attr}", path) == launcher:
            return f"{shown} imports the launcher as a module ({local})"
        if resolve(module, path) != launcher:
            continue
        names_launcher = True
        if not attr:
            return f"{shown} imports the launcher as a module ({local})"
        if attr in initializing:
            return f"{shown} imports {attr} from the launcher, which runs its amp.initialize"
    for module in sorted(summary.star_imports):
        if resolve(module, path) != launcher:
            continue
        names_launcher = True
        line = summary.import_lines.get(f"{module}.*", 0)
        for name in sorted(initializing):
            redefined = name in summary.functions | summary.classes and summary.def_lines.get(name, 0) > line
            if not redefined:
                return f"{shown} star-imports the launcher, and with it {name}, which runs its amp.initialize"
    if not names_launcher:
        return f"{shown} imports the launcher"  # a namesake, or through a path the resolver does not follow
    return None
