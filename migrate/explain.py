"""``--explain APXnnn``: what a code means, which rule family reports it and what that family
does, one of its documented before/after examples (the examples the docs page and the tests
use, run through the tool here so the findings shown are real), and for codes that leave work
to the user, why and what to do by hand."""

from __future__ import annotations

import difflib
import inspect
import textwrap
from typing import TYPE_CHECKING, Dict, List, Optional, Tuple, Type

from .codes import DRIVER_CODES
from .manual import MANUAL_WORK

if TYPE_CHECKING:
    from .rules.base import Example, Rule


class UnknownCode(Exception):
    """The code is not one the tool reports."""


def _rules() -> "List[Type[Rule]]":
    from .engine import default_rules

    return list(default_rules())


def known_codes() -> Dict[str, str]:
    """Every code the tool can report -> its one-line description."""
    codes = dict(DRIVER_CODES)
    for rule in _rules():
        codes.update(rule.CODES)
    return dict(sorted(codes.items()))


def _examples(code: str) -> "List[Tuple[Type[Rule], Example]]":
    """The documented examples reporting ``code``, shortest first."""
    found = [(rule, ex) for rule in _rules() for ex in rule.EXAMPLES + rule.NOOP_EXAMPLES if code in ex.codes]
    return sorted(found, key=lambda pair: len(pair[1].before))


def _indent(text: str) -> str:
    return textwrap.indent(text.rstrip("\n"), "    ") + "\n"


def _example_text(code: str, example: "Example") -> Tuple[str, List[str]]:
    """The example as before/after text, and the messages the tool gives for ``code`` on it
    when the site is left to the user."""
    from .engine import migrate_source

    result = migrate_source(example.before.encode("utf-8"), "example.py", example.settings)
    flags = [] if example.settings.target == "native" else [f"--to {example.settings.target}"]
    if tuple(example.settings.target_torch) != (2, 4):
        flags.append("--target-torch {}.{}".format(*example.settings.target_torch))
    title = f"Example ({example.id}{', ' + ' '.join(flags) if flags else ''}):"
    lines = [title, "", "  before:", _indent(example.before)]
    if result.new != example.before.encode("utf-8"):
        lines += ["  after:", _indent(result.new.decode("utf-8"))]
    else:
        lines += ["  left unchanged (reported only)", ""]
    manual = [f.message for f in result.all_findings() if f.code == code and f.needs_manual_work()]
    return "\n".join(lines), manual


def explain(code: str) -> str:
    """The text ``--explain`` prints for ``code`` (raises ``UnknownCode``)."""
    code = code.strip().upper()
    codes = known_codes()
    if code not in codes:
        close = difflib.get_close_matches(code, list(codes), n=3)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise UnknownCode(f"unknown rule code {code!r}{hint}; known codes: {', '.join(codes)}")
    out = [f"{code}: {' '.join(codes[code].split())}", ""]
    family: Optional[Type["Rule"]] = next((r for r in _rules() if code in r.CODES), None)
    if family is None:
        out += ["Reported by the driver itself, about a file rather than its use of apex.", ""]
    else:
        doc = " ".join(inspect.cleandoc(family.__doc__ or "").split("\n\n", 1)[0].split())
        out += [f"Rule family {family.__name__}: {doc}", ""]
    messages: List[str] = []
    examples = _examples(code)
    if examples:
        text, messages = _example_text(code, examples[0][1])
        out.append(text)
        if len(examples) > 1:
            out += [f"({len(examples) - 1} more example(s) in the rule reference, docs/migrate/rules.md.)", ""]
    elif family is not None:
        out += ["No documented example for this code.", ""]
    work = MANUAL_WORK.get(code)
    if messages or work is not None:
        out.append("Manual work:" if messages or code in DRIVER_CODES else "What to do:")
        if work is not None:
            out += [f"  situation: {work.situation}", f"  why not automatic: {work.why}", f"  by hand: {work.by_hand}"]
        for message in dict.fromkeys(messages):
            out.append(f"  the tool says: {message}")
        if family is not None and messages:
            out += [
                "",
                "The tool leaves a `# TODO(apexcompat): ...` comment at the site and reports it on every run",
                "(exit status 1) until the TODO is resolved and deleted. A site you have reviewed and keep",
                f"is silenced by `# apexcompat: ignore[{code}]` on the line it is reported at.",
            ]
        out.append("")
    elif family is not None:
        out += ["Nothing to do by hand: the tool rewrites these sites itself (shown with [*]).", ""]
    return "\n".join(out).rstrip("\n") + "\n"
