#!/usr/bin/env bash
# Build the documentation site strictly (every Sphinx warning is an error), offline.
# Usage: docs/build.sh [extra sphinx-build args]   -> HTML in docs/_build/html
# Installs the docs extra first if Sphinx/MyST/furo/matplotlib are missing.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! python -c "import sphinx, myst_parser, furo, matplotlib" 2>/dev/null; then
    echo "docs/build.sh: installing the docs extra (pip install -e '.[docs]')"
    python -m pip install -q -e ".[docs]"
fi
# -W: warnings are errors; --keep-going: report all of them; -n: nitpicky cross-references;
# -E: fresh environment so no stale page hides a broken link.  The internal link check is
# part of this build: MyST reports every missing page or #anchor as a warning.
exec python -m sphinx -W --keep-going -n -E -q -b html docs docs/_build/html "$@"
