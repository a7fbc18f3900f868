"""The rule-code reference, generated from the rules themselves.

Every rule in ``ALL_RULES`` carries its codes (``CODES``) and its examples (``EXAMPLES``,
``NOOP_EXAMPLES``, run by ``tests/migrate/test_rule_examples.py``); the driver's own codes
are in ``migrate.codes``.  ``python -m migrate.docs`` prints the whole page as Markdown;
``--fragment`` prints only the part that the documentation site includes
(``docs/scripts/generate.py`` writes it into ``docs/migrate/rules.md``).
"""

from __future__ import annotations

import argparse
import inspect
import sys
from typing import TYPE_CHECKING, Dict, List, Optional, Sequence, Type

if TYPE_CHECKING:
    from .rules.base import Rule

PAGE_HEADER = """# Rule codes

Every finding the tool reports has a code: `APX0xx` are about files (parsing, reading,
writing), the other families about apex usage. This page is generated from the rules'
own examples (the same examples the test suite runs through the tool), so each
before/after below is exactly what the tool does.

Select or skip codes with `--select APX1,APX301` / `--ignore APX8` (prefixes select whole
families).

"""

TARGET_NOTE = {"native": "`--to native` (default)", "shim": "`--to shim`"}


def _fence(code: str) -> str:
    fence = "```"
    while fence in code:
        fence += "`"
    return f"{fence}python\n{code.rstrip(chr(10))}\n{fence}"


def _summary(doc: Optional[str]) -> str:
    return inspect.cleandoc(doc or "").split("\n\n", 1)[0].replace("\n", " ").strip()


def _example(example) -> List[str]:
    settings = example.settings
    where = [TARGET_NOTE.get(settings.target, settings.target)]
    if tuple(settings.target_torch) != (2, 4):
        where.append(f"`--target-torch {settings.target_torch[0]}.{settings.target_torch[1]}`")
    codes = ", ".join(f"`{c}`" for c in example.codes) or "no finding"
    lines = [f"**{example.id}** — {', '.join(where)}; reports {codes}", "", "Before:", "", _fence(example.before), ""]
    if example.after is None:
        lines += ["Left unchanged (reported only).", ""]
    else:
        lines += ["After:", "", _fence(example.after), ""]
    return lines


def render_fragment(rules: "Optional[Sequence[Type[Rule]]]" = None) -> str:
    """The codes table, the driver's codes, and one section per rule family with its
    examples."""
    from .codes import DRIVER_CODES

    if rules is None:
        from .rules import ALL_RULES

        rules = ALL_RULES

    family: Dict[str, str] = {code: "files" for code in DRIVER_CODES}
    descriptions: Dict[str, str] = dict(DRIVER_CODES)
    for rule in rules:
        for code, text in rule.CODES.items():
            family[code] = rule.__name__
            descriptions[code] = text
    out = ["## All codes", "", "| code | family | meaning |", "| --- | --- | --- |"]
    for code in sorted(descriptions):
        anchor = "files-the-drivers-own-codes" if family[code] == "files" else family[code].lower()
        text = " ".join(descriptions[code].split()).replace("|", "\\|")
        out.append(f"| `{code}` | [{family[code]}](#{anchor}) | {text} |")
    out += [
        "",
        "(files-the-drivers-own-codes)=",
        "## Files: the driver's own codes",
        "",
        "Problems with a file rather than with its use of apex. The file is left unchanged.",
        "",
    ]
    out += [f"- `{code}` — {' '.join(text.split())}" for code, text in sorted(DRIVER_CODES.items())]
    out.append("")
    for rule in sorted(rules, key=lambda r: min(r.CODES) if r.CODES else r.__name__):
        out += [
            f"({rule.__name__.lower()})=",
            f"## {rule.__name__}",
            "",
            _summary(rule.__doc__),
            "",
            f"Codes: {', '.join(f'`{c}`' for c in sorted(rule.CODES))}.",
            "",
        ]
        if rule.EXAMPLES:
            out += ["### Rewrites", ""]
            for example in rule.EXAMPLES:
                out += _example(example)
        if rule.NOOP_EXAMPLES:
            out += ["### Left alone", ""]
            for example in rule.NOOP_EXAMPLES:
                out += _example(example)
    return "\n".join(out) + "\n"


def render_page(rules: "Optional[Sequence[Type[Rule]]]" = None) -> str:
    return PAGE_HEADER + render_fragment(rules)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m migrate.docs", description="Print the rule-code reference as Markdown."
    )
    parser.add_argument("--fragment", action="store_true", help="only the part the docs site includes")
    args = parser.parse_args(argv)
    sys.stdout.write(render_fragment() if args.fragment else render_page())
    return 0


if __name__ == "__main__":
    sys.exit(main())
