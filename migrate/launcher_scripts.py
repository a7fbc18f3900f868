"""Whether a launcher's callers are known from the launcher itself, and which GradScaler
uses a run of it may count as scaling a loss of its ``amp.initialize``.

The proof that no loss of a launcher's initialize is scaled (``repo_plan._may_reach_a_scaled_loss``)
follows what the launcher runs.  That is all that runs after its initialize only when the
launcher is a script: nothing outside the repository imports it and goes on with the model
in code of its own.  Three shapes say so:

* a ``__main__`` guard (``python train.py``);
* an initialize that importing the file runs (at module level, or in a function its module
  level calls): the file does its work when it is loaded, which is how a script without a
  guard (``python probe.py``, a notebook export, ``python -m pkg.example``) is written; a
  file of the repository that imports it is checked by ``launcher_importers``;
* a pytest test module (``test_*.py``, ``*_test.py``): its functions run under pytest, which
  scales no loss; a file of the repository that imports it is checked the same way.

A GradScaler is not apex: apex scales only through ``amp.scale_loss``.  A launcher that still
imports ``apex.amp`` runs on the original code, so a GradScaler its run reaches was written by
the repository's authors (a training loop already moved to torch.amp) and scales no loss of the
apex initialize.  A launcher on ``apexcompat.amp`` may be a first run's output, where a
GradScaler it reaches may be that run's rewrite of an ``amp.scale_loss``: there it counts as
scaling, so a second run keeps the shim where the first did.
"""

from __future__ import annotations

from typing import Optional

from .launcher_importers import initializing_definitions
from .repo_index import MODULE_LEVEL, ModuleSummary


def not_a_script(launcher: str, summary: ModuleSummary) -> Optional[str]:
    """Why the launcher's callers are not known from the launcher itself, if they are not."""
    stem = launcher.rsplit("/", 1)[-1][: -len(".py")] if launcher.endswith(".py") else ""
    if not (summary.main_guard or is_test_module(stem) or MODULE_LEVEL in initializing_definitions(summary)):
        return ("the launcher is no script (no __name__ == \"__main__\" guard, no test module, and importing "
                "it runs no amp.initialize): its callers are not known")
    if not stem or stem == "__init__":
        return "the launcher is a package"
    return None


def is_test_module(stem: str) -> bool:
    """Whether pytest collects a module of this name (its default ``python_files``)."""
    return stem.startswith("test_") or stem.endswith("_test")


def on_the_shim(summary: ModuleSummary) -> bool:
    """Whether the launcher takes amp from apexcompat (maybe a first run's output)."""
    return any(name == "apexcompat" or name.startswith("apexcompat.") for name in summary.import_lines)
