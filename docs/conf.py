"""Sphinx configuration for the apexcompat documentation (MyST Markdown pages, furo theme).

Before reading any page the build regenerates the content that comes from real runs
(``docs/scripts/generate.py``): the loss-scale plot, the O1 dtype table, the migration
walkthrough diff and the rule-code reference.  Build with ``docs/build.sh`` (strict).
"""

from __future__ import annotations

import subprocess
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


def _regenerate(app) -> None:
    """Regenerate the pages that come from real runs, unless the caller already did."""
    if getattr(app.config, "apexcompat_skip_generate", False):
        return
    subprocess.run([sys.executable, str(DOCS_DIR / "scripts" / "generate.py")], check=True)


def setup(app):
    app.add_config_value("apexcompat_skip_generate", False, "env")
    app.connect("builder-inited", _regenerate)
    return {"parallel_read_safe": True}
