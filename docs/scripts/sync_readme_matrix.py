"""Copy the support-matrix table rows from ``docs/support-matrix.md`` into ``README.md``.

Both files hold the table between ``<!-- matrix-table ... -->`` and ``<!-- /matrix-table -->``;
only the table rows (lines starting with ``|``) between README's markers are replaced, its
marker lines stay.  ``tests/docs`` checks that the two tables agree, so run this after
regenerating the docs table (``.ci/matrix-table.py``):

    python docs/scripts/sync_readme_matrix.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"(<!-- matrix-table[^>]*-->\n)(.*?)(<!-- /matrix-table -->)", re.S)


def table_rows(text: str) -> str:
    match = BLOCK.search(text)
    if not match:
        raise SystemExit("matrix-table markers not found")
    return "\n".join(line for line in match.group(2).splitlines() if line.startswith("|"))


def main() -> int:
    rows = table_rows((REPO_ROOT / "docs" / "support-matrix.md").read_text(encoding="utf-8"))
    readme = REPO_ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if not BLOCK.search(text):
        raise SystemExit("README.md has no matrix-table markers")
    new = BLOCK.sub(lambda m: m.group(1) + rows + "\n" + m.group(3), text, count=1)
    if new != text:
        readme.write_text(new, encoding="utf-8")
        print("README.md: support-matrix rows updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
