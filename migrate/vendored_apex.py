"""Recognise a copy of NVIDIA apex itself inside the walked tree, and the one finding that
reports it.

Two shapes count, judged from what the folder holds, never from its path alone:

* **the apex package**: a folder named ``apex`` (the only name under which ``import apex``
  finds it) holding ``__init__.py`` and at least one module file that only apex's package
  has (:data:`PACKAGE_MARKERS`, e.g. ``amp/_amp_state.py``, ``optimizers/fused_adam.py``);
* **apex's source tree** (a git submodule, ``third_party/apex``, an unpacked release: any
  name): a folder holding ``setup.py`` or ``pyproject.toml``, the apex package as ``apex/``
  and ``csrc/`` with the source of one of apex's two base extensions (``apex_C``:
  ``flatten_unflatten.cpp``; ``amp_C``: ``amp_C_frontend.cpp``).  Its tests, examples and
  docs are apex's too, so the whole folder is skipped.

A user package that is merely called ``apex_utils`` or ``apex``, or a module ``apex.py`` of
the repository, matches neither.  The test costs nothing for almost every folder: it looks
at the folder's own entry names first and touches the disk (a few ``isfile`` calls) only for
a folder with the right names.
"""

from __future__ import annotations

import os
from typing import Collection, Optional

from .codes import VENDORED_APEX
from .findings import Finding

#: module files of apex's package (old releases with amp, new ones without it)
PACKAGE_MARKERS = (
    "amp/_amp_state.py",
    "amp/handle.py",
    "fp16_utils/fp16_optimizer.py",
    "multi_tensor_apply/multi_tensor_apply.py",
    "normalization/fused_layer_norm.py",
    "optimizers/fused_adam.py",
)
#: the sources of apex's ``apex_C`` and ``amp_C`` extensions, under ``csrc/``
EXTENSION_SOURCES = ("flatten_unflatten.cpp", "amp_C_frontend.cpp")
PACKAGE = "package"
SOURCE_TREE = "source tree"


def _is_package(directory: str, names: Collection[str]) -> bool:
    return (
        os.path.basename(directory) == "apex"
        and "__init__.py" in names
        and any(os.path.isfile(os.path.join(directory, *marker.split("/"))) for marker in PACKAGE_MARKERS)
    )


def vendored_apex_kind(directory: str, names: Collection[str]) -> Optional[str]:
    """:data:`SOURCE_TREE` or :data:`PACKAGE` when ``directory`` (whose entry names are
    ``names``) is a copy of apex, else ``None``."""
    if "apex" in names and "csrc" in names and ("setup.py" in names or "pyproject.toml" in names):
        csrc = os.path.join(directory, "csrc")
        if any(os.path.isfile(os.path.join(csrc, name)) for name in EXTENSION_SOURCES):
            package = os.path.join(directory, "apex")
            try:
                inside = os.listdir(package)
            except OSError:
                inside = []
            if _is_package(package, inside):
                return SOURCE_TREE
    if _is_package(directory, names):
        return PACKAGE
    return None


def vendored_apex_finding(shown: str, kind: str) -> Finding:
    """The one finding for the copy of apex shown as ``shown`` (a folder path ending in
    ``/``): work for the user, so ``--check`` exits 1 until it is gone or ignored."""
    what = "apex's source tree (setup.py, csrc/, the apex package)" if kind == SOURCE_TREE else "the apex package"
    return Finding(
        path=shown,
        line=0,
        col=0,
        code=VENDORED_APEX,
        message=f"a copy of {what}: apex itself, not code using it, so nothing in it is migrated; "
        "once no file outside it imports apex, delete it and the step that installs it "
        "(or --ignore APX006 to keep apex)",
    )
