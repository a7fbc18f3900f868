"""Migrate one source text: parse, run the enabled rules in order, return the new bytes and
the findings.  No file system access here (see ``walk`` and ``write``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Type

import libcst as cst
from libcst.codemod import CodemodContext, SkipFile

from .findings import Finding
from .rules import ALL_RULES
from .rules.base import Rule
from .settings import Settings

PARSE_ERROR_CODE = "APX001"


@dataclass
class MigrationResult:
    path: str
    old: bytes
    new: bytes
    findings: List[Finding] = field(default_factory=list)
    parse_error: Optional[Finding] = None

    @property
    def changed(self) -> bool:
        return self.new != self.old


def migrate_source(
    source: bytes,
    path: str,
    settings: Settings,
    rules: Optional[Sequence[Type[Rule]]] = None,
) -> MigrationResult:
    """Run ``rules`` (default: every registered rule enabled by ``settings``) over ``source``.

    ``source`` is the file's raw bytes; LibCST detects the encoding (cookie, BOM) and the
    newline style and gives them back unchanged in ``module.bytes``.  A file that does not
    parse comes back unchanged with a ``parse_error`` finding.
    """
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as exc:
        return MigrationResult(
            path,
            source,
            source,
            parse_error=Finding(
                path=path,
                line=exc.editor_line,
                col=exc.editor_column,
                code=PARSE_ERROR_CODE,
                message=f"could not parse, file left unchanged: {exc.message}",
            ),
        )
    findings: List[Finding] = []
    for rule_cls in rules if rules is not None else ALL_RULES:
        if not rule_cls.applies_to(settings):
            continue
        context = CodemodContext(filename=path)
        try:
            module = rule_cls(context, settings, findings).transform_module(module)
        except SkipFile:
            continue
    return MigrationResult(path, source, module.bytes, sorted(set(findings)))
