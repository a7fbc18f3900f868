"""Render the migration tool's rule-code reference from the rules themselves.

Every rule family in ``migrate.rules.ALL_RULES`` carries its codes (``CODES``) and its
documentation examples (``EXAMPLES``, ``NOOP_EXAMPLES``), which ``tests/migrate`` runs through
the engine; the driver's own codes are in ``migrate.codes.DRIVER_CODES``.  This script writes
them out as the Markdown fragment included by ``docs/migrate/rules.md``, so the page can
neither miss a code nor show an example the tool does not produce.

    python docs/scripts/rule_reference.py --out docs/_generated/rules.inc
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from typing import Dict, List

SEVERITY_NOTE = {
    "native": "`--to native` (default)",
    "shim": "`--to shim`",
}


def _fence(code: str) -> str:
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}python\n{code.rstrip(chr(10))}\n{fence}"


def _first_paragraph(doc: str) -> str:
    doc = inspect.cleandoc(doc or "")
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def _example_block(example) -> List[str]:
    settings = example.settings
    where = [SEVERITY_NOTE.get(settings.target, settings.target)]
    if tuple(settings.target_torch) != (2, 4):
        where.append(f"`--target-torch {settings.target_torch[0]}.{settings.target_torch[1]}`")
    codes = ", ".join(f"`{c}`" for c in example.codes) or "no finding"
    lines = [f"**{example.id}** — {', '.join(where)}; reports {codes}", "", "Before:", "", _fence(example.before), ""]
    if example.after is None:
        lines += ["Left unchanged (reported only).", ""]
    else:
        lines += ["After:", "", _fence(example.after), ""]
    return lines


def render() -> str:
    from migrate.codes import DRIVER_CODES
    from migrate.rules import ALL_RULES

    out: List[str] = []
    code_index: Dict[str, str] = {}
    for code, text in DRIVER_CODES.items():
        code_index[code] = "files"
    for rule in ALL_RULES:
        for code in rule.CODES:
            code_index[code] = rule.__name__
    out += ["## All codes", "", "| code | family | meaning |", "| --- | --- | --- |"]
    descriptions = dict(DRIVER_CODES)
    for rule in ALL_RULES:
        descriptions.update(rule.CODES)
    for code in sorted(descriptions):
        family = code_index[code]
        anchor = "files-the-drivers-own-codes" if family == "files" else family.lower()
        text = " ".join(descriptions[code].split()).replace("|", "\\|")
        out.append(f"| `{code}` | [{family}](#{anchor}) | {text} |")
    out += ["", "(files-the-drivers-own-codes)=", "## Files: the driver's own codes", "",
            "Problems with a file rather than with its use of apex. The file is left unchanged.", ""]
    for code, text in sorted(DRIVER_CODES.items()):
        out.append(f"- `{code}` — {' '.join(text.split())}")
    out.append("")
    for rule in sorted(ALL_RULES, key=lambda r: min(r.CODES) if r.CODES else r.__name__):
        out += [f"({rule.__name__.lower()})=", f"## {rule.__name__}", "", _first_paragraph(rule.__doc__), "",
                f"Codes: {', '.join(f'`{c}`' for c in sorted(rule.CODES))}.", ""]
        if rule.EXAMPLES:
            out += ["### Rewrites", ""]
            for example in rule.EXAMPLES:
                out += _example_block(example)
        if rule.NOOP_EXAMPLES:
            out += ["### Left alone", ""]
            for example in rule.NOOP_EXAMPLES:
                out += _example_block(example)
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
