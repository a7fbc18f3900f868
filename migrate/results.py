"""What migrating one file gives: its bytes before and after, and the findings.

Plain data without LibCST, so that the process that plans and reports (which receives the
workers' results) does not have to load LibCST and the rules.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from .findings import Finding


@dataclass
class MigrationResult:
    path: str
    old: bytes
    new: bytes
    findings: List[Finding] = field(default_factory=list)
    #: set when the file was left alone because it could not be parsed or decoded
    parse_error: Optional[Finding] = None
    #: set when a rule crashed or produced code that does not compile (file left alone)
    internal_error: Optional[Finding] = None

    @property
    def changed(self) -> bool:
        return self.new != self.old

    def all_findings(self) -> List[Finding]:
        extra = [f for f in (self.parse_error, self.internal_error) if f is not None]
        return sorted(set(self.findings).union(extra))
