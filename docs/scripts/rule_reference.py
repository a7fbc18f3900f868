"""Write the migration tool's rule-code reference for the docs site.

The reference is rendered by ``migrate.docs`` from the rules themselves (their ``CODES`` and
their ``EXAMPLES`` / ``NOOP_EXAMPLES``, which ``tests/migrate`` runs through the tool) and the
driver's codes; this script only writes its fragment where ``docs/migrate/rules.md``
includes it, so the page can neither miss a code nor show an example the tool does not
produce.

    python docs/scripts/rule_reference.py --out docs/_generated/rules.inc
"""

from __future__ import annotations

import argparse
from pathlib import Path


def render() -> str:
    """The fragment the site includes (``python -m migrate.docs --fragment``)."""
    from migrate.docs import render_fragment

    return render_fragment()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
