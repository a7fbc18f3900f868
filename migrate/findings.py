"""Findings: what a rule says about one site, as plain data (rendered by ``report``)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, Tuple

#: ``error``: manual work is needed (the run exits 1); ``warning``: the tool rewrote the site
#: but behaviour changes and the user should look; ``info``: nothing to do (e.g. a
#: still-shipped apex kernel left in place).
SEVERITIES = ("error", "warning", "info")


@dataclass(frozen=True, order=True)
class Finding:
    """One reported site.

    ``fixed`` says whether the tool rewrote the site itself; a finding with
    ``fixed=False`` and severity ``error`` is a site that needs manual work.
    """

    path: str
    line: int
    col: int
    code: str
    message: str
    fixed: bool = False
    severity: str = "error"
    #: what the finding is about, as data for the driver's later steps (APX315: the path of
    #: the wrapper's file and its class, whose step the file now hands the GradScaler); not
    #: compared, not rendered
    about: Tuple[str, ...] = field(default=(), compare=False, repr=False)

    def needs_manual_work(self) -> bool:
        return not self.fixed and self.severity == "error"

    def to_dict(self) -> Dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "about"}
