"""Sphinx configuration for the apexcompat documentation (MyST Markdown pages, furo theme).

The content that comes from real runs (the loss-scale plot and trajectory, the O1 dtype
table, the migration walkthrough and the rule-code reference) is committed in the pages
between ``<!-- generated: ... -->`` markers; ``python docs/scripts/generate.py`` refreshes it
and ``tests/docs/test_generated_blocks.py`` fails when it is stale, so the build only reads
the pages.  Build with ``docs/build.sh`` (strict).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS_DIR = Path(__file__).resolve().parent
REPO_ROOT = DOCS_DIR.parent
sys.path.insert(0, str(REPO_ROOT))

project = "apexcompat"
author = "the apexcompat authors"
copyright = "2026, the apexcompat authors"

try:
    from apexcompat import __version__ as release
except Exception:  # the API pages will report the import failure themselves
    release = "unknown"
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
]

source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "scripts", "Thumbs.db", ".DS_Store"]

# MyST: heading anchors make ``[text](page.md#some-heading)`` links checkable by the build.
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = True

html_theme = "furo"
html_title = "apexcompat"
html_static_path: list = []
# Nitpicky (-n) checks every cross-reference; objects of other projects (there are no
# intersphinx inventories offline) and type aliases are exempt, the project's own are not.
nitpick_ignore_regex = [
    ("py:class", r"(torch|collections|typing|numbers|os|pathlib)\..*"),
    ("py:class", r"Number|Tensor|Module|Optimizer|dtype"),
    ("py:class", r"apexcompat\.amp\.amp\.(AmpHandle|NoOpHandle)"),
]

# No network in CI: never fetch inventories or remote images.
intersphinx_mapping: dict = {}

